#include "history/history_store.hpp"

#include <QCryptographicHash>
#include <QDateTime>
#include <QDir>
#include <QFileInfo>
#include <QSaveFile>
#include <QSqlDatabase>
#include <QSqlError>
#include <QSqlQuery>
#include <QStandardPaths>
#include <QUuid>
#include <QVariant>

#include "history/history_csv.hpp"
#include "stores/sql_transaction.hpp"

namespace lockscope::history {
namespace {

constexpr const char* kTables[] = {"holds", "waits"};
constexpr double kSecondsPerDay = 86400.0;

const char* tableOf(Kind kind) { return kind == Kind::hold ? "holds" : "waits"; }

// The columns both tables share, in the order queries read them.
constexpr auto kColumns = "id, name, key, int_pair, pid, application, username, shared, started, ended, unseen, name_source";

QString createTable(const char* table, bool waits) {
    return QStringLiteral("CREATE TABLE IF NOT EXISTS %1 (id INTEGER PRIMARY KEY, name BLOB, key INTEGER NOT NULL, "
                          "int_pair INTEGER NOT NULL DEFAULT 0, pid INTEGER NOT NULL, "
                          "application TEXT NOT NULL DEFAULT '', username TEXT NOT NULL DEFAULT '', "
                          "shared INTEGER NOT NULL DEFAULT 0, started REAL NOT NULL, ended REAL NOT NULL, "
                          "duration REAL NOT NULL, unseen REAL NOT NULL DEFAULT 0, name_source TEXT NOT NULL DEFAULT ''%2)")
        .arg(QLatin1String(table), waits ? QStringLiteral(", waited_on TEXT NOT NULL DEFAULT ''") : QString());
}

QStringList createIndexes(const char* table) {
    QStringList out;
    for (const char* column : {"ended", "name", "key", "pid"})
        out << QStringLiteral("CREATE INDEX IF NOT EXISTS %1_%2 ON %1(%2)").arg(QLatin1String(table), QLatin1String(column));
    return out;
}

// Qt's SQLite driver binds a null QString as SQL NULL, which the NOT NULL columns refuse.
QString notNull(const QString& s) { return s.isNull() ? QStringLiteral("") : s; }

QString pidList(const QList<int>& pids) {
    QStringList parts;
    for (int pid : pids) parts << QString::number(pid);
    return parts.join(u',');
}

QList<int> parsePidList(const QString& text) {
    QList<int> out;
    for (const QString& part : text.split(u',', Qt::SkipEmptyParts)) {
        bool ok = false;
        const int pid = part.toInt(&ok);
        if (ok) out.append(pid);
    }
    return out;
}

QString likePattern(const QString& text) {
    QString escaped = text;
    escaped.replace(u'\\', QStringLiteral("\\\\")).replace(u'%', QStringLiteral("\\%")).replace(u'_', QStringLiteral("\\_"));
    return u'%' + escaped + u'%';
}

// A WHERE clause for one table and the values it binds, in order.
struct Where {
    QString sql;
    QVariantList values;
};

Where whereOf(const Filter& f) {
    QStringList parts;
    Where w;
    if (!f.text.isEmpty()) {
        // LIKE matches ASCII case-insensitively only on TEXT (on a BLOB it compares bytes), hence
        // the cast; instr() on the BLOB finds the exact bytes even past a NUL byte, where the text
        // view of the name stops.
        parts << QStringLiteral("(CAST(name AS TEXT) LIKE ? ESCAPE '\\' OR instr(name, ?) > 0 "
                                "OR application LIKE ? ESCAPE '\\' OR username LIKE ? ESCAPE '\\')");
        const QString pattern = likePattern(f.text);
        w.values << pattern << f.text.toUtf8() << pattern << pattern;
    }
    if (f.since) {
        parts << QStringLiteral("ended >= ?");
        w.values << *f.since;
    }
    if (f.until) {
        parts << QStringLiteral("started <= ?");
        w.values << *f.until;
    }
    if (f.pid) {
        parts << QStringLiteral("pid = ?");
        w.values << *f.pid;
    }
    w.sql = parts.isEmpty() ? QString() : QStringLiteral(" WHERE ") + parts.join(QStringLiteral(" AND "));
    return w;
}

std::vector<Kind> kindsOf(const Filter& f) {
    if (f.kind) return {*f.kind};
    return {Kind::hold, Kind::wait};
}

// The SELECT of every matching row, newest end first; `limit` < 0 means all. Each table is cut
// to `limit` on its own (its ended index gives the newest cheaply) before the two are merged.
QString selectSql(const Filter& f, const Where& w, qint64 limit, QVariantList* values) {
    QStringList branches;
    for (Kind kind : kindsOf(f)) {
        QString branch = QStringLiteral("SELECT %1 AS kind, %2, %3 AS waited_on FROM %4%5 ORDER BY ended DESC, id DESC")
                             .arg(static_cast<int>(kind))
                             .arg(QLatin1String(kColumns),
                                  kind == Kind::wait ? QStringLiteral("waited_on") : QStringLiteral("''"),
                                  QLatin1String(tableOf(kind)), w.sql);
        *values += w.values;
        if (limit >= 0) {
            branch += QStringLiteral(" LIMIT ?");
            values->append(limit);
        }
        branches << QStringLiteral("SELECT * FROM (%1)").arg(branch);
    }
    QString sql = branches.join(QStringLiteral(" UNION ALL ")) + QStringLiteral(" ORDER BY ended DESC, kind, id DESC");
    if (limit >= 0) {
        sql += QStringLiteral(" LIMIT ?");
        values->append(limit);
    }
    return sql;
}

Record readRecord(const QSqlQuery& q) {
    Record r;
    r.kind = q.value(0).toInt() == 1 ? Kind::wait : Kind::hold;
    r.id = q.value(1).toLongLong();
    if (!q.value(2).isNull()) r.name = q.value(2).toByteArray();
    r.key = q.value(3).toLongLong();
    r.intPair = q.value(4).toInt() != 0;
    r.pid = q.value(5).toInt();
    r.application = q.value(6).toString();
    r.user = q.value(7).toString();
    r.shared = q.value(8).toInt() != 0;
    r.started = q.value(9).toDouble();
    r.ended = q.value(10).toDouble();
    r.unseen = q.value(11).toDouble();
    r.nameSource = nameSourceFromText(q.value(12).toString());
    r.waitedOn = parsePidList(q.value(13).toString());
    return r;
}

bool bindAll(QSqlQuery& q, const QVariantList& values) {
    for (int i = 0; i < values.size(); ++i) q.bindValue(i, values.at(i));
    return true;
}

}  // namespace

HistoryStore::HistoryStore(const QString& path, Mode mode, qint64 maxRowsPerTable)
    : path_(path),
      // Unique per instance: the writer and any number of readers use the same file at once.
      connection_(QStringLiteral("lockscope-history-") + QUuid::createUuid().toString(QUuid::WithoutBraces)),
      maxRows_(std::max<qint64>(1, maxRowsPerTable)) {
    open_ = openDatabase(mode);
    if (open_ && mode == Mode::readWrite) enforceLimits();
}

HistoryStore::~HistoryStore() {
    {
        QSqlDatabase db = QSqlDatabase::database(connection_, false);
        if (db.isValid()) db.close();
    }  // every QSqlDatabase copy must be gone before removeDatabase
    QSqlDatabase::removeDatabase(connection_);
}

QString HistoryStore::fileNameForProfile(const QString& profileName) {
    QString readable;
    for (QChar c : profileName) {
        if (readable.size() >= 40) break;
        const char16_t u = c.unicode();
        const bool safe = (u >= 'a' && u <= 'z') || (u >= 'A' && u <= 'Z') || (u >= '0' && u <= '9') || u == '-' || u == '_';
        readable += safe ? c : QChar(u'_');
    }
    if (readable.isEmpty()) readable = QStringLiteral("profile");
    const QByteArray hash = QCryptographicHash::hash(profileName.toUtf8(), QCryptographicHash::Sha256).toHex().left(12);
    return QStringLiteral("%1-%2.sqlite").arg(readable, QString::fromLatin1(hash));
}

QString HistoryStore::pathForProfile(const QString& profileName) {
    return QStandardPaths::writableLocation(QStandardPaths::AppDataLocation) + QStringLiteral("/history/") +
           fileNameForProfile(profileName);
}

double HistoryStore::currentTime() { return static_cast<double>(QDateTime::currentMSecsSinceEpoch()) / 1000.0; }

bool HistoryStore::fail(const QString& what, const QString& detail) const {
    error_ = QStringLiteral("history %1: %2: %3").arg(path_, what, detail);
    return false;
}

bool HistoryStore::openDatabase(Mode mode) {
    const QFileInfo info(path_);
    if (mode == Mode::readOnly && !info.exists())
        return fail(QStringLiteral("open"), QStringLiteral("no history recorded yet"));
    if (mode == Mode::readWrite && !QDir().mkpath(info.absolutePath()))
        return fail(QStringLiteral("open"), QStringLiteral("cannot create the directory %1").arg(info.absolutePath()));
    QSqlDatabase db = QSqlDatabase::addDatabase(QStringLiteral("QSQLITE"), connection_);
    if (!db.isValid()) return fail(QStringLiteral("open"), QStringLiteral("the Qt SQLite driver (QSQLITE) is not available"));
    db.setDatabaseName(path_);
    QString options = QStringLiteral("QSQLITE_BUSY_TIMEOUT=5000");
    if (mode == Mode::readOnly) options += QStringLiteral(";QSQLITE_OPEN_READONLY");
    db.setConnectOptions(options);
    if (!db.open()) return fail(QStringLiteral("open"), db.lastError().text());
    QSqlQuery q(db);
    if (mode == Mode::readWrite) {
        // WAL: the tab's queries and exports read while the recorder writes, neither waiting.
        // NORMAL sync is durable across application crashes, which is what history needs.
        if (!q.exec(QStringLiteral("PRAGMA journal_mode=WAL")) || !q.exec(QStringLiteral("PRAGMA synchronous=NORMAL"))) {
            fail(QStringLiteral("open"), q.lastError().text());
            db.close();
            return false;
        }
        if (!createSchema()) {
            db.close();
            return false;
        }
    }
    // The schema version decides whether this build can read the file at all.
    if (!q.exec(QStringLiteral("SELECT version FROM schema_version")) || !q.next()) {
        fail(QStringLiteral("open"), QStringLiteral("not a lockscope history file (%1)").arg(q.lastError().text()));
        db.close();
        return false;
    }
    if (const int version = q.value(0).toInt(); version != kSchemaVersion) {
        fail(QStringLiteral("open"), QStringLiteral("history format %1 is not the format %2 this lockscope knows")
                                         .arg(version)
                                         .arg(kSchemaVersion));
        db.close();
        return false;
    }
    q.prepare(QStringLiteral("SELECT value FROM settings WHERE key = ?"));
    q.addBindValue(QStringLiteral("retention_days"));
    if (q.exec() && q.next()) retentionDays_ = std::clamp(q.value(0).toInt(), 1, kMaxRetentionDays);
    return true;
}

bool HistoryStore::createSchema() {
    QSqlDatabase db = QSqlDatabase::database(connection_, false);
    QString error;
    const bool ok = inTransaction(db, &error, [&] {
        QSqlQuery q(db);
        QStringList statements = {
            QStringLiteral("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)"),
            QStringLiteral("CREATE TABLE IF NOT EXISTS settings (key TEXT PRIMARY KEY, value)"),
            createTable("holds", false),
            createTable("waits", true),
        };
        statements += createIndexes("holds");
        statements += createIndexes("waits");
        for (const QString& sql : std::as_const(statements)) {
            if (!q.exec(sql)) {
                error = q.lastError().text();
                return false;
            }
        }
        // A new file gets this build's version; an existing one keeps its own (checked after).
        if (!q.exec(QStringLiteral("SELECT count(*) FROM schema_version")) || !q.next()) {
            error = q.lastError().text();
            return false;
        }
        if (q.value(0).toInt() == 0) {
            q.prepare(QStringLiteral("INSERT INTO schema_version (version) VALUES (?)"));
            q.addBindValue(kSchemaVersion);
            if (!q.exec()) {
                error = q.lastError().text();
                return false;
            }
        }
        // Older files are brought up to this version step by step, in this same transaction.
        if (!q.exec(QStringLiteral("SELECT version FROM schema_version")) || !q.next()) {
            error = q.lastError().text();
            return false;
        }
        const int version = q.value(0).toInt();
        const auto run = [&](const QString& sql) {
            if (q.exec(sql)) return true;
            error = q.lastError().text();
            return false;
        };
        // Version 1 had no `unseen`: add it (0 = seen throughout).
        if (version == 1) {
            for (const char* table : kTables)
                if (!run(QStringLiteral("ALTER TABLE %1 ADD COLUMN unseen REAL NOT NULL DEFAULT 0").arg(QLatin1String(table))))
                    return false;
        }
        // Version 2 had no `name_source`: until then only the catalog named rows, so a row with a
        // name got it from the catalog and the others had none.
        if (version == 1 || version == 2) {
            for (const char* table : kTables) {
                if (!run(QStringLiteral("ALTER TABLE %1 ADD COLUMN name_source TEXT NOT NULL DEFAULT ''").arg(QLatin1String(table))) ||
                    !run(QStringLiteral("UPDATE %1 SET name_source = 'catalog' WHERE name IS NOT NULL").arg(QLatin1String(table))))
                    return false;
            }
            if (!run(QStringLiteral("UPDATE schema_version SET version = %1").arg(kSchemaVersion))) return false;
        }
        return true;
    });
    // SQLite opens any file lazily: "file is not a database" surfaces here.
    return ok || fail(QStringLiteral("open"), error);
}

bool HistoryStore::insert(const std::vector<Record>& records) {
    if (!open_) return false;
    if (records.empty()) return true;
    QSqlDatabase db = QSqlDatabase::database(connection_, false);
    QString error;
    const bool ok = inTransaction(db, &error, [&] {
        QSqlQuery holds(db), waits(db);
        const QString insert = QStringLiteral(
            "INSERT INTO %1 (name, key, int_pair, pid, application, username, shared, started, ended, duration, unseen, "
            "name_source%2) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?%3)");
        if (!holds.prepare(insert.arg(QStringLiteral("holds"), QString(), QString())) ||
            !waits.prepare(insert.arg(QStringLiteral("waits"), QStringLiteral(", waited_on"), QStringLiteral(", ?")))) {
            error = holds.lastError().isValid() ? holds.lastError().text() : waits.lastError().text();
            return false;
        }
        for (const Record& r : records) {
            QSqlQuery& q = r.kind == Kind::hold ? holds : waits;
            // A name is always a BLOB (exact bytes); an unknown one is SQL NULL.
            q.bindValue(0, r.name ? QVariant(*r.name) : QVariant(QMetaType::fromType<QByteArray>()));
            q.bindValue(1, r.key);
            q.bindValue(2, r.intPair ? 1 : 0);
            q.bindValue(3, r.pid);
            q.bindValue(4, notNull(r.application));
            q.bindValue(5, notNull(r.user));
            q.bindValue(6, r.shared ? 1 : 0);
            q.bindValue(7, r.started);
            q.bindValue(8, r.ended);
            q.bindValue(9, r.duration());
            q.bindValue(10, r.unseen);
            q.bindValue(11, notNull(nameSourceText(r.nameSource)));
            // An empty list joins to a null QString: notNull, or the batch fails on NOT NULL.
            if (r.kind == Kind::wait) q.bindValue(12, notNull(pidList(r.waitedOn)));
            if (!q.exec()) {
                error = q.lastError().text();
                return false;
            }
        }
        return true;
    });
    return ok || fail(QStringLiteral("insert"), error);
}

bool HistoryStore::setRetentionDays(int days) {
    days = std::clamp(days, 1, kMaxRetentionDays);
    if (!open_) return false;
    QSqlQuery q(QSqlDatabase::database(connection_, false));
    q.prepare(QStringLiteral("INSERT INTO settings (key, value) VALUES (?, ?) "
                             "ON CONFLICT (key) DO UPDATE SET value = excluded.value"));
    q.addBindValue(QStringLiteral("retention_days"));
    q.addBindValue(days);
    if (!q.exec()) return fail(QStringLiteral("set the retention"), q.lastError().text());
    retentionDays_ = days;
    return true;
}

qint64 HistoryStore::enforceLimits(double now) {
    if (!open_) return -1;
    QSqlDatabase db = QSqlDatabase::database(connection_, false);
    qint64 deleted = 0;
    QString error;
    const bool ok = inTransaction(db, &error, [&] {
        QSqlQuery q(db);
        for (const char* table : kTables) {
            q.prepare(QStringLiteral("DELETE FROM %1 WHERE ended < ?").arg(QLatin1String(table)));
            q.addBindValue(now - retentionDays_ * kSecondsPerDay);
            if (!q.exec()) {
                error = q.lastError().text();
                return false;
            }
            deleted += q.numRowsAffected();
            if (!q.exec(QStringLiteral("SELECT count(*) FROM %1").arg(QLatin1String(table))) || !q.next()) {
                error = q.lastError().text();
                return false;
            }
            const qint64 excess = q.value(0).toLongLong() - maxRows_;
            if (excess <= 0) continue;
            q.prepare(QStringLiteral("DELETE FROM %1 WHERE id IN (SELECT id FROM %1 ORDER BY ended, id LIMIT ?)")
                          .arg(QLatin1String(table)));
            q.addBindValue(excess);
            if (!q.exec()) {
                error = q.lastError().text();
                return false;
            }
            deleted += q.numRowsAffected();
        }
        return true;
    });
    if (!ok) {
        fail(QStringLiteral("enforce the limits"), error);
        return -1;
    }
    return deleted;
}

QueryResult HistoryStore::query(const Filter& filter, int limit) const {
    QueryResult result;
    if (!open_) {
        result.error = error_;
        return result;
    }
    QSqlDatabase db = QSqlDatabase::database(connection_, false);
    const Where where = whereOf(filter);
    QSqlQuery q(db);
    q.setForwardOnly(true);
    // Count and rows in one read transaction, so "N of M" describes one state of the file.
    db.transaction();
    QStringList counts;
    QVariantList countValues;
    for (Kind kind : kindsOf(filter)) {
        counts << QStringLiteral("(SELECT count(*) FROM %1%2)").arg(QLatin1String(tableOf(kind)), where.sql);
        countValues += where.values;
    }
    if (!q.prepare(QStringLiteral("SELECT ") + counts.join(QStringLiteral(" + "))) || !bindAll(q, countValues) ||
        !q.exec() || !q.next()) {
        fail(QStringLiteral("count"), q.lastError().text());
        result.error = error_;
        db.rollback();
        return result;
    }
    result.total = q.value(0).toLongLong();
    QVariantList values;
    const QString sql = selectSql(filter, where, std::max(0, limit), &values);
    if (!q.prepare(sql) || !bindAll(q, values) || !q.exec()) {
        fail(QStringLiteral("query"), q.lastError().text());
        result.error = error_;
        db.rollback();
        return result;
    }
    result.rows.reserve(static_cast<std::size_t>(std::min<qint64>(result.total, limit)));
    while (q.next()) result.rows.push_back(readRecord(q));
    q.finish();
    db.rollback();  // nothing was written
    return result;
}

qint64 HistoryStore::count(Kind kind) const {
    if (!open_) return -1;
    QSqlQuery q(QSqlDatabase::database(connection_, false));
    if (!q.exec(QStringLiteral("SELECT count(*) FROM %1").arg(QLatin1String(tableOf(kind)))) || !q.next()) {
        fail(QStringLiteral("count"), q.lastError().text());
        return -1;
    }
    return q.value(0).toLongLong();
}

qint64 HistoryStore::exportCsv(const Filter& filter, QIODevice& out) const {
    if (!open_) return -1;
    QSqlQuery q(QSqlDatabase::database(connection_, false));
    q.setForwardOnly(true);  // rows stream from SQLite to the file; memory stays flat
    QVariantList values;
    const QString sql = selectSql(filter, whereOf(filter), -1, &values);
    if (!q.prepare(sql) || !bindAll(q, values) || !q.exec()) {
        fail(QStringLiteral("export"), q.lastError().text());
        return -1;
    }
    if (out.write(csv::headerLine()) < 0) {
        fail(QStringLiteral("export"), out.errorString());
        return -1;
    }
    qint64 rows = 0;
    while (q.next()) {
        if (out.write(csv::line(readRecord(q))) < 0) {
            fail(QStringLiteral("export"), out.errorString());
            return -1;
        }
        ++rows;
    }
    if (q.lastError().isValid()) {
        fail(QStringLiteral("export"), q.lastError().text());
        return -1;
    }
    return rows;
}

qint64 HistoryStore::exportCsvFile(const Filter& filter, const QString& path) const {
    QSaveFile file(path);  // a failed export never leaves half a file behind
    if (!file.open(QIODevice::WriteOnly)) {
        fail(QStringLiteral("export to %1").arg(path), file.errorString());
        return -1;
    }
    const qint64 rows = exportCsv(filter, file);
    if (rows < 0) {
        file.cancelWriting();
        return -1;
    }
    if (!file.commit()) {
        fail(QStringLiteral("export to %1").arg(path), file.errorString());
        return -1;
    }
    return rows;
}

}  // namespace lockscope::history
