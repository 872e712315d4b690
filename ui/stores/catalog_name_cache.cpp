#include "stores/catalog_name_cache.hpp"

#include "stores/catalog_store.hpp"

namespace lockscope {

CatalogNameCache::CatalogNameCache(CatalogStore& store, QObject* parent) : QObject(parent), store_(store) {
    connect(&store_, &CatalogStore::changed, this, &CatalogNameCache::invalidate);
}

void CatalogNameCache::load() {
    names_.clear();
    // entries() is ordered by name, so each key's list comes out ordered as namesForKey's.
    for (CatalogEntry& e : store_.entries()) names_[e.key].append(std::move(e.name));
    loaded_ = true;
}

const QList<QByteArray>& CatalogNameCache::names(qint64 key) {
    static const QList<QByteArray> kNone;
    if (!loaded_) load();
    const auto it = names_.constFind(key);
    return it == names_.constEnd() ? kNone : *it;
}

std::optional<QByteArray> CatalogNameCache::uniqueName(qint64 key) {
    const QList<QByteArray>& list = names(key);
    if (list.size() != 1) return std::nullopt;
    return list.first();
}

qsizetype CatalogNameCache::keyCount() {
    if (!loaded_) load();
    return names_.size();
}

}  // namespace lockscope
