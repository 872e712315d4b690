#include "stores/catalog_name_cache.hpp"

namespace lockscope {

namespace {
// The keys of the locks a server shows are a few thousand; a bound keeps a long session that saw
// millions of short-lived keys from growing without end.
constexpr std::size_t kMaxAsked = 200000;
}  // namespace

void CatalogNameCache::setSnapshot(CatalogSnapshotPtr snapshot) {
    snapshot_ = std::move(snapshot);
    asked_.clear();
}

const QList<QByteArray>& CatalogNameCache::names(qint64 key) {
    static const QList<QByteArray> kNone;
    if (!snapshot_) return kNone;
    if (const auto it = asked_.find(key); it != asked_.end()) return it->second;
    if (asked_.size() >= kMaxAsked) asked_.clear();
    return asked_.emplace(key, snapshot_->namesForKey(key)).first->second;
}

std::optional<QByteArray> CatalogNameCache::uniqueName(qint64 key) {
    const QList<QByteArray>& list = names(key);
    if (list.size() != 1) return std::nullopt;
    return list.first();
}

}  // namespace lockscope
