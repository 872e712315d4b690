// The catalog's names by key, for the GUI thread, without SQLite: the locks view asks for a lock's
// name on every sort comparison and every painted cell, and the charts and the history recorder
// once per new lock. The answers come from the latest CatalogSnapshot (built on CatalogService's
// worker), a binary search by key; the lists handed out are kept per key asked, so a sort at
// 10,000 locks allocates once per lock, not per comparison. Memory: the snapshot (shared with the
// catalog panel) plus the keys asked, never a second copy of the catalog.
#pragma once

#include <QByteArray>
#include <QList>
#include <QObject>

#include <optional>
#include <unordered_map>

#include "catalog/catalog_snapshot.hpp"

namespace lockscope {

class CatalogNameCache : public QObject {
    Q_OBJECT
public:
    explicit CatalogNameCache(QObject* parent = nullptr) : QObject(parent) {}

    // The names from now on; forgets the answers given so far.
    void setSnapshot(CatalogSnapshotPtr snapshot);
    // Every catalogued name with this key, ordered by name bytes (as CatalogStore::namesForKey).
    // Valid until the next setSnapshot() (past 200,000 keys asked, until the next call). Empty
    // before the first snapshot.
    const QList<QByteArray>& names(qint64 key);
    // The one name of the key; nullopt when it has none or several (a collision).
    std::optional<QByteArray> uniqueName(qint64 key);

private:
    CatalogSnapshotPtr snapshot_;
    std::unordered_map<qint64, QList<QByteArray>> asked_;  // references survive inserts
};

}  // namespace lockscope
