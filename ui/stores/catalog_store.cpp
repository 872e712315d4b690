#include "stores/catalog_store.hpp"

#include <QDateTime>
#include <QDir>
#include <QFileInfo>
#include <QSaveFile>
#include <QSet>
#include <QSqlDatabase>
#include <QSqlError>
#include <QSqlQuery>
#include <QStandardPaths>
#include <QUuid>

#include <cstdint>
#include <string_view>
#include <vector>

#include "pglock/catalog_format.hpp"
#include "pglock/key.hpp"
#include "stores/sql_transaction.hpp"

namespace lockscope {
namespace {

// Qt's SQLite driver binds a null QString as SQL NULL, which the NOT NULL columns refuse.
QString notNull(const QString& s) { return s.isNull() ? QStringLiteral("") : s; }

QString nowUtc() { return QDateTime::currentDateTimeUtc().toString(Qt::ISODateWithMs); }

// Often enough for a smooth progress bar, rarely enough to cost nothing (a few hundred per second).
constexpr qint64 kProgressEvery = 4096;


}  // namespace

qint64 CatalogStore::keyFor(const QByteArray& name) const {
    return pglock::key_of(std::string_view(name.constData(), static_cast<std::size_t>(name.size())));
}

CatalogStore::CatalogStore(QObject* parent) : CatalogStore(defaultPath(), parent) {}

CatalogStore::CatalogStore(const QString& path, QObject* parent)
    : QObject(parent),
      path_(path),
      // Unique per instance: two stores (or a store and another part of the app) must never share
      // or remove each other's connection.
      connection_(QStringLiteral("lockscope-catalog-") + QUuid::createUuid().toString(QUuid::WithoutBraces)) {
    openDatabase();
}

std::unique_ptr<CatalogStore> CatalogStore::openSibling() const { return std::make_unique<CatalogStore>(path_); }

CatalogStore::~CatalogStore() {
    {
        QSqlDatabase db = QSqlDatabase::database(connection_, false);
        if (db.isValid()) db.close();
    }  // every QSqlDatabase copy must be gone before removeDatabase
    QSqlDatabase::removeDatabase(connection_);
}

QString CatalogStore::defaultPath() {
    return QStandardPaths::writableLocation(QStandardPaths::AppDataLocation) + QStringLiteral("/catalog.sqlite");
}

bool CatalogStore::fail(const QString& what, const QString& detail) const {
    // A write that waited out the busy timeout gets SQLite's "database is locked": said as what it
    // means for the operator, in the words the open uses (catalog_format.hpp).
    const bool busy = detail.contains(QLatin1String("database is locked")) || detail.contains(QLatin1String("database table is locked"));
    const QString said = busy ? QString::fromStdString(pglock::catalog_format::describe_sqlite_failure(5, detail.toStdString(), false))
                              : detail;
    error_ = QStringLiteral("catalog %1: %2: %3").arg(path_, what, said);
    return false;
}

void CatalogStore::openDatabase() {
    namespace format = pglock::catalog_format;
    const QFileInfo info(path_);
    // Only a file that does not exist yet (or is empty) may become a catalog; any other file is
    // read first and written only when it is one (catalog_format.hpp decides, for the CLI too).
    const bool newFile = !info.exists() || (info.isFile() && info.size() == 0);
    if (info.exists() && !info.isFile()) {
        fail(QStringLiteral("open"), QStringLiteral("not a regular file"));
        return;
    }
    if (!QDir().mkpath(info.absolutePath())) {
        fail(QStringLiteral("open"), QStringLiteral("cannot create the directory %1").arg(info.absolutePath()));
        return;
    }
    QSqlDatabase db = QSqlDatabase::addDatabase(QStringLiteral("QSQLITE"), connection_);
    if (!db.isValid()) {
        fail(QStringLiteral("open"), QStringLiteral("the Qt SQLite driver (QSQLITE) is not available"));
        return;
    }
    db.setDatabaseName(path_);
    db.setConnectOptions(QStringLiteral("QSQLITE_BUSY_TIMEOUT=5000"));  // the CLI may be reading
    if (!db.open()) {
        fail(QStringLiteral("open"), db.lastError().text());
        return;
    }
    const auto sqliteFailure = [&](const QSqlError& e) {
        const bool hotJournal = QFileInfo::exists(path_ + QStringLiteral("-journal"));
        const std::string said = (e.databaseText().isEmpty() ? e.text() : e.databaseText()).toStdString();
        fail(QStringLiteral("open"),
             QString::fromStdString(format::describe_sqlite_failure(e.nativeErrorCode().toInt(), said, hotJournal)));
        db.close();
    };
    // SQLite opens any file lazily; the first statement is what finds "file is not a database".
    QSqlQuery q(db);
    if (!q.exec(QString::fromLatin1(format::read_application_id.data(), qsizetype(format::read_application_id.size()))) || !q.next()) return sqliteFailure(q.lastError());
    const auto appId = static_cast<std::int32_t>(q.value(0).toLongLong());
    std::vector<format::SchemaObject> schema;
    if (!q.exec(QString::fromLatin1(format::read_schema.data(), qsizetype(format::read_schema.size())))) return sqliteFailure(q.lastError());
    while (q.next()) schema.push_back({q.value(0).toString().toStdString(), q.value(1).toString().toStdString(),
                                       q.value(2).toString().toStdString()});
    const format::Recognition seen = format::recognize_catalog(newFile, appId, schema);
    if (seen.verdict == format::Verdict::foreign) {
        fail(QStringLiteral("open"), QStringLiteral("not a lockscope catalog: %1; the file was left untouched")
                                         .arg(QString::fromStdString(seen.why)));
        db.close();
        return;
    }
    // A new catalog, or one made before catalogs carried their application_id, is marked as one
    // (with its index) in one transaction.
    QString error;
    const bool ok = appId == format::application_id && seen.verdict == format::Verdict::catalog
                        ? q.exec(QString::fromLatin1(format::create_index.data(), qsizetype(format::create_index.size())))
                        : inTransaction(db, &error, [&] {
                              for (const QString& sql :
                                   {QString::fromLatin1(format::create_table.data(), qsizetype(format::create_table.size())),
                                    QString::fromLatin1(format::create_index.data(), qsizetype(format::create_index.size())),
                                    QString::fromLatin1(format::set_application_id.data(), qsizetype(format::set_application_id.size())) + QString::number(format::application_id)}) {
                                  if (!q.exec(sql)) return false;
                              }
                              return true;
                          });
    if (!ok) return sqliteFailure(q.lastError().isValid() ? q.lastError() : db.lastError());
    open_ = true;
}

CatalogStore::AddResult CatalogStore::add(const QByteArray& name, const QString& note, const QString& owner) {
    if (!open_) return AddResult::failed;
    if (name.isEmpty()) {
        fail(QStringLiteral("add"), QStringLiteral("an empty name is not a lock name"));
        return AddResult::invalid;
    }
    QSqlDatabase db = QSqlDatabase::database(connection_, false);
    int rows = 0;
    QString error;
    const bool ok = inTransaction(db, &error, [&] {
        QSqlQuery q(db);
        q.prepare(QStringLiteral("INSERT INTO names (name, key, note, owner, added_at) VALUES (?, ?, ?, ?, ?) "
                                 "ON CONFLICT (name) DO NOTHING"));
        q.addBindValue(name);
        q.addBindValue(keyFor(name));
        q.addBindValue(notNull(note));
        q.addBindValue(notNull(owner));
        q.addBindValue(nowUtc());
        if (!q.exec()) {
            error = q.lastError().text();
            return false;
        }
        rows = q.numRowsAffected();
        return true;
    });
    if (!ok) {
        fail(QStringLiteral("add %1").arg(names::printable(name)), error);
        return AddResult::failed;
    }
    if (rows == 0) {
        fail(QStringLiteral("add %1").arg(names::printable(name)), QStringLiteral("already in the catalog"));
        return AddResult::duplicate;
    }
    emit changed();
    return AddResult::added;
}

bool CatalogStore::remove(const QByteArray& name) {
    if (!open_) return false;
    QSqlDatabase db = QSqlDatabase::database(connection_, false);
    int rows = 0;
    QString error;
    const bool ok = inTransaction(db, &error, [&] {
        QSqlQuery q(db);
        q.prepare(QStringLiteral("DELETE FROM names WHERE name = ?"));
        q.addBindValue(name);
        if (!q.exec()) {
            error = q.lastError().text();
            return false;
        }
        rows = q.numRowsAffected();
        return true;
    });
    if (!ok) return fail(QStringLiteral("remove %1").arg(names::printable(name)), error);
    if (rows == 0) return fail(QStringLiteral("remove %1").arg(names::printable(name)), QStringLiteral("not in the catalog"));
    emit changed();
    return true;
}

CatalogStore::RenameResult CatalogStore::rename(const QByteArray& from, const QByteArray& to) {
    if (!open_) return RenameResult::failed;
    const QString what = QStringLiteral("rename %1 to %2").arg(names::printable(from), names::printable(to));
    if (to.isEmpty()) {
        fail(what, QStringLiteral("an empty name is not a lock name"));
        return RenameResult::invalid;
    }
    if (from == to) {
        if (contains(from)) return RenameResult::unchanged;
        fail(what, QStringLiteral("not in the catalog"));
        return RenameResult::notFound;
    }
    QSqlDatabase db = QSqlDatabase::database(connection_, false);
    RenameResult result = RenameResult::failed;
    QString error;
    const bool ok = inTransaction(db, &error, [&] {
        QSqlQuery q(db);
        q.prepare(QStringLiteral("SELECT 1 FROM names WHERE name = ?"));
        q.addBindValue(to);
        if (!q.exec()) {
            error = q.lastError().text();
            return false;
        }
        if (q.next()) {
            error = QStringLiteral("the new name is already in the catalog");
            result = RenameResult::duplicate;
            return false;
        }
        // The key follows the name: it is re-derived, never carried over.
        q.prepare(QStringLiteral("UPDATE names SET name = ?, key = ? WHERE name = ?"));
        q.addBindValue(to);
        q.addBindValue(keyFor(to));
        q.addBindValue(from);
        if (!q.exec()) {
            error = q.lastError().text();
            return false;
        }
        if (q.numRowsAffected() == 0) {
            error = QStringLiteral("not in the catalog");
            result = RenameResult::notFound;
            return false;
        }
        result = RenameResult::renamed;
        return true;
    });
    if (!ok) {
        fail(what, error);
        return result == RenameResult::renamed ? RenameResult::failed : result;  // renamed: the commit failed
    }
    emit changed();
    return RenameResult::renamed;
}

namespace {
bool updateColumn(QSqlDatabase& db, const char* sql, const QString& value, const QByteArray& name, int* rows,
                  QString* error) {
    return inTransaction(db, error, [&] {
        QSqlQuery q(db);
        q.prepare(QString::fromLatin1(sql));
        q.addBindValue(notNull(value));
        q.addBindValue(name);
        if (!q.exec()) {
            *error = q.lastError().text();
            return false;
        }
        *rows = q.numRowsAffected();
        return true;
    });
}
}  // namespace

bool CatalogStore::setNote(const QByteArray& name, const QString& note) {
    if (!open_) return false;
    QSqlDatabase db = QSqlDatabase::database(connection_, false);
    int rows = 0;
    QString error;
    if (!updateColumn(db, "UPDATE names SET note = ? WHERE name = ?", note, name, &rows, &error))
        return fail(QStringLiteral("set the note of %1").arg(names::printable(name)), error);
    if (rows == 0) return fail(QStringLiteral("set the note of %1").arg(names::printable(name)), QStringLiteral("not in the catalog"));
    emit changed();
    return true;
}

bool CatalogStore::setOwner(const QByteArray& name, const QString& owner) {
    if (!open_) return false;
    QSqlDatabase db = QSqlDatabase::database(connection_, false);
    int rows = 0;
    QString error;
    if (!updateColumn(db, "UPDATE names SET owner = ? WHERE name = ?", owner, name, &rows, &error))
        return fail(QStringLiteral("set the owner of %1").arg(names::printable(name)), error);
    if (rows == 0) return fail(QStringLiteral("set the owner of %1").arg(names::printable(name)), QStringLiteral("not in the catalog"));
    emit changed();
    return true;
}

std::vector<CatalogEntry> CatalogStore::entries() const {
    std::vector<CatalogEntry> out;
    visitEntries([&out](const CatalogEntry& e) { out.push_back(e); });
    return out;
}

bool CatalogStore::visitEntries(const std::function<void(const CatalogEntry&)>& visit, std::stop_token stop) const {
    if (!open_) return false;
    QSqlQuery q(QSqlDatabase::database(connection_, false));
    q.setForwardOnly(true);
    if (!q.exec(QStringLiteral("SELECT name, key, note, owner, added_at FROM names ORDER BY name")))
        return fail(QStringLiteral("list"), q.lastError().text());
    // The stored key column is never trusted (another writer may have put anything there): each
    // key is derived from its name again, here where every reader of the catalog gets it.
    CatalogEntry e;
    while (q.next()) {
        if (stop.stop_requested()) return fail(QStringLiteral("list"), QStringLiteral("canceled"));
        e.name = q.value(0).toByteArray();
        e.key = keyFor(e.name);
        e.note = q.value(2).toString();
        e.owner = q.value(3).toString();
        e.addedAt = q.value(4).toString();
        visit(e);
    }
    if (q.lastError().isValid()) return fail(QStringLiteral("list"), q.lastError().text());
    return true;
}

std::vector<pglock::KeyCollision> CatalogStore::collisions() const {
    std::vector<pglock::NamedKey> pairs;
    for (const CatalogEntry& e : entries()) pairs.push_back({e.name.toStdString(), e.key});
    return pglock::find_key_collisions(pairs);
}

std::optional<CatalogEntry> CatalogStore::entry(const QByteArray& name) const {
    if (!open_) return std::nullopt;
    QSqlQuery q(QSqlDatabase::database(connection_, false));
    q.prepare(QStringLiteral("SELECT name, key, note, owner, added_at FROM names WHERE name = ?"));
    q.addBindValue(name);
    if (!q.exec()) {
        fail(QStringLiteral("look up %1").arg(names::printable(name)), q.lastError().text());
        return std::nullopt;
    }
    if (!q.next()) return std::nullopt;
    const QByteArray found = q.value(0).toByteArray();
    return CatalogEntry{found, keyFor(found), q.value(2).toString(), q.value(3).toString(), q.value(4).toString()};
}

QList<QByteArray> CatalogStore::namesForKey(qint64 key) const {
    QList<QByteArray> out;
    if (!open_) return out;
    QSqlQuery q(QSqlDatabase::database(connection_, false));
    q.prepare(QStringLiteral("SELECT name FROM names WHERE key = ? ORDER BY name"));  // uses names_key
    q.addBindValue(key);
    if (!q.exec()) {
        fail(QStringLiteral("look up key %1").arg(key), q.lastError().text());
        return out;
    }
    // The index finds candidates; only a name that really hashes to the key is one of its names.
    while (q.next()) {
        const QByteArray name = q.value(0).toByteArray();
        if (keyFor(name) == key) out.append(name);
    }
    return out;
}

bool CatalogStore::contains(const QByteArray& name) const {
    if (!open_) return false;
    QSqlQuery q(QSqlDatabase::database(connection_, false));
    q.prepare(QStringLiteral("SELECT 1 FROM names WHERE name = ?"));
    q.addBindValue(name);
    if (!q.exec()) return fail(QStringLiteral("look up %1").arg(names::printable(name)), q.lastError().text());
    return q.next();
}

int CatalogStore::count() const {
    if (!open_) return 0;
    QSqlQuery q(QSqlDatabase::database(connection_, false));
    if (!q.exec(QStringLiteral("SELECT count(*) FROM names")) || !q.next()) {
        fail(QStringLiteral("count"), q.lastError().text());
        return 0;
    }
    return q.value(0).toInt();
}

bool CatalogStore::exportText(const QString& path, const CatalogProgress& progress) const {
    if (!open_) return false;
    QSaveFile file(path);  // a failed or canceled export never leaves half a file behind
    if (!file.open(QIODevice::WriteOnly))
        return fail(QStringLiteral("export to %1").arg(path), file.errorString());
    const qint64 total = progress.report ? count() : 0;
    qint64 done = 0;
    const bool listed = visitEntries(
        [&](const CatalogEntry& e) {
            file.write(names::escapeName(e.name));
            file.write("\n", 1);
            if (progress.report && ++done % kProgressEvery == 0) progress.report(done, total);
        },
        progress.stop);
    if (!listed) {
        file.cancelWriting();
        return fail(QStringLiteral("export to %1").arg(path), progress.stop.stop_requested() ? QStringLiteral("canceled") : error_);
    }
    if (!file.commit()) return fail(QStringLiteral("export to %1").arg(path), file.errorString());
    if (progress.report) progress.report(done, total);
    return true;
}

ImportReport CatalogStore::importText(const QString& path, const CatalogProgress& progress) {
    if (!open_) {
        ImportReport report;
        report.errors << QStringLiteral("the catalog is not open: %1").arg(error_);
        return report;
    }
    const names::FileRead read = names::readTextFile(path, names::kMaxImportBytes, /*rejectNul=*/true);
    if (!read.error.isEmpty()) {
        ImportReport report;
        report.errors << read.error;
        return report;
    }
    names::NameList list = names::parseNameList(read.data);
    for (NameSource& source : list.names) source.file = path;
    ImportReport report = importSources(list.names, progress);
    report.skipped += list.skipped;
    QStringList warnings;
    for (const QString& w : std::as_const(list.warnings)) warnings << path + QStringLiteral(": ") + w;
    report.warnings = warnings + report.warnings;
    return report;
}

ImportReport CatalogStore::scanSourceTree(const QString& dir) { return importScan(scan::scanTree(dir)); }

ImportReport CatalogStore::importScan(const scan::TreeScan& tree, const CatalogProgress& progress) {
    if (!tree.error.isEmpty()) {
        ImportReport report;
        report.errors << tree.error;
        return report;
    }
    ImportReport report = importSources(tree.names, progress);
    report.filesScanned = tree.filesScanned;
    report.skipped += tree.skipped;
    report.warnings = tree.warnings + report.warnings;
    return report;
}

ImportReport CatalogStore::importSources(const QList<NameSource>& sources, const CatalogProgress& progress) {
    ImportReport report;
    report.sources = sources;
    if (!open_) {
        report.errors << QStringLiteral("the catalog is not open: %1").arg(error_);
        return report;
    }
    QSet<QByteArray> seen;
    QList<QByteArray> unique;
    for (const NameSource& s : sources) {
        if (s.name.isEmpty()) {
            ++report.skipped;
            report.warnings << QStringLiteral("%1:%2: an empty name; skipped").arg(s.file).arg(s.line);
        } else if (seen.contains(s.name)) {
            ++report.duplicate;  // seen earlier in this input
        } else {
            seen.insert(s.name);
            unique.append(s.name);
        }
    }
    report.found = static_cast<int>(unique.size());
    if (unique.isEmpty()) return report;

    QSqlDatabase db = QSqlDatabase::database(connection_, false);
    QString error;
    int added = 0;
    const QString addedAt = nowUtc();
    const bool ok = inTransaction(db, &error, [&] {
        QSqlQuery q(db);
        if (!q.prepare(QStringLiteral("INSERT INTO names (name, key, note, owner, added_at) VALUES (?, ?, '', '', ?) "
                                      "ON CONFLICT (name) DO NOTHING"))) {
            error = q.lastError().text();
            return false;
        }
        qint64 done = 0;
        for (const QByteArray& name : std::as_const(unique)) {
            if (progress.stop.stop_requested()) {
                error = QStringLiteral("canceled");
                return false;
            }
            if (progress.report && done++ % kProgressEvery == 0) progress.report(done - 1, unique.size());
            q.bindValue(0, name);
            q.bindValue(1, keyFor(name));
            q.bindValue(2, addedAt);
            if (!q.exec()) {
                error = QStringLiteral("%1: %2").arg(names::printable(name), q.lastError().text());
                return false;
            }
            if (q.numRowsAffected() > 0) ++added;
        }
        return true;
    });
    if (!ok) {
        fail(QStringLiteral("import"), error);
        report.errors << error_ + QStringLiteral("; nothing was imported");
        return report;
    }
    if (progress.report) progress.report(unique.size(), unique.size());
    report.added = added;
    report.duplicate += report.found - added;  // already in the catalog
    if (added > 0) emit changed();
    return report;
}

}  // namespace lockscope
