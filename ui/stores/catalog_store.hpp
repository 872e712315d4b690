// The name catalog: the lock names an operator knows about, so that a key seen in pg_locks can be
// shown by name (a SHA-256 prefix cannot be reversed; only a list of candidate names can). A
// small SQLite file that the `pglock` CLI reads too, so its schema is fixed:
//
//   CREATE TABLE IF NOT EXISTS names (name BLOB PRIMARY KEY, key INTEGER NOT NULL,
//       note TEXT NOT NULL DEFAULT '', owner TEXT NOT NULL DEFAULT '', added_at TEXT NOT NULL)
//   CREATE INDEX IF NOT EXISTS names_key ON names(key)
//
// - name is the exact bytes, always bound as a BLOB (names may hold NUL bytes or invalid UTF-8).
//   Another writer must bind BLOBs as well: SQLite never finds a TEXT 'x' by a BLOB x'78'.
// - key is always pglock::key_of(name), computed here, never typed in; a rename recomputes it.
//   It is never read back as truth either: entries() and entry() derive it from the name again,
//   and namesForKey() keeps only names that hash to the key (the column serves as an index).
// - PRAGMA application_id is pglock::catalog_format::application_id. An existing file is opened
//   only when catalog_format::recognize_catalog() says it is a catalog (the CLI applies the same
//   rule); only a new or empty file becomes one. Another program's database is left untouched.
// - added_at is UTC ISO 8601 with milliseconds, e.g. 2024-06-11T09:30:00.123Z.
//
// Every write is parameterized SQL inside a transaction; an import either adds all of its new
// names or, on any error, none. changed() follows every change that committed.
//
// A CatalogStore belongs to the thread that created it (Qt Sql connections cannot move between
// threads). The app's GUI thread never calls it: CatalogService (ui/catalog) runs every call on
// its worker, through openSibling(). Scanning a source tree can take long: run scan::scanTree on a worker and pass its
// result to importScan() on the store's thread; scanSourceTree() does both, blocking.
#pragma once

#include <QByteArray>
#include <QList>
#include <QObject>
#include <QString>
#include <QStringList>

#include <functional>
#include <memory>
#include <optional>
#include <stop_token>
#include <vector>

#include "pglock/key_collision.hpp"
#include "stores/name_import.hpp"
#include "source_scan/source_scanner.hpp"

namespace lockscope {

struct CatalogEntry {
    QByteArray name;
    qint64 key = 0;  // pglock::key_of(name)
    QString note;
    QString owner;
    QString addedAt;
};

// What an import or a scan did.
// - found: distinct names in the input;
// - added: of those, the ones new to the catalog;
// - duplicate: every occurrence that added nothing (already in the catalog, or seen earlier in
//   the same input), so a new name found twice counts found 1, added 1, duplicate 1;
// - skipped: input that could not be used (a non-UTF-8 or badly escaped line, a dynamic or
//   undecodable literal, a binary or oversized source file), each explained in warnings;
// - errors: why the whole import failed; non-empty means the catalog did not change (added = 0).
struct ImportReport {
    int found = 0;
    int added = 0;
    int duplicate = 0;
    int skipped = 0;
    int filesScanned = 0;      // source scans only
    QStringList errors;
    QStringList warnings;
    QList<NameSource> sources;  // every occurrence with file:line, for the UI to show where a name lives
    bool ok() const { return errors.isEmpty(); }
};

// For a long import or export: stop cancels it (the catalog, or the exported file, stays as it
// was), report hears how far it got (done of total names), now and then, on the calling thread.
struct CatalogProgress {
    std::stop_token stop;
    std::function<void(qint64 done, qint64 total)> report;
};

class CatalogStore : public QObject {
    Q_OBJECT

public:
    enum class AddResult { added, duplicate, invalid /* empty name */, failed /* SQL error */ };
    enum class RenameResult { renamed, unchanged /* same name */, notFound, duplicate, invalid, failed };

    // Opens defaultPath() or the given file, creating it (parent directories too) only when it
    // does not exist or is empty. Check isOpen(); errorString() says why not (unwritable
    // directory, not an SQLite file, another program's database, busy, a hot journal that cannot
    // be rolled back).
    explicit CatalogStore(QObject* parent = nullptr);
    explicit CatalogStore(const QString& path, QObject* parent = nullptr);
    ~CatalogStore() override;
    CatalogStore(const CatalogStore&) = delete;
    CatalogStore& operator=(const CatalogStore&) = delete;

    // QStandardPaths::AppDataLocation + "/catalog.sqlite".
    static QString defaultPath();

    // Another connection to the same file, opened on the calling thread: the way to use the
    // catalog from a worker. Virtual so that a test's store (a key function of its own, see
    // keyFor) gets a sibling of its own kind.
    virtual std::unique_ptr<CatalogStore> openSibling() const;

    bool isOpen() const { return open_; }
    QString path() const { return path_; }
    // The last failure of any call, for a status line.
    QString errorString() const { return error_; }

    AddResult add(const QByteArray& name, const QString& note = {}, const QString& owner = {});
    bool remove(const QByteArray& name);  // false when absent or on error
    RenameResult rename(const QByteArray& from, const QByteArray& to);
    bool setNote(const QByteArray& name, const QString& note);    // false when absent or on error
    bool setOwner(const QByteArray& name, const QString& owner);

    std::vector<CatalogEntry> entries() const;  // ordered by name bytes
    // Each entry in that order, one at a time (a million names need not be in memory twice).
    // False on an error (errorString) or when `stop` was requested.
    bool visitEntries(const std::function<void(const CatalogEntry&)>& visit, std::stop_token stop = {}) const;
    std::optional<CatalogEntry> entry(const QByteArray& name) const;
    // Every catalogued name with this key, ordered. More than one is a key collision (two names
    // that would share one advisory lock), which the UI warns about.
    QList<QByteArray> namesForKey(qint64 key) const;
    // Every key that two or more catalogued names share, over the stored (name, key) pairs
    // (pglock::find_key_collisions), ordered by key. The UI shows each as a warning.
    std::vector<pglock::KeyCollision> collisions() const;
    bool contains(const QByteArray& name) const;
    int count() const;

    // One name per line in the format of name_import.hpp (escaped so that importText gives back
    // the same bytes), ordered by name, written atomically (QSaveFile).
    bool exportText(const QString& path, const CatalogProgress& progress = {}) const;
    // A text list (name_import.hpp). A missing, unreadable, binary (any NUL byte) or > 16 MiB file
    // is an error and changes nothing; unusable lines are skipped and reported.
    ImportReport importText(const QString& path, const CatalogProgress& progress = {});
    // importScan(scan::scanTree(dir)), blocking the calling thread for the walk.
    ImportReport scanSourceTree(const QString& dir);
    // Merges a scan made elsewhere (scan::scanTree on a worker thread): its names through
    // importSources(), plus its skipped files/literals, warnings, filesScanned and error.
    ImportReport importScan(const scan::TreeScan& tree, const CatalogProgress& progress = {});
    // Adds names from any source in one transaction, counting as described at ImportReport.
    ImportReport importSources(const QList<NameSource>& sources, const CatalogProgress& progress = {});

signals:
    void changed();

protected:
    // pglock::key_of(name): every key the store writes or hands out comes from here. Virtual only
    // so that a test can make two names share a key, which SHA-256 will not do for it (the CLI's
    // Catalog(std::vector<NamedKey>) serves the same purpose); a key stored by another writer
    // never can, since it is not read back.
    virtual qint64 keyFor(const QByteArray& name) const;

private:
    void openDatabase();
    bool fail(const QString& what, const QString& detail) const;

    QString path_;
    QString connection_;
    bool open_ = false;
    mutable QString error_;
};

}  // namespace lockscope
