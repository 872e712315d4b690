// The catalog's names by key, in memory, for the GUI thread. The locks view asks for a lock's name
// on every sort comparison and every painted cell, and the charts and the history recorder once
// per new lock: at 10,000 locks one SQLite query per ask froze the window for seconds on the first
// poll, and the 1% of locks that are new at each poll still cost ~10 ms of queries. Reading the
// whole catalog once makes every ask a hash lookup, whether the key has a name or not (most keys
// of a busy server have none).
//
// Memory is the catalog's size (names are short; 100,000 names are a few MB). The index is read
// again, lazily at the next ask, after every CatalogStore::changed: it listens to that signal
// itself, so create it before anything else that reacts to it and the others read fresh names.
#pragma once

#include <QByteArray>
#include <QHash>
#include <QList>
#include <QObject>

#include <optional>

namespace lockscope {

class CatalogStore;

class CatalogNameCache : public QObject {
    Q_OBJECT
public:
    explicit CatalogNameCache(CatalogStore& store, QObject* parent = nullptr);

    // Every catalogued name with this key, ordered by name bytes (as CatalogStore::namesForKey).
    const QList<QByteArray>& names(qint64 key);
    // The one name of the key; nullopt when it has none or several (a collision).
    std::optional<QByteArray> uniqueName(qint64 key);
    // Forget the index; the next ask reads the catalog again.
    void invalidate() { loaded_ = false; }
    qsizetype keyCount();

private:
    void load();

    CatalogStore& store_;
    QHash<qint64, QList<QByteArray>> names_;
    bool loaded_ = false;
};

}  // namespace lockscope
