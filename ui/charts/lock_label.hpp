// How the charts name a lock: the app's one naming rule (models/lock_naming.hpp), asked without
// a current holder, so a lock that is gone keeps the name it was known by.
#pragma once

#include <QString>

#include <cstdint>

#include "models/lock_naming.hpp"
#include "pglock/monitor.hpp"

namespace lockscope::charts {

// The label of a lock for axes, combos and tooltips: decideLockName()'s text, or without a namer
// the rule with nothing known ("(unknown) KEY", "(a, b) int4 pair").
QString lockLabel(const pglock::monitor::LockId& id, std::int64_t key, const LockNamer& namer);

// The LockId of a bigint key (what a name's key looks like in pg_locks).
pglock::monitor::LockId bigintLockId(std::int64_t key);

}  // namespace lockscope::charts
