#include "models/lock_naming.hpp"

#include <QCoreApplication>

#include "pglock/resolve.hpp"
#include "stores/name_import.hpp"

namespace lockscope {
namespace {

QString tr(const char* text) { return QCoreApplication::translate("LockNaming", text); }

QString int4PairText(std::int64_t key) {
    const auto bits = static_cast<std::uint64_t>(key);
    return QString::fromStdString(
        pglock::int4_pair_text(static_cast<std::int32_t>(static_cast<std::uint32_t>(bits >> 32)),
                               static_cast<std::int32_t>(static_cast<std::uint32_t>(bits))));
}

}  // namespace

QString nameSourceText(LockNameSource source) {
    switch (source) {
    case LockNameSource::catalog: return QStringLiteral("catalog");
    case LockNameSource::collision: return QStringLiteral("collision");
    case LockNameSource::takenHere: return QStringLiteral("taken here");
    case LockNameSource::holder: return QStringLiteral("holder");
    case LockNameSource::holderPrefix: return QStringLiteral("holder prefix");
    case LockNameSource::context: return QStringLiteral("context");
    case LockNameSource::none: break;
    }
    return {};
}

LockNameSource nameSourceFromText(const QString& text) {
    for (LockNameSource s : {LockNameSource::catalog, LockNameSource::collision, LockNameSource::takenHere, LockNameSource::holder,
                         LockNameSource::holderPrefix, LockNameSource::context})
        if (text == nameSourceText(s)) return s;
    return LockNameSource::none;
}

QString lockNameText(bool int4Pair, std::int64_t key, LockNameSource source, const std::optional<QByteArray>& name) {
    if (int4Pair) return int4PairText(key);
    // Names are arbitrary bytes: printable() shows them escaped, isolated() keeps a right-to-left
    // name from turning the suffix around.
    if (name) {
        switch (source) {
        case LockNameSource::catalog: return names::printable(*name);
        case LockNameSource::context: return names::printable(*name);  // the label says what it is
        case LockNameSource::takenHere: return tr("%1 (taken here)").arg(names::isolated(names::printable(*name)));
        case LockNameSource::holder: return tr("%1 (from holder)").arg(names::isolated(names::printable(*name)));
        case LockNameSource::holderPrefix:
            return tr("%1 (from holder, cut)").arg(names::isolated(names::printable(*name) + QChar(0x2026)));
        case LockNameSource::none: return names::printable(*name);  // a name kept without its source
        case LockNameSource::collision: break;
        }
    }
    if (source == LockNameSource::collision) return tr("(collision) %1").arg(key);
    return tr("(unknown) %1").arg(key);
}

LockName decideLockName(const pglock::monitor::LockId& id, std::int64_t key, const NameFacts& facts) {
    LockName out;
    if (id.form == pglock::monitor::KeyForm::int_pair) {
        out.text = lockNameText(true, key, LockNameSource::none, std::nullopt);
        return out;
    }
    if (facts.catalog.size() == 1) {
        out.source = LockNameSource::catalog;
        out.name = facts.catalog.first();
    } else if (facts.catalog.size() > 1) {
        // Every name, so the operator sees which ones collide; none of them is "the" name.
        QStringList shown;
        for (const QByteArray& name : facts.catalog) shown << names::isolated(names::printable(name));
        out.source = LockNameSource::collision;
        out.text = shown.join(QStringLiteral(" | ")) + tr(" (collision)");
        return out;
    } else if (facts.takenHere) {
        out.source = LockNameSource::takenHere;
        out.name = facts.takenHere;
    } else if (facts.context) {
        out.source = LockNameSource::context;
        out.name = facts.context;
    } else if (facts.holder) {
        out.source = facts.holder->verified ? LockNameSource::holder : LockNameSource::holderPrefix;
        out.name = QByteArray::fromStdString(facts.holder->name);
    }
    out.text = lockNameText(false, key, out.source, out.name);
    return out;
}

bool HolderNames::learn(std::int64_t key, const pglock::monitor::HolderName& name) {
    if (auto it = byKey_.find(key); it != byKey_.end()) {
        Entry& e = it->second;
        order_.splice(order_.end(), order_, e.at);  // learned again: the most recent now
        if (e.name.verified && !name.verified) return false;
        if (e.name.name == name.name && e.name.verified == name.verified) return false;
        e.name = name;
        return true;
    }
    if (capacity_ == 0) return false;
    while (byKey_.size() >= capacity_) {
        byKey_.erase(order_.front());
        order_.pop_front();
    }
    order_.push_back(key);
    byKey_.emplace(key, Entry{name, std::prev(order_.end())});
    return true;
}

std::vector<std::int64_t> HolderNames::learn(const pglock::monitor::Snapshot& snapshot) {
    std::vector<std::int64_t> changed;
    for (const auto& entry : snapshot.locks)
        if (entry.form == pglock::monitor::KeyForm::bigint && entry.holder_name && learn(entry.key, *entry.holder_name))
            changed.push_back(entry.key);
    return changed;
}

std::optional<pglock::monitor::HolderName> HolderNames::find(std::int64_t key) const {
    const auto it = byKey_.find(key);
    if (it == byKey_.end()) return std::nullopt;
    return it->second.name;
}

void HolderNames::clear() {
    byKey_.clear();
    order_.clear();
}

LockNamer catalogNamer(std::function<std::optional<QByteArray>(std::int64_t key)> catalog) {
    return [catalog = std::move(catalog)](const pglock::monitor::LockId& id, std::int64_t key,
                                          const std::optional<pglock::monitor::HolderName>& current) {
        NameFacts facts;
        if (catalog && id.form == pglock::monitor::KeyForm::bigint)
            if (auto name = catalog(key); name && !name->isEmpty()) facts.catalog = {*name};
        facts.holder = current;
        return decideLockName(id, key, facts);
    };
}

}  // namespace lockscope
