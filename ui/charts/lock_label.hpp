// How the charts name a lock: the catalog's name (escaped, since names are arbitrary bytes), the
// decimal key when the catalog has none, or "(a, b) int4 pair" for the two-int4 form, which no
// name hashes to.
#pragma once

#include <QByteArray>
#include <QString>

#include <cstdint>
#include <functional>
#include <optional>

#include "pglock/monitor.hpp"

namespace lockscope::charts {

// The app's catalog: the name of a bigint key, nullopt when it has none.
using NameResolver = std::function<std::optional<QByteArray>(std::int64_t key)>;

// The label of a lock for axes, combos and tooltips.
QString lockLabel(const pglock::monitor::LockId& id, std::int64_t key, const NameResolver& resolver);

// The LockId of a bigint key (what a name's key looks like in pg_locks).
pglock::monitor::LockId bigintLockId(std::int64_t key);

}  // namespace lockscope::charts
