#include "charts/lock_label.hpp"

#include "pglock/resolve.hpp"

namespace lockscope::charts {

QString lockLabel(const pglock::monitor::LockId& id, std::int64_t key, const LockNamer& namer) {
    if (namer) return namer(id, key, std::nullopt).text;
    return decideLockName(id, key, {}).text;
}

pglock::monitor::LockId bigintLockId(std::int64_t key) {
    return {pglock::monitor::KeyForm::bigint, pglock::tag_of(key)};
}

}  // namespace lockscope::charts
