// The monitor's history: what the store keeps survives a reopen byte for byte, retention and the
// row bound delete the oldest rows and nothing else, filters find what an operator searches for,
// the CSV export is RFC 4180 for names with commas, quotes, CR/LF and non-UTF-8 bytes, the model
// merges refreshes under QAbstractItemModelTester, the recorder writes on its own thread, and on a
// real server a hold and a wait seen by the poller end up in the store.
#include <QAbstractItemModelTester>
#include <QBuffer>
#include <QElapsedTimer>
#include <QLabel>
#include <QLineEdit>
#include <QRegularExpression>
#include <QSet>
#include <QSpinBox>
#include <QSignalSpy>
#include <QSqlDatabase>
#include <QSqlQuery>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QUuid>
#include <QtTest>

#include <libpq-fe.h>

#include <cstdlib>

#include "history/history_csv.hpp"
#include "history/history_model.hpp"
#include "history/history_panel.hpp"
#include "history/history_recorder.hpp"
#include "history/history_store.hpp"
#include "pg_conn.hpp"
#include "pg_test_env.hpp"
#include "pglock/key.hpp"
#include "pglock/text.hpp"
#include "poller/poller.hpp"
#include "stores/name_import.hpp"

using namespace std::chrono_literals;
using lockscope::PollResult;
using lockscope::PollResultPtr;
using lockscope::history::Filter;
using lockscope::history::HistoryModel;
using lockscope::history::HistoryRecorder;
using lockscope::history::HistoryStore;
using lockscope::history::Kind;
using lockscope::history::Record;
namespace csv = lockscope::history::csv;

namespace {

constexpr double kDay = 86400.0;

Record hold(QByteArray name, int pid, double started, double ended, QString app = QStringLiteral("app")) {
    Record r;
    r.kind = Kind::hold;
    r.key = pglock::key_of(std::string_view(name.constData(), static_cast<std::size_t>(name.size())));
    r.name = std::move(name);
    r.pid = pid;
    r.application = std::move(app);
    r.user = QStringLiteral("alice");
    r.started = started;
    r.ended = ended;
    return r;
}

Record wait(QByteArray name, int pid, double started, double ended, QList<int> waitedOn) {
    Record r = hold(std::move(name), pid, started, ended, QStringLiteral("waiter-app"));
    r.kind = Kind::wait;
    r.user = QStringLiteral("bob");
    r.waitedOn = std::move(waitedOn);
    return r;
}

std::vector<Record> withoutIds(std::vector<Record> rows) {
    for (Record& r : rows) r.id = 0;
    return rows;
}

// Parses RFC 4180 CSV strictly: CRLF records, quoted fields with doubled quotes. nullopt when the
// text breaks the rules (a bare LF or CR outside quotes, a quote inside an unquoted field, ...).
std::optional<QList<QByteArrayList>> parseCsv(const QByteArray& text) {
    QList<QByteArrayList> records;
    QByteArrayList record;
    QByteArray field;
    qsizetype i = 0;
    const qsizetype n = text.size();
    while (i < n) {
        if (text[i] == '"') {
            ++i;
            for (;;) {
                if (i >= n) return std::nullopt;  // unterminated
                if (text[i] == '"') {
                    if (i + 1 < n && text[i + 1] == '"') {
                        field.append('"');
                        i += 2;
                        continue;
                    }
                    ++i;
                    break;
                }
                field.append(text[i++]);
            }
        } else {
            while (i < n && text[i] != ',' && text[i] != '\r' && text[i] != '\n') {
                if (text[i] == '"') return std::nullopt;
                field.append(text[i++]);
            }
        }
        record.append(std::exchange(field, {}));
        if (i < n && text[i] == ',') {
            ++i;
            continue;
        }
        if (i + 1 < n && text[i] == '\r' && text[i + 1] == '\n') {
            records.append(std::exchange(record, {}));
            i += 2;
            continue;
        }
        return std::nullopt;  // a field ended by anything but a comma or CRLF
    }
    if (!record.isEmpty()) return std::nullopt;  // the last record lacks its CRLF
    return records;
}

struct QueryAll {
    lockscope::history::QueryResult result;
    bool opened = false;
};

PollResultPtr pollResult(std::vector<pglock::monitor::Hold> holds, std::vector<pglock::monitor::Wait> waits) {
    auto r = std::make_shared<PollResult>();
    r->finished = std::move(holds);
    r->finished_waits = std::move(waits);
    return r;
}

}  // namespace

class TestHistoryStore : public QObject {
    Q_OBJECT
    QTemporaryDir dir_;
    int files_ = 0;
    double now_ = 0;

    QString freshPath() { return dir_.filePath(QStringLiteral("history-%1.sqlite").arg(++files_)); }

    // A file with the given rows already in it.
    QString fileWith(const std::vector<Record>& rows) {
        const QString path = freshPath();
        HistoryStore store(path);
        if (!store.isOpen() || !store.insert(rows)) qFatal("cannot prepare %s: %s", qPrintable(path), qPrintable(store.errorString()));
        return path;
    }

    QueryAll all(const QString& path, const Filter& filter = {}, int limit = 100000) {
        const HistoryStore store(path, HistoryStore::Mode::readOnly);
        return {store.query(filter, limit), store.isOpen()};
    }

private slots:
    void initTestCase() {
        QStandardPaths::setTestModeEnabled(true);
        QVERIFY(dir_.isValid());
        now_ = HistoryStore::currentTime();
    }

    void round_trip_survives_reopen_byte_for_byte() {
        const QString path = freshPath();
        QByteArray nul("with\0nul", 8);
        std::vector<Record> rows = {
            hold("orders.daily-rollup", 101, now_ - 60, now_ - 50),
            hold("a,b \"quoted\"\r\nline", 102, now_ - 49, now_ - 40),
            hold(nul, 103, now_ - 39, now_ - 30),
            hold(QByteArray("\xff\xfe latin\xe9", 9), 104, now_ - 29, now_ - 20),
            wait("orders.daily-rollup", 105, now_ - 19.5, now_ - 10.25, {101, 7}),
        };
        Record unknown = hold("ignored", 106, now_ - 9, now_ - 5);
        unknown.name.reset();  // the catalog did not know the key
        unknown.key = -42;
        unknown.shared = true;
        unknown.application.clear();  // a backend without application_name
        rows.push_back(unknown);
        Record pair = hold("ignored", 107, now_ - 4, now_ - 1);
        pair.name.reset();
        pair.intPair = true;
        pair.key = (qint64(-5) << 32) | 6;
        rows.push_back(pair);
        {
            HistoryStore store(path);
            QVERIFY2(store.isOpen(), qPrintable(store.errorString()));
            QVERIFY2(store.insert(rows), qPrintable(store.errorString()));
            QCOMPARE(store.count(Kind::hold), qint64(6));
            QCOMPARE(store.count(Kind::wait), qint64(1));
        }
        HistoryStore reopened(path);
        QVERIFY2(reopened.isOpen(), qPrintable(reopened.errorString()));
        const auto result = reopened.query({});
        QVERIFY2(result.error.isEmpty(), qPrintable(result.error));
        QCOMPARE(result.total, qint64(rows.size()));
        std::vector<Record> expected(rows.rbegin(), rows.rend());  // newest end first
        QCOMPARE(withoutIds(result.rows), expected);
        for (const Record& r : result.rows) QVERIFY(r.id > 0);
        QCOMPARE(result.rows[4].name->size(), 8);  // the NUL byte and what follows it survived
        QVERIFY(!result.rows[1].name.has_value());  // NULL stays unknown, not an empty name
    }

    void insert_is_all_or_nothing_and_readonly_never_creates() {
        const QString missing = freshPath();
        const HistoryStore reader(missing, HistoryStore::Mode::readOnly);
        QVERIFY(!reader.isOpen());
        QVERIFY(!reader.errorString().isEmpty());
        QVERIFY(!QFileInfo::exists(missing));

        // A file that is not SQLite is refused with a reason, not overwritten.
        const QString junk = freshPath();
        {
            QFile f(junk);
            QVERIFY(f.open(QIODevice::WriteOnly));
            f.write(QByteArray(4096, 'x'));
        }
        const HistoryStore bad(junk);
        QVERIFY(!bad.isOpen());
        QVERIFY(!bad.errorString().isEmpty());
    }

    // A wait whose blocking PIDs the poll could not name (the holder left between the two reads)
    // has an empty list; it used to bind as SQL NULL into waited_on NOT NULL and fail its batch.
    // A file written by an older lockscope (format 1: no `unseen`; format 2: no `name_source`) is
    // migrated when opened to write: its rows stay, a row with a name says it came from the
    // catalog (the only source then), the others none; the CSV gets name_source as its last column.
    void older_files_are_migrated_with_their_names_sources() {
        for (const int version : {1, 2}) {
            const QString path = dir_.filePath(QStringLiteral("v%1.sqlite").arg(version));
            {
                const QString connection = QStringLiteral("old-format-%1").arg(version);
                {
                    QSqlDatabase db = QSqlDatabase::addDatabase(QStringLiteral("QSQLITE"), connection);
                    db.setDatabaseName(path);
                    QVERIFY(db.open());
                    QSqlQuery q(db);
                    const QString unseen = version >= 2 ? QStringLiteral(", unseen REAL NOT NULL DEFAULT 0") : QString();
                    for (const QString& table : {QStringLiteral("holds"), QStringLiteral("waits")}) {
                        QVERIFY(q.exec(QStringLiteral("CREATE TABLE %1 (id INTEGER PRIMARY KEY, name BLOB, key INTEGER NOT NULL, "
                                                      "int_pair INTEGER NOT NULL DEFAULT 0, pid INTEGER NOT NULL, "
                                                      "application TEXT NOT NULL DEFAULT '', username TEXT NOT NULL DEFAULT '', "
                                                      "shared INTEGER NOT NULL DEFAULT 0, started REAL NOT NULL, ended REAL NOT NULL, "
                                                      "duration REAL NOT NULL%2%3)")
                                           .arg(table, unseen,
                                                table == QLatin1String("waits") ? QStringLiteral(", waited_on TEXT NOT NULL DEFAULT ''") : QString())));
                    }
                    QVERIFY(q.exec(QStringLiteral("CREATE TABLE schema_version (version INTEGER NOT NULL)")));
                    QVERIFY(q.exec(QStringLiteral("INSERT INTO schema_version VALUES (%1)").arg(version)));
                    QVERIFY(q.exec(QStringLiteral("CREATE TABLE settings (key TEXT PRIMARY KEY, value)")));
                    const double now = HistoryStore::currentTime();
                    q.prepare(QStringLiteral("INSERT INTO holds (name, key, pid, started, ended, duration) VALUES (?, ?, ?, ?, ?, 1)"));
                    q.addBindValue(QByteArray("orders.daily-rollup"));
                    q.addBindValue(qint64(pglock::key_of("orders.daily-rollup")));
                    q.addBindValue(11);
                    q.addBindValue(now - 2);
                    q.addBindValue(now - 1);
                    QVERIFY(q.exec());
                    q.prepare(QStringLiteral("INSERT INTO holds (name, key, pid, started, ended, duration) VALUES (NULL, 77, 12, ?, ?, 1)"));
                    q.addBindValue(now - 2);
                    q.addBindValue(now - 1);
                    QVERIFY(q.exec());
                }
                QSqlDatabase::removeDatabase(connection);
            }
            // Read-only, an old file is refused (nothing may change it); opened to write, it is migrated.
            QVERIFY(!HistoryStore(path, HistoryStore::Mode::readOnly).isOpen());
            {
                HistoryStore store(path);
                QVERIFY2(store.isOpen(), qPrintable(store.errorString()));
            }
            HistoryStore store(path, HistoryStore::Mode::readOnly);
            QVERIFY2(store.isOpen(), qPrintable(store.errorString()));
            const auto rows = store.query({}).rows;
            QCOMPARE(rows.size(), std::size_t(2));
            for (const Record& r : rows) {
                if (r.pid == 11) {
                    QCOMPARE(r.nameSource, lockscope::LockNameSource::catalog);
                    QCOMPARE(HistoryModel::displayName(r), QStringLiteral("orders.daily-rollup"));
                } else {
                    QCOMPARE(r.nameSource, lockscope::LockNameSource::none);
                    QCOMPARE(HistoryModel::displayName(r), QStringLiteral("(unknown) 77"));
                }
            }
            QBuffer out;
            QVERIFY(out.open(QIODevice::WriteOnly));
            QCOMPARE(store.exportCsv({}, out), qint64(2));
            const QList<QByteArray> lines = out.data().split('\n');
            QCOMPARE(lines.at(0), QByteArray("kind,name,name_escaped,key,form,pid,application,user,mode,started,ended,duration_s,"
                                             "waited_on,name_source\r"));
            for (const QByteArray& line : lines.mid(1, 2))
                QVERIFY2(line.endsWith(line.contains(",11,") ? ",catalog\r" : ",\r"), line.constData());
        }
    }

    void a_wait_blocked_by_nobody_is_stored_with_its_batch() {
        const QString path = freshPath();
        HistoryStore store(path);
        QVERIFY(store.isOpen());
        QVERIFY2(store.insert({hold("batch.hold", 1, now_ - 10, now_ - 5), wait("batch.wait", 2, now_ - 9, now_ - 6, {})}),
                 qPrintable(store.errorString()));
        const auto rows = all(path).result.rows;
        QCOMPARE(rows.size(), std::size_t(2));
        for (const Record& r : rows)
            if (r.kind == Kind::wait) QVERIFY(r.waitedOn.isEmpty());
    }

    // A batch the file refused (here: another program holds the write lock longer than SQLite's
    // busy timeout) is kept and written with the next one; the failure says so.
    void recorder_keeps_a_failed_batch_for_the_next_write() {
        const QString path = fileWith({});
        HistoryRecorder recorder;
        QSignalSpy opened(&recorder, &HistoryRecorder::opened);
        QSignalSpy written(&recorder, &HistoryRecorder::written);
        QSignalSpy failed(&recorder, &HistoryRecorder::failed);
        recorder.open(path);
        QTRY_COMPARE_WITH_TIMEOUT(opened.count(), 1, 5000);
        QVERIFY(opened.at(0).at(1).toBool());

        pglock::monitor::Hold h;
        h.lock = {pglock::monitor::KeyForm::bigint, pglock::tag_of(5)};
        h.key = 5;
        h.pid = 21;
        h.start = now_ - 5;
        h.end = now_ - 1;
        {
            QSqlDatabase other = QSqlDatabase::addDatabase(QStringLiteral("QSQLITE"), QStringLiteral("other-writer"));
            other.setDatabaseName(path);
            QVERIFY(other.open());
            QSqlQuery lock(other);
            QVERIFY(lock.exec(QStringLiteral("BEGIN EXCLUSIVE")));
            recorder.record(pollResult({h}, {}));
            QTRY_COMPARE_WITH_TIMEOUT(failed.count(), 1, 15000);
            QVERIFY2(failed.at(0).at(0).toString().contains(QStringLiteral("kept")), qPrintable(failed.at(0).at(0).toString()));
            QCOMPARE(written.count(), 0);
            QVERIFY(lock.exec(QStringLiteral("ROLLBACK")));
            lock.finish();
            other.close();
        }
        QSqlDatabase::removeDatabase(QStringLiteral("other-writer"));
        h.pid = 22;
        recorder.record(pollResult({h}, {}));
        QTRY_COMPARE_WITH_TIMEOUT(written.count(), 1, 10000);
        QCOMPARE(written.at(0).at(0).toInt(), 2);  // the kept hold and the new one
        QList<int> pids;
        for (const Record& r : all(path).result.rows) pids << r.pid;
        std::sort(pids.begin(), pids.end());
        QCOMPARE(pids, (QList<int>{21, 22}));
    }

    void retention_deletes_old_rows_on_open_and_enforce() {
        const QString path = fileWith({
            hold("old", 1, now_ - 9 * kDay, now_ - 8 * kDay),
            wait("old", 2, now_ - 9 * kDay, now_ - 8 * kDay, {1}),
            hold("edge", 3, now_ - 6 * kDay, now_ - 6 * kDay + 1),
            hold("recent", 4, now_ - 3600, now_ - 3500),
        });
        // fileWith() enforced the default 7 days on open... of an empty file; this open sees them.
        {
            HistoryStore store(path);
            QCOMPARE(store.retentionDays(), HistoryStore::kDefaultRetentionDays);
            QCOMPARE(store.count(Kind::hold), qint64(2));
            QCOMPARE(store.count(Kind::wait), qint64(0));
            // A shorter retention is stored in the file and applies at the next enforcement.
            QVERIFY(store.setRetentionDays(1));
            QCOMPARE(store.enforceLimits(now_), qint64(1));  // "edge" (6 days) goes, "recent" stays
            QCOMPARE(store.count(Kind::hold), qint64(1));
            QCOMPARE(store.enforceLimits(now_), qint64(0));
        }
        HistoryStore reopened(path);
        QCOMPARE(reopened.retentionDays(), 1);
        const auto result = reopened.query({});
        QCOMPARE(result.rows.size(), std::size_t(1));
        QCOMPARE(*result.rows[0].name, QByteArray("recent"));
        // Time moves on: two days later even the recent row is past a one-day retention.
        QCOMPARE(reopened.enforceLimits(now_ + 2 * kDay), qint64(1));
        QCOMPARE(reopened.count(Kind::hold), qint64(0));
        QVERIFY(reopened.setRetentionDays(0));  // clamped to the minimum
        QCOMPARE(reopened.retentionDays(), 1);
    }

    void max_rows_bound_deletes_the_oldest() {
        std::vector<Record> rows;
        for (int i = 0; i < 8; ++i) rows.push_back(hold("bounded", 100 + i, now_ - 100 + i, now_ - 90 + i));
        for (int i = 0; i < 3; ++i) rows.push_back(wait("bounded", 200 + i, now_ - 100 + i, now_ - 90 + i, {100}));
        const QString path = fileWith(rows);
        HistoryStore store(path, HistoryStore::Mode::readWrite, 5);  // enforced on open
        QCOMPARE(store.count(Kind::hold), qint64(5));
        QCOMPARE(store.count(Kind::wait), qint64(3));  // each table has its own bound
        auto result = store.query({.text = {}, .kind = Kind::hold, .since = {}, .until = {}, .pid = {}});
        QList<int> pids;
        for (const Record& r : result.rows) pids << r.pid;
        QCOMPARE(pids, (QList<int>{107, 106, 105, 104, 103}));  // the newest five
        store.setMaxRowsPerTable(2);
        QCOMPARE(store.enforceLimits(now_), qint64(3 + 1));
        QCOMPARE(store.count(Kind::hold), qint64(2));
        QCOMPARE(store.count(Kind::wait), qint64(2));
    }

    void filters_find_what_an_operator_searches_for() {
        QByteArray nul("pre\0fix-secret", 14);
        Record pctName = hold("100%_done", 9, now_ - 20, now_ - 19);
        const QString path = fileWith({
            hold("Payments.Settle", 10, now_ - 5 * 3600, now_ - 4 * 3600, QStringLiteral("billing")),
            wait("payments.settle", 11, now_ - 4.5 * 3600, now_ - 4 * 3600, {10}),
            hold("search.reindex", 12, now_ - 600, now_ - 300, QStringLiteral("indexer")),
            hold(nul, 13, now_ - 100, now_ - 50),
            hold("1000_done", 14, now_ - 30, now_ - 29),
            pctName,
        });
        auto pidsOf = [&](const Filter& f) {
            QList<int> out;
            for (const Record& r : all(path, f).result.rows) out << r.pid;
            return out;
        };
        // Text: the name without regard to ASCII case, the application, the user.
        QCOMPARE(pidsOf({.text = QStringLiteral("PAYMENTS")}), (QList<int>{10, 11}));
        QCOMPARE(pidsOf({.text = QStringLiteral("index")}), (QList<int>{12}));  // name and application
        QCOMPARE(pidsOf({.text = QStringLiteral("bob")}), (QList<int>{11}));  // the waiter's user
        QCOMPARE(pidsOf({.text = QStringLiteral("secret")}), (QList<int>{13}));  // past the NUL byte
        // % and _ are literal characters, not LIKE wildcards.
        QCOMPARE(pidsOf({.text = QStringLiteral("0%_")}), (QList<int>{9}));
        QCOMPARE(pidsOf({.text = QStringLiteral("nothing like it")}), QList<int>{});
        // Kind, time window, pid.
        QCOMPARE(pidsOf({.kind = Kind::wait}), (QList<int>{11}));
        QCOMPARE(pidsOf({.since = now_ - 3600}), (QList<int>{9, 14, 13, 12}));
        QCOMPARE(pidsOf({.until = now_ - 4.5 * 3600}), (QList<int>{10, 11}));
        QCOMPARE(pidsOf({.pid = 12}), (QList<int>{12}));
        QCOMPARE(pidsOf({.text = QStringLiteral("settle"), .kind = Kind::hold}), (QList<int>{10}));
        // A limit cuts the rows, not the count.
        const auto limited = all(path, {}, 2);
        QCOMPARE(limited.result.rows.size(), std::size_t(2));
        QCOMPARE(limited.result.total, qint64(6));
        QCOMPARE(limited.result.rows[0].pid, 9);  // the newest
    }

    void csv_field_quoting_is_rfc4180() {
        QCOMPARE(csv::field("plain"), QByteArray("plain"));
        QCOMPARE(csv::field(""), QByteArray(""));
        QCOMPARE(csv::field("a,b"), QByteArray("\"a,b\""));
        QCOMPARE(csv::field("say \"hi\""), QByteArray("\"say \"\"hi\"\"\""));
        QCOMPARE(csv::field("two\r\nlines"), QByteArray("\"two\r\nlines\""));
        QCOMPARE(csv::field("lf\nonly"), QByteArray("\"lf\nonly\""));
        QCOMPARE(csv::field("cr\ronly"), QByteArray("\"cr\ronly\""));
        QCOMPARE(csv::field("tab\tand space "), QByteArray("tab\tand space "));  // no need to quote
    }

    void csv_export_round_trips_awkward_names() {
        const QByteArray comma("orders,daily");
        const QByteArray quotes("say \"cheese\"");
        const QByteArray lines("first\r\nsecond\nthird\r");
        const QByteArray binary("bin\0\xff\xfe\"x", 8);
        Record unknown = hold("x", 5, now_ - 5, now_ - 4.5);
        unknown.name.reset();
        unknown.key = 12345;
        const QString path = fileWith({
            hold(comma, 1, now_ - 50, now_ - 40, QStringLiteral("app, with comma")),
            hold(quotes, 2, now_ - 39, now_ - 30),
            hold(lines, 3, now_ - 29, now_ - 20),
            wait(binary, 4, now_ - 19, now_ - 10, {1, 2}),
            unknown,
        });
        const HistoryStore store(path, HistoryStore::Mode::readOnly);
        QBuffer buffer;
        QVERIFY(buffer.open(QIODevice::WriteOnly));
        QCOMPARE(store.exportCsv({}, buffer), qint64(5));
        const QByteArray text = buffer.data();
        QVERIFY(pglock::is_valid_utf8(text.toStdString()));  // non-UTF-8 names are escaped, not raw
        const auto parsed = parseCsv(text);
        QVERIFY2(parsed, "the export is not RFC 4180 CSV");
        QCOMPARE(parsed->size(), 6);
        const QByteArrayList header = parsed->at(0);
        QCOMPARE(header.join(','), csv::headerLine().trimmed());
        for (const QByteArrayList& rec : *parsed) QCOMPARE(rec.size(), header.size());
        auto column = [&](const char* name) { return header.indexOf(QByteArray(name)); };
        // Newest first: unknown, binary, lines, quotes, comma.
        const QByteArrayList& u = parsed->at(1);
        QCOMPARE(u[column("name")], QByteArray());
        QCOMPARE(u[column("key")], QByteArray("12345"));
        const QByteArrayList& b = parsed->at(2);
        QCOMPARE(b[column("kind")], QByteArray("wait"));
        QCOMPARE(b[column("name")], lockscope::names::escapeName(binary));
        QCOMPARE(lockscope::names::unescapeName(b[column("name_escaped")]), std::optional<QByteArray>(binary));
        QCOMPARE(b[column("waited_on")], QByteArray("1 2"));
        QCOMPARE(b[column("user")], QByteArray("bob"));
        QCOMPARE(b[column("duration_s")], QByteArray("9.000"));
        QCOMPARE(parsed->at(3)[column("name")], lines);  // CR and LF kept inside quotes
        QCOMPARE(lockscope::names::unescapeName(parsed->at(3)[column("name_escaped")]), std::optional<QByteArray>(lines));
        QCOMPARE(parsed->at(4)[column("name")], quotes);
        QCOMPARE(parsed->at(5)[column("name")], comma);
        QCOMPARE(parsed->at(5)[column("application")], QByteArray("app, with comma"));
        QCOMPARE(parsed->at(5)[column("mode")], QByteArray("exclusive"));
        // Times are UTC ISO 8601 with milliseconds.
        const QDateTime started = QDateTime::fromString(QString::fromUtf8(parsed->at(5)[column("started")]), Qt::ISODateWithMs);
        QVERIFY(started.isValid());
        QVERIFY(std::abs(started.toMSecsSinceEpoch() / 1000.0 - (now_ - 50)) < 0.002);
        QVERIFY(parsed->at(5)[column("started")].endsWith('Z'));
    }

    void csv_export_file_honours_the_filter_and_is_atomic() {
        const QString path = fileWith({hold("keep", 1, now_ - 10, now_ - 9), wait("drop", 2, now_ - 10, now_ - 8, {1})});
        const HistoryStore store(path, HistoryStore::Mode::readOnly);
        const QString out = dir_.filePath(QStringLiteral("export.csv"));
        QCOMPARE(store.exportCsvFile({.kind = Kind::hold}, out), qint64(1));
        QFile f(out);
        QVERIFY(f.open(QIODevice::ReadOnly));
        const auto parsed = parseCsv(f.readAll());
        QVERIFY(parsed);
        QCOMPARE(parsed->size(), 2);
        QCOMPARE(parsed->at(1)[1], QByteArray("keep"));
        // An unwritable target fails with a reason and leaves nothing behind.
        const QString bad = dir_.filePath(QStringLiteral("no-such-dir/export.csv"));
        QCOMPARE(store.exportCsvFile({}, bad), qint64(-1));
        QVERIFY(!store.errorString().isEmpty());
        QVERIFY(!QFileInfo::exists(bad));
    }

    void profile_file_names_are_safe_and_distinct() {
        const QStringList profiles = {QStringLiteral("prod/db:1"), QStringLiteral("prod_db_1"), QStringLiteral("prod db 1"),
                                      QStringLiteral(".."), QString(), QStringLiteral("Ünïcode ☃"),
                                      QString(200, QChar(u'x'))};
        QSet<QString> seen;
        for (const QString& p : profiles) {
            const QString name = HistoryStore::fileNameForProfile(p);
            QVERIFY2(QRegularExpression(QStringLiteral("^[A-Za-z0-9_-]{1,40}-[0-9a-f]{12}\\.sqlite$")).match(name).hasMatch(),
                     qPrintable(name));
            QCOMPARE(HistoryStore::fileNameForProfile(p), name);  // stable across runs
            seen.insert(name);
            const QString full = HistoryStore::pathForProfile(p);
            QVERIFY(full.startsWith(QStandardPaths::writableLocation(QStandardPaths::AppDataLocation) + QStringLiteral("/history/")));
            QVERIFY(full.endsWith(name));
        }
        QCOMPARE(seen.size(), profiles.size());
    }

    void bulk_insert_of_10k_holds_is_one_transaction() {
        std::vector<Record> rows;
        rows.reserve(10000);
        for (int i = 0; i < 10000; ++i)
            rows.push_back(hold("bulk." + QByteArray::number(i % 500), 1000 + i, now_ - 3000 + i * 0.1, now_ - 2000 + i * 0.1));
        HistoryStore store(freshPath());
        QElapsedTimer timer;
        timer.start();
        QVERIFY(store.insert(rows));
        const qint64 insertMs = timer.elapsed();
        QCOMPARE(store.count(Kind::hold), qint64(10000));
        timer.restart();
        const auto result = store.query({.text = QStringLiteral("bulk.42")});
        const qint64 queryMs = timer.elapsed();
        QCOMPARE(result.total, qint64(20 * 11));  // bulk.42 and bulk.420-429, 20 each
        qInfo("history: inserting 10,000 holds took %lld ms, a text query over them %lld ms", insertMs, queryMs);
    }

    // ---- HistoryModel ---------------------------------------------------------------------------

    void model_merges_refreshes_under_the_tester() {
        const QString path = fileWith({hold("m.one", 1, now_ - 100, now_ - 90), hold("m.two", 2, now_ - 80, now_ - 70)});
        HistoryModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        QSignalSpy refreshed(&model, &HistoryModel::refreshed);
        model.setDatabasePath(path);
        QTRY_COMPARE_WITH_TIMEOUT(model.rowCount(), 2, 5000);
        QCOMPARE(model.columnCount(), int(HistoryModel::columnCount_));
        QCOMPARE(model.index(0, HistoryModel::nameColumn).data().toString(), QStringLiteral("m.two"));
        QCOMPARE(model.index(0, HistoryModel::kindColumn).data().toString(), QStringLiteral("hold"));
        QCOMPARE(model.totalCount(), qint64(2));
        const QPersistentModelIndex kept(model.index(1, HistoryModel::pidColumn));
        QCOMPARE(kept.data().toInt(), 1);

        // New rows arrive: they are inserted at the top, the old ones stay (no reset).
        {
            HistoryStore writer(path);
            QVERIFY(writer.insert({wait("m.two", 3, now_ - 60, now_ - 50, {2}), hold("m.three", 4, now_ - 40, now_ - 30)}));
        }
        QSignalSpy resets(&model, &QAbstractItemModel::modelReset);
        QSignalSpy inserted(&model, &QAbstractItemModel::rowsInserted);
        model.refresh();
        QTRY_COMPARE_WITH_TIMEOUT(model.rowCount(), 4, 5000);
        QCOMPARE(resets.count(), 0);
        QCOMPARE(inserted.count(), 1);  // one contiguous block
        QVERIFY(kept.isValid());
        QCOMPARE(kept.row(), 3);
        QCOMPARE(kept.data().toInt(), 1);
        QCOMPARE(model.index(1, HistoryModel::waitedOnColumn).data().toString(), QStringLiteral("2"));
        QCOMPARE(model.index(1, HistoryModel::kindColumn).data().toString(), QStringLiteral("wait"));

        // A narrower filter removes rows; the one that still matches keeps its index.
        const QPersistentModelIndex three(model.index(0, HistoryModel::nameColumn));
        model.setFilter({.text = QStringLiteral("three")});
        QTRY_COMPARE_WITH_TIMEOUT(model.rowCount(), 1, 5000);
        QVERIFY(three.isValid());
        QCOMPARE(three.data().toString(), QStringLiteral("m.three"));
        QVERIFY(!kept.isValid());

        // A limit shows the newest rows and still counts all of them.
        model.setFilter({});
        model.setLimit(3);
        QTRY_VERIFY_WITH_TIMEOUT(model.rowCount() == 3 && model.totalCount() == 4 && !model.isRefreshing(), 5000);
        QCOMPARE(model.index(2, HistoryModel::nameColumn).data().toString(), QStringLiteral("m.two"));

        // Another file: a reset, then its rows.
        model.setDatabasePath(fileWith({hold("other", 9, now_ - 10, now_ - 5)}));
        QTRY_COMPARE_WITH_TIMEOUT(model.rowCount(), 1, 5000);
        QCOMPARE(model.index(0, HistoryModel::pidColumn).data().toInt(), 9);
        QVERIFY(refreshed.count() >= 4);
    }

    void model_shows_unknown_and_escaped_names() {
        Record unknown = hold("x", 1, now_ - 10, now_ - 9);
        unknown.name.reset();
        unknown.key = -77;
        Record pair = hold("x", 2, now_ - 8, now_ - 7);
        pair.name.reset();
        pair.intPair = true;
        pair.key = (qint64(-5) << 32) | 6;
        const QString path = fileWith({unknown, pair, hold(QByteArray("tab\there\xff", 9), 3, now_ - 6, now_ - 4.5)});
        HistoryModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        model.setWindow(3600.0);  // relative to each refresh
        model.setDatabasePath(path);
        QTRY_COMPARE_WITH_TIMEOUT(model.rowCount(), 3, 5000);
        QCOMPARE(model.index(0, HistoryModel::nameColumn).data().toString(), QStringLiteral("tab\\there\\xff"));
        QCOMPARE(model.index(0, HistoryModel::durationColumn).data().toString(), QStringLiteral("1.5s"));
        QCOMPARE(model.index(0, HistoryModel::durationColumn).data(HistoryModel::SortRole).toDouble(), 1.5);
        QCOMPARE(model.index(1, HistoryModel::nameColumn).data().toString(), QStringLiteral("(-5, 6) int4 pair"));
        QCOMPARE(model.index(2, HistoryModel::nameColumn).data().toString(), QStringLiteral("(unknown) -77"));
        QCOMPARE(model.index(2, HistoryModel::keyColumn).data().toString(), QStringLiteral("-77"));
        QCOMPARE(HistoryModel::formatDuration(0.25), QStringLiteral("250ms"));
        QCOMPARE(HistoryModel::formatDuration(125), QStringLiteral("2m5s"));
        QCOMPARE(HistoryModel::formatDuration(7260), QStringLiteral("2h1m"));
    }

    void model_exports_every_matching_row_off_thread() {
        std::vector<Record> rows;
        for (int i = 0; i < 50; ++i) rows.push_back(hold("export.all", 100 + i, now_ - 500 + i, now_ - 400 + i));
        rows.push_back(hold("export.other", 999, now_ - 10, now_ - 5));
        const QString path = fileWith(rows);
        HistoryModel model;
        model.setLimit(10);
        model.setFilter({.text = QStringLiteral("export.all")});
        model.setDatabasePath(path);
        QTRY_VERIFY_WITH_TIMEOUT(model.rowCount() == 10 && !model.isRefreshing(), 5000);
        QCOMPARE(model.totalCount(), qint64(50));
        QSignalSpy done(&model, &HistoryModel::exportFinished);
        const QString out = dir_.filePath(QStringLiteral("model-export.csv"));
        model.exportCsv(out);
        QTRY_COMPARE_WITH_TIMEOUT(done.count(), 1, 10000);
        QCOMPARE(done.at(0).at(1).toLongLong(), qint64(50));  // all matching rows, not the 10 shown
        QVERIFY(done.at(0).at(2).toString().isEmpty());
        QFile f(out);
        QVERIFY(f.open(QIODevice::ReadOnly));
        const auto parsed = parseCsv(f.readAll());
        QVERIFY(parsed);
        QCOMPARE(parsed->size(), 51);
    }

    // ---- HistoryRecorder ------------------------------------------------------------------------

    void recorder_writes_poll_results_on_its_thread() {
        const QString path = freshPath();
        const std::int64_t known = pglock::key_of("recorder.known");
        int lookups = 0;
        {
            HistoryRecorder recorder;
            recorder.setNamer(lockscope::catalogNamer([&](qint64 key) -> std::optional<QByteArray> {
                ++lookups;
                if (key == known) return QByteArray("recorder.known");
                return std::nullopt;
            }));
            QSignalSpy opened(&recorder, &HistoryRecorder::opened);
            QSignalSpy written(&recorder, &HistoryRecorder::written);
            recorder.open(path);
            QTRY_COMPARE_WITH_TIMEOUT(opened.count(), 1, 5000);
            QVERIFY(opened.at(0).at(1).toBool());
            QVERIFY(recorder.isOpen());

            pglock::monitor::Hold h;
            h.lock = {pglock::monitor::KeyForm::bigint, pglock::tag_of(known)};
            h.key = known;
            h.pid = 11;
            h.start = now_ - 5;
            h.end = now_ - 1;
            h.application_name = "svc";
            pglock::monitor::Hold h2 = h;  // the same key again: one lookup for both
            h2.pid = 12;
            pglock::monitor::Wait w;
            w.lock = {pglock::monitor::KeyForm::bigint, pglock::tag_of(77)};
            w.key = 77;
            w.pid = 13;
            w.start = now_ - 4;
            w.end = now_ - 2;
            w.blocked_by = {11, 12};
            pglock::monitor::Wait pairWait = w;  // an int4 pair is never looked up
            pairWait.lock.form = pglock::monitor::KeyForm::int_pair;
            pairWait.pid = 14;
            recorder.record(pollResult({h, h2}, {w, pairWait}));
            QTRY_COMPARE_WITH_TIMEOUT(written.count(), 1, 5000);
            QCOMPARE(written.at(0).at(0).toInt(), 2);
            QCOMPARE(written.at(0).at(1).toInt(), 2);
            QCOMPARE(lookups, 2);  // `known` once, 77 once

            // Retention set through the recorder is stored in the file.
            QSignalSpy retention(&recorder, &HistoryRecorder::retentionDaysChanged);
            recorder.setRetentionDays(3);
            QTRY_COMPARE_WITH_TIMEOUT(recorder.retentionDays(), 3, 5000);

            // Queued when the recorder goes away: still written before it closes the file.
            h.pid = 15;
            recorder.record(pollResult({h}, {}));
        }
        const auto rows = all(path).result.rows;
        QCOMPARE(rows.size(), std::size_t(5));
        QList<int> pids;
        for (const Record& r : rows) pids << r.pid;
        std::sort(pids.begin(), pids.end());
        QCOMPARE(pids, (QList<int>{11, 12, 13, 14, 15}));
        for (const Record& r : rows) {
            if (r.pid == 11) {
                QCOMPARE(r.name, std::optional<QByteArray>("recorder.known"));
                QCOMPARE(r.application, QStringLiteral("svc"));
                QCOMPARE(r.duration(), 4.0);
            }
            if (r.pid == 13) {
                QVERIFY(!r.name);
                QCOMPARE(r.kind, Kind::wait);
                QCOMPARE(r.waitedOn, (QList<int>{11, 12}));
            }
            if (r.pid == 14) QVERIFY(r.intPair);
        }
        QCOMPARE(HistoryStore(path).retentionDays(), 3);
    }

    void recorder_reports_a_file_it_cannot_open() {
        const QString blocker = dir_.filePath(QStringLiteral("a-file"));
        QFile f(blocker);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.close();
        HistoryRecorder recorder;
        QSignalSpy opened(&recorder, &HistoryRecorder::opened);
        recorder.open(blocker + QStringLiteral("/history.sqlite"));  // its directory is a file
        QTRY_COMPARE_WITH_TIMEOUT(opened.count(), 1, 5000);
        QVERIFY(!opened.at(0).at(1).toBool());
        QVERIFY(!opened.at(0).at(2).toString().isEmpty());
        QVERIFY(!recorder.isOpen());
    }

    void panel_shows_counts_and_follows_the_recorder() {
        const QString path = fileWith({hold("panel.a", 1, now_ - 100, now_ - 90), hold("panel.b", 2, now_ - 80, now_ - 70)});
        HistoryRecorder recorder;
        lockscope::history::HistoryPanel panel(&recorder);
        panel.show();
        QSignalSpy refreshed(panel.model(), &HistoryModel::refreshed);
        recorder.open(path);
        QTRY_COMPARE_WITH_TIMEOUT(panel.model()->rowCount(), 2, 5000);
        auto* status = panel.findChild<QLabel*>(QStringLiteral("historyStatus"));
        auto* search = panel.findChild<QLineEdit*>(QStringLiteral("historySearch"));
        QVERIFY(status && search);
        QTRY_VERIFY_WITH_TIMEOUT(status->text().contains(QStringLiteral("2 of 2")), 5000);
        search->setText(QStringLiteral("panel.b"));
        QTRY_COMPARE_WITH_TIMEOUT(panel.model()->rowCount(), 1, 5000);
        // A recorded poll shows up without anyone asking.
        pglock::monitor::Hold h;
        h.lock = {pglock::monitor::KeyForm::bigint, pglock::tag_of(5)};
        h.key = 5;
        h.pid = 3;
        h.start = now_ - 2;
        h.end = now_ - 1;
        recorder.setNamer(lockscope::catalogNamer([](qint64) { return std::optional<QByteArray>("panel.b2"); }));
        recorder.record(pollResult({h}, {}));
        QTRY_COMPARE_WITH_TIMEOUT(panel.model()->rowCount(), 2, 5000);
        QTRY_VERIFY_WITH_TIMEOUT(status->text().contains(QStringLiteral("2 of 2")), 5000);
        // The retention box sets the profile's retention through the recorder.
        auto* retention = panel.findChild<QSpinBox*>();
        QVERIFY(retention);
        QCOMPARE(retention->value(), HistoryStore::kDefaultRetentionDays);
        retention->setValue(30);
        QTRY_COMPARE_WITH_TIMEOUT(recorder.retentionDays(), 30, 5000);
    }

    // ---- the real server ------------------------------------------------------------------------

    // The poller's own session is killed three times during one hold: it reconnects each time and
    // sees the same holder (same pid, same backend_start, same mode) holding on. That is one hold
    // in the history, with the time the poller could not see it recorded, never four.
    void a_hold_survives_the_pollers_own_reconnects_as_one_row() {
        const auto dsn = pglock::test::test_dsn();
        QVERIFY2(dsn.has_value(), "no test server");
        const QByteArray name = "history.gap." + QUuid::createUuid().toByteArray(QUuid::WithoutBraces);
        const std::int64_t key = pglock::key_of(std::string_view(name.constData(), static_cast<std::size_t>(name.size())));
        const QString path = freshPath();
        const QString pollerApp = QStringLiteral("history-gap-poller-") + QUuid::createUuid().toString(QUuid::Id128).left(8);

        HistoryRecorder recorder;
        recorder.setNamer(lockscope::catalogNamer([&](qint64 k) -> std::optional<QByteArray> {
            if (k == key) return name;
            return std::nullopt;
        }));
        QSignalSpy opened(&recorder, &HistoryRecorder::opened);
        recorder.open(path);
        QTRY_COMPARE_WITH_TIMEOUT(opened.count(), 1, 5000);

        lockscope::Poller poller;
        poller.setInterval(250ms);
        connect(&poller, &lockscope::Poller::resultReady, &recorder, &HistoryRecorder::record);
        int polls = 0;
        connect(&poller, &lockscope::Poller::resultReady, this, [&](const PollResultPtr&) { ++polls; });

        pglock::test::PgConn holder(*dsn), killer(*dsn);
        QVERIFY(holder.ok() && killer.ok());
        const int holderPid = std::atoi(holder.one("SELECT pg_backend_pid()").c_str());
        holder.one("SELECT pg_advisory_lock(" + std::to_string(key) + ")");
        poller.start(QString::fromStdString(*dsn) + QStringLiteral(" application_name=") + pollerApp);
        const std::string kill = "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE application_name = '" +
                                 pollerApp.toStdString() + "'";
        for (int i = 0; i < 3; ++i) {
            const int before = polls;
            QTRY_VERIFY_WITH_TIMEOUT(polls >= before + 2, 15000);  // connected and polling again
            QCOMPARE(killer.one(kill), std::string("1"));
        }
        const int before = polls;
        QTRY_VERIFY_WITH_TIMEOUT(polls >= before + 2, 15000);
        holder.one("SELECT pg_advisory_unlock(" + std::to_string(key) + ")");

        std::vector<Record> rows;
        auto ended = [&] {
            rows = all(path, {.text = QString::fromUtf8(name), .kind = Kind::hold}).result.rows;
            return !rows.empty();
        };
        QTRY_VERIFY_WITH_TIMEOUT(ended(), 15000);
        QTest::qWait(600);  // two more polls: a split hold would have written its later parts by now
        rows = all(path, {.text = QString::fromUtf8(name), .kind = Kind::hold}).result.rows;
        QStringList got;
        for (const Record& r : rows) got << QStringLiteral("pid %1 %2..%3").arg(r.pid).arg(r.started, 0, 'f', 3).arg(r.ended, 0, 'f', 3);
        QVERIFY2(rows.size() == 1, qPrintable(QStringLiteral("one hold became %1 rows: %2").arg(rows.size()).arg(got.join(QStringLiteral("; ")))));
        QCOMPARE(rows.front().pid, holderPid);
        QVERIFY2(rows.front().unseen > 0, "the time the poller could not see the hold is not recorded");
        QVERIFY(rows.front().unseen < rows.front().duration());
    }

    void poller_and_recorder_store_a_real_hold_and_wait() {
        const auto dsn = pglock::test::test_dsn();
        QVERIFY2(dsn.has_value(), "no test server");
        const QByteArray name = "history.pg." + QUuid::createUuid().toByteArray(QUuid::WithoutBraces);
        const std::int64_t key = pglock::key_of(std::string_view(name.constData(), static_cast<std::size_t>(name.size())));
        const QString path = freshPath();

        HistoryRecorder recorder;
        recorder.setNamer(lockscope::catalogNamer([&](qint64 k) -> std::optional<QByteArray> {
            if (k == key) return name;
            return std::nullopt;
        }));
        QSignalSpy opened(&recorder, &HistoryRecorder::opened);
        recorder.open(path);
        QTRY_COMPARE_WITH_TIMEOUT(opened.count(), 1, 5000);
        QVERIFY(recorder.isOpen());

        lockscope::Poller poller;
        poller.setInterval(250ms);
        connect(&poller, &lockscope::Poller::resultReady, &recorder, &HistoryRecorder::record);
        int holderPid = 0, waiterPid = 0;
        bool sawWait = false, sawWaiterHold = false;
        connect(&poller, &lockscope::Poller::resultReady, this, [&](const PollResultPtr& r) {
            for (const auto& lock : r->snapshot->locks) {
                if (lock.key != key) continue;
                for (const auto& w : lock.waiters)
                    if (w.pid == waiterPid && std::count(w.blocked_by.begin(), w.blocked_by.end(), holderPid)) sawWait = true;
                for (const auto& h : lock.holders)
                    if (h.pid == waiterPid) sawWaiterHold = true;
            }
        });

        pglock::test::PgConn holder(*dsn), waiter(*dsn);
        QVERIFY(holder.ok() && waiter.ok());
        holder.one("SET application_name = 'history-test-holder'");
        waiter.one("SET application_name = 'history-test-waiter'");
        holderPid = std::atoi(holder.one("SELECT pg_backend_pid()").c_str());
        waiterPid = std::atoi(waiter.one("SELECT pg_backend_pid()").c_str());
        const std::string lockSql = "SELECT pg_advisory_lock(" + std::to_string(key) + ")";
        const std::string unlockSql = "SELECT pg_advisory_unlock(" + std::to_string(key) + ")";
        holder.one(lockSql);
        QVERIFY(PQsendQuery(waiter.c, lockSql.c_str()));  // blocks on the server until released
        poller.start(QString::fromStdString(*dsn));
        QTRY_VERIFY_WITH_TIMEOUT(sawWait, 15000);

        QCOMPARE(holder.one(unlockSql), std::string("t"));
        while (PGresult* r = PQgetResult(waiter.c)) {  // the waiter is granted
            QCOMPARE(PQresultStatus(r), PGRES_TUPLES_OK);
            PQclear(r);
        }
        // Released only once a poll saw the waiter holding, so that its hold is recorded too.
        QTRY_VERIFY_WITH_TIMEOUT(sawWaiterHold, 15000);
        QCOMPARE(waiter.one(unlockSql), std::string("t"));

        // The hold of the holder, the wait and the later hold of the waiter all reach the file.
        std::vector<Record> rows;
        auto allThree = [&] {
            rows = all(path, {.text = QString::fromUtf8(name)}).result.rows;
            return rows.size() == 3;
        };
        QTRY_VERIFY_WITH_TIMEOUT(allThree(), 15000);
        auto find = [&](Kind kind, int pid) -> const Record* {
            for (const Record& r : rows)
                if (r.kind == kind && r.pid == pid) return &r;
            return nullptr;
        };
        const Record* held = find(Kind::hold, holderPid);
        const Record* waited = find(Kind::wait, waiterPid);
        const Record* heldAfter = find(Kind::hold, waiterPid);
        QVERIFY(held && waited && heldAfter);
        for (const Record* r : {held, waited, heldAfter}) {
            QCOMPARE(r->name, std::optional<QByteArray>(name));
            QCOMPARE(r->key, qint64(key));
            QVERIFY(!r->intPair);
            QVERIFY(!r->user.isEmpty());
            QVERIFY(r->ended > r->started);
        }
        QCOMPARE(held->application, QStringLiteral("history-test-holder"));
        QCOMPARE(waited->application, QStringLiteral("history-test-waiter"));
        QVERIFY2(waited->waitedOn.contains(holderPid), "the wait does not name the holder it waited on");
        // The wait ends at the poll that first shows the waiter holding the lock.
        QCOMPARE(waited->ended, heldAfter->started);
        QVERIFY(waited->started <= held->ended);
    }
};

QTEST_MAIN(TestHistoryStore)
#include "test_history_store.moc"
