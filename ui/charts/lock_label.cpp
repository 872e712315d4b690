#include "charts/lock_label.hpp"

#include "pglock/resolve.hpp"
#include "stores/name_import.hpp"

namespace lockscope::charts {

QString lockLabel(const pglock::monitor::LockId& id, std::int64_t key, const NameResolver& resolver) {
    if (id.form == pglock::monitor::KeyForm::int_pair)
        return QString::fromStdString(
            pglock::int4_pair_text(static_cast<std::int32_t>(id.tag.classid), static_cast<std::int32_t>(id.tag.objid)));
    if (resolver) {
        if (auto name = resolver(key); name && !name->isEmpty()) return names::printable(*name);
    }
    return QString::number(key);
}

pglock::monitor::LockId bigintLockId(std::int64_t key) {
    return {pglock::monitor::KeyForm::bigint, pglock::tag_of(key)};
}

}  // namespace lockscope::charts
