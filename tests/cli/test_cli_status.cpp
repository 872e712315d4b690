// `pglock status`: what an operator sees of held and awaited locks, with names from a text or
// SQLite catalog, as text and as JSON, once or with --watch. Holders and waiters are plain libpq
// sessions, the way other programs on the server would hold them.
#include <sqlite3.h>

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QSet>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QRandomGenerator>
#include <QTemporaryDir>
#include <QUuid>
#include <QtTest>

#include <csignal>

#include "cli_test_support.hpp"
#include "pglock/conninfo.hpp"
#include "pglock/catalog_format.hpp"
#include "pglock/key_schemes.hpp"
#include "pglock/lock.hpp"

using namespace clitest;

namespace {

// The test DSN with an application_name, so the CLI's own session can be found.
QString dsn_with_app(const QString& app) {
    const QString d = dsn();
    if (d.startsWith("postgres")) return d + (d.contains('?') ? "&" : "?") + "application_name=" + app;
    return d + " application_name=" + app;
}

QString write_file(const QTemporaryDir& dir, const QString& file, const QByteArray& content) {
    const QString path = dir.filePath(file);
    QFile f(path);
    if (!f.open(QIODevice::WriteOnly) || f.write(content) != content.size()) throw std::runtime_error("cannot write " + path.toStdString());
    return path;
}

// A lockscope SQLite catalog with the app's schema. Each row: (name, stored key).
QString write_sqlite_catalog(const QTemporaryDir& dir, const std::vector<std::pair<QByteArray, qint64>>& rows) {
    const QString path = dir.filePath("catalog.sqlite");
    sqlite3* db = nullptr;
    if (sqlite3_open(path.toUtf8().constData(), &db) != SQLITE_OK) throw std::runtime_error("sqlite3_open");
    std::unique_ptr<sqlite3, decltype(&sqlite3_close)> owner(db, &sqlite3_close);
    const std::string schema = std::string(pglock::catalog_format::create_table) + ";" +
                               std::string(pglock::catalog_format::create_index) + ";";
    if (sqlite3_exec(db, schema.c_str(), nullptr, nullptr, nullptr) != SQLITE_OK) throw std::runtime_error(sqlite3_errmsg(db));
    for (const auto& [name, key] : rows) {
        sqlite3_stmt* st = nullptr;
        sqlite3_prepare_v2(db, "INSERT INTO names (name, key, added_at) VALUES (?, ?, datetime('now'))", -1, &st, nullptr);
        sqlite3_bind_blob(st, 1, name.constData(), int(name.size()), SQLITE_TRANSIENT);
        sqlite3_bind_int64(st, 2, key);
        const int rc = sqlite3_step(st);
        sqlite3_finalize(st);
        if (rc != SQLITE_DONE) throw std::runtime_error(sqlite3_errmsg(db));
    }
    return path;
}

// The text line of a lock in `status` output ("key=K name=N form=bigint ...").
QString lock_line(const QByteArray& out, std::int64_t key) {
    for (const QByteArray& line : out.split('\n'))
        if (line.startsWith("key=" + QByteArray::number(qint64(key)) + " ")) return QString::fromUtf8(line);
    return {};
}

QJsonObject find_json_lock(const QJsonArray& locks, std::int64_t key) {
    for (const auto& v : locks) {
        const QJsonObject o = v.toObject();
        if (o["form"].toString() == "bigint" && o["key"].toInteger() == key) return o;
    }
    return {};
}


// The test DSN over TCP: a socket directory becomes 127.0.0.1 (tests/pg/cluster listens there on
// the same port); every other keyword is kept. Empty when the DSN cannot be parsed.
QString tcp_dsn(const QString& conninfo) {
    char* err = nullptr;
    PQconninfoOption* opts = PQconninfoParse(conninfo.toUtf8().constData(), &err);
    if (!opts) {
        PQfreemem(err);
        return {};
    }
    QStringList parts;
    for (PQconninfoOption* o = opts; o->keyword; ++o) {
        if (!o->val || !*o->val) continue;
        QString value = QString::fromUtf8(o->val);
        if (qstrcmp(o->keyword, "host") == 0 && value.startsWith('/')) value = QStringLiteral("127.0.0.1");
        value.replace('\\', "\\\\").replace('\'', "\\'");
        parts << QString("%1='%2'").arg(QString::fromUtf8(o->keyword), value);
    }
    PQconninfoFree(opts);
    return parts.join(' ');
}

// The kernel's timer of each TCP socket that process `pid` has open, from /proc/net/tcp{,6}:
// the "tr" field (0 none, 1 retransmit, 2 keepalive, ...) and its expiry in clock ticks.
struct SocketTimer {
    int kind = 0;
    long ticks = 0;
};
std::vector<SocketTimer> tcp_timers_of(qint64 pid) {
    QSet<QString> inodes;
    const QDir fds(QString("/proc/%1/fd").arg(pid));
    for (const QFileInfo& fd : fds.entryInfoList(QDir::Files | QDir::System | QDir::NoDotAndDotDot)) {
        const QString target = fd.symLinkTarget().section('/', -1);
        if (target.startsWith("socket:[")) inodes.insert(target.mid(8).chopped(1));
    }
    std::vector<SocketTimer> timers;
    for (const char* table : {"/proc/net/tcp", "/proc/net/tcp6"}) {
        QFile f(QString::fromLatin1(table));
        if (!f.open(QIODevice::ReadOnly)) continue;
        for (const QByteArray& line : f.readAll().split('\n')) {
            // sl local rem st tx:rx tr:when retrnsmt uid timeout inode ...
            const QList<QByteArray> cols = line.simplified().split(' ');
            if (cols.size() < 10 || !inodes.contains(QString::fromLatin1(cols[9]))) continue;
            const QList<QByteArray> timer = cols[5].split(':');
            if (timer.size() == 2) timers.push_back({timer[0].toInt(nullptr, 16), timer[1].toLong(nullptr, 16)});
        }
    }
    return timers;
}
}  // namespace

class TestCliStatus : public QObject {
    Q_OBJECT
    QTemporaryDir dir_;

private slots:
    void initTestCase() { QVERIFY(dir_.isValid()); }

    void text_names_catalogued_and_unknown_locks() {
        const QString known = unique_name("status.known");
        const QString stranger = unique_name("status.stranger");
        const auto k1 = key_of(known), k2 = key_of(stranger);
        // Comments, blank lines and CRLF line ends are part of the format.
        const QString catalog = write_file(dir_, "names.txt",
                                           "# a comment\n\n   \n  # an indented comment\nsome.other-name\r\n" +
                                               known.toUtf8() + "\r\n");
        RawConn a(dsn());
        a.lock(k1);
        a.lock(k2);
        const auto r = run({"status", "--catalog", catalog, "--dsn", dsn()});
        QVERIFY2(r.code == 0, r.err.constData());
        QVERIFY2(r.out.startsWith("PostgreSQL 1"), r.out.constData());
        const QString l1 = lock_line(r.out, k1), l2 = lock_line(r.out, k2);
        QVERIFY2(l1.contains(" name=" + known + " form=bigint"), r.out.constData());
        QVERIFY2(l2.contains(" name=unknown form=bigint"), r.out.constData());
        const auto tag = pglock::tag_of(k1);
        QVERIFY(l1.contains(QString(" classid=%1 objid=%2").arg(tag.classid).arg(tag.objid)));
        // The holder line under it: pid, mode, state.
        QVERIFY2(r.out.contains(QString("  holder pid=%1 mode=exclusive state=idle ").arg(a.pid()).toUtf8()),
                 r.out.constData());
        QVERIFY(a.unlock(k1));
        QVERIFY(a.unlock(k2));
        // Without --catalog every name is unknown.
        a.lock(k1);
        const auto plain = run({"status", "--dsn", dsn()});
        QCOMPARE(plain.code, 0);
        QVERIFY2(lock_line(plain.out, k1).contains(" name=unknown "), plain.out.constData());
        QVERIFY(a.unlock(k1));
    }

    // A key in no catalog, held through the library over TCP: `status` names it from the holder's
    // application_name (checked against the key) and shows who the holder is beside its pid; a
    // name cut to fit application_name stays unknown, with its prefix shown apart.
    void holder_identity_names_uncatalogued_keys() {
        pglock::PoolOptions po;
        po.overrides = {{"application_name", "cli-worker"}, {"host", "127.0.0.1"}};
        pglock::Pool pool(dsn().toStdString(), po);
        const std::string name = "status." + QUuid::createUuid().toString(QUuid::Id128).left(10).toStdString();
        const std::string long_name = "status.long." + QUuid::createUuid().toString(QUuid::Id128).toStdString() +
                                      QUuid::createUuid().toString(QUuid::Id128).toStdString();
        pglock::Lock lock(pool, name), cut(pool, long_name);
        pglock::Guard g = lock.acquire();
        pglock::Guard gc = cut.acquire();

        const auto r = run({"status", "--dsn", dsn()});
        QVERIFY2(r.code == 0, r.err.constData());
        const QString line = lock_line(r.out, lock.key());
        QVERIFY2(line.contains(" name=" + QString::fromStdString(name) + " from=holder form=bigint"), r.out.constData());
        const QString holder = QString("  holder pid=%1 mode=exclusive state=idle app=\"cli-worker pglock:%2\" user=")
                                   .arg(g.backend_pid())
                                   .arg(QString::fromStdString(name));
        QVERIFY2(r.out.contains(holder.toUtf8()), r.out.constData());
        QVERIFY2(r.out.contains(QString("  holder pid=%1 ").arg(g.backend_pid()).toUtf8() + "") &&
                     r.out.contains(" client=127.0.0.1 "),
                 r.out.constData());
        const QString cut_line = lock_line(r.out, cut.key());
        QVERIFY2(cut_line.contains(" name=unknown holder_prefix=status.long."), r.out.constData());
        QVERIFY2(cut_line.contains(QStringLiteral("\u2026 form=bigint")), r.out.constData());

        const auto j = run({"status", "--json", "--dsn", dsn()});
        QVERIFY2(j.code == 0, j.err.constData());
        const QJsonArray locks = QJsonDocument::fromJson(j.out).object()["locks"].toArray();
        const QJsonObject o = find_json_lock(locks, lock.key());
        QCOMPARE(o["name"].toString(), QString::fromStdString(name));
        QCOMPARE(o["name_source"].toString(), QStringLiteral("holder"));
        const QJsonObject h = o["holders"].toArray().at(0).toObject();
        QCOMPARE(h["client_addr"].toString(), QStringLiteral("127.0.0.1"));
        QVERIFY(h.contains("client_hostname"));
        const QJsonObject c = find_json_lock(locks, cut.key());
        QVERIFY(c["name"].isNull());
        QVERIFY(c["name_source"].isNull());
        QVERIFY(QString::fromStdString(long_name).startsWith(c["holder_name_prefix"].toString()));
        QVERIFY(c["holder_name_prefix"].toString().size() > 12);
    }

    // No catalog: a Rails migration lock of this database, taken as Rails takes it, is named from
    // the database name; an idle holder with a waiter carries its orphan evidence.
    void context_names_and_orphan_evidence() {
        RawConn db(dsn());
        const std::string database = db.scalar("SELECT current_database()");
        pglock::SchemeContext ctx;
        ctx.database = database;
        const std::int64_t rails = pglock::scheme_key("rails-migration", std::nullopt, ctx).packed;
        RawConn migrator(dsn());
        QCOMPARE(migrator.scalar("SELECT pg_try_advisory_lock(" + std::to_string(rails) + ")"), std::string("t"));

        const QString orphan = unique_name("status.orphan");
        RawConn holder(dsn());
        holder.query("SET application_name = 'forgotten-job'");
        holder.lock(key_of(orphan));
        AsyncConn waiter(dsn());
        waiter.send("SELECT pg_advisory_lock(" + std::to_string(key_of(orphan)) + ")");
        QVERIFY(eventually([&] { return holder.waiting_count(key_of(orphan)) == 1; }));

        const auto r = run({"status", "--orphan-idle", "10ms", "--dsn", dsn()});
        QVERIFY2(r.code == 0, r.err.constData());
        const QString line = lock_line(r.out, rails);
        QVERIFY2(line.contains(QString(" name=\"Rails migration lock for database %1\" from=context scheme=rails-migration form=bigint")
                                   .arg(QString::fromStdString(database))),
                 r.out.constData());
        QVERIFY2(r.out.contains(QString("  holder pid=%1 ").arg(holder.pid()).toUtf8()), r.out.constData());
        QVERIFY2(r.out.contains(" orphan?=idle_holder held=-\n    evidence: idle (not in a transaction) for "), r.out.constData());

        const auto j = run({"status", "--json", "--orphan-idle", "10ms", "--dsn", dsn()});
        QVERIFY2(j.code == 0, j.err.constData());
        const QJsonArray locks = QJsonDocument::fromJson(j.out).object()["locks"].toArray();
        const QJsonObject m = find_json_lock(locks, rails);
        QCOMPARE(m["name_source"].toString(), QStringLiteral("context"));
        QCOMPARE(m["name_scheme"].toString(), QStringLiteral("rails-migration"));
        QCOMPARE(m["name"].toString(), QString("Rails migration lock for database %1").arg(QString::fromStdString(database)));
        QVERIFY(m["holders"].toArray().at(0).toObject()["orphan_evidence"].toArray().isEmpty());
        const QJsonObject o = find_json_lock(locks, key_of(orphan));
        const QJsonArray evidence = o["holders"].toArray().at(0).toObject()["orphan_evidence"].toArray();
        QCOMPARE(evidence.size(), 1);
        QCOMPARE(evidence.at(0).toObject()["sign"].toString(), QStringLiteral("idle_holder"));
        QVERIFY2(evidence.at(0).toObject()["evidence"].toString().contains("while 1 session waits"), j.out.constData());

        // A bad threshold is a usage error, before any connection.
        QCOMPARE(run({"status", "--orphan-idle", "soon", "--dsn", dsn()}).code, 2);
    }

    void json_has_the_documented_fields() {
        const QString held = unique_name("status.json.held");
        const QString shared = unique_name("status.json.shared");
        const QString stranger = unique_name("status.json.stranger");
        const auto k1 = key_of(held), k2 = key_of(shared), k3 = key_of(stranger);
        const int p1 = -int(QRandomGenerator::global()->bounded(1, 1 << 30));
        const int p2 = int(QRandomGenerator::global()->bounded(1, 1 << 30));
        const QString catalog = write_file(dir_, "json.txt", (held + "\n" + shared + "\n").toUtf8());

        RawConn a(dsn()), c(dsn()), d(dsn());
        a.query("SET application_name = 'status-json-holder'");
        a.lock(k1);
        a.lock(k3);
        AsyncConn b(dsn());
        b.send("SELECT pg_advisory_lock(" + std::to_string(k1) + ")");
        c.scalar("SELECT pg_try_advisory_lock_shared($1::bigint)", {std::to_string(k2)});
        d.scalar("SELECT pg_try_advisory_lock_shared($1::bigint)", {std::to_string(k2)});
        c.query("SELECT pg_advisory_lock($1::int4, $2::int4)", {std::to_string(p1), std::to_string(p2)});
        QVERIFY(eventually([&] { return a.waiting_count(k1) == 1; }));

        // A waiter's waitstart may still be NULL for a moment after its wait began.
        QJsonObject top, l1;
        QVERIFY(eventually([&] {
            const auto r = run({"status", "--json", "--catalog", catalog, "--dsn", dsn()});
            if (r.code != 0 || r.out.count('\n') != 1) return false;
            QJsonParseError err{};
            const auto doc = QJsonDocument::fromJson(r.out, &err);
            if (err.error != QJsonParseError::NoError || !doc.isObject()) return false;
            top = doc.object();
            l1 = find_json_lock(top["locks"].toArray(), k1);
            return !l1.isEmpty() && l1["waiters"].toArray().size() == 1 &&
                   l1["waiters"].toArray()[0].toObject()["wait_start"].isDouble();
        }));

        QVERIFY(top["server_version"].toInteger() >= 140000);
        QVERIFY(top["in_recovery"].isBool() && !top["in_recovery"].toBool());
        // The server the poll reached: the test server's host (its socket directory) and port.
        const auto options = pglock::conninfo_options(dsn().toStdString());
        QVERIFY(options.has_value());
        for (const auto& o : *options) {
            if (o.keyword == "host" && !o.value.empty()) QCOMPARE(top["host"].toString().toStdString(), o.value);
            if (o.keyword == "port" && !o.value.empty()) QCOMPARE(top["port"].toInteger(), std::stoll(o.value));
        }
        QVERIFY(top["host"].isString() && !top["host"].toString().isEmpty());
        QVERIFY(top["port"].toInteger() > 0);
        QVERIFY(top["server_now"].toDouble() > 1.6e9);
        QVERIFY(top["latency_ms"].isDouble() && top["latency_ms"].toDouble() > 0);
        const QJsonArray locks = top["locks"].toArray();

        // The held lock, its holder and its waiter.
        QCOMPARE(l1["form"].toString(), QString("bigint"));
        QCOMPARE(l1["key"].toInteger(), qint64(k1));  // exact: 64-bit keys survive as integers
        QCOMPARE(l1["classid"].toInteger(), qint64(pglock::tag_of(k1).classid));
        QCOMPARE(l1["objid"].toInteger(), qint64(pglock::tag_of(k1).objid));
        QCOMPARE(l1["name"].toString(), held);
        QVERIFY(!l1.contains("pair"));
        const QJsonArray holders = l1["holders"].toArray();
        QCOMPARE(holders.size(), 1);
        const QJsonObject h = holders[0].toObject();
        QCOMPARE(h["pid"].toInt(), a.pid());
        QCOMPARE(h["mode"].toString(), QString("exclusive"));
        QCOMPARE(h["state"].toString(), QString("idle"));
        QCOMPARE(h["application_name"].toString(), QString("status-json-holder"));
        QVERIFY(h["usename"].isString() && !h["usename"].toString().isEmpty());
        QVERIFY(h.contains("client_addr") && (h["client_addr"].isNull() || h["client_addr"].isString()));
        QVERIFY(h.contains("held_for_s") && h["held_for_s"].isNull());  // one poll: first seen now
        const QJsonObject w = l1["waiters"].toArray()[0].toObject();
        QCOMPARE(w["pid"].toInt(), b.pid());
        QCOMPARE(w["mode"].toString(), QString("exclusive"));
        QVERIFY(w["wait_start"].toDouble() <= top["server_now"].toDouble());
        QCOMPARE(w["blocked_by"].toArray(), QJsonArray{a.pid()});
        // pg_advisory_lock waits inside a statement that keeps its snapshot: backend_xmin is set.
        QVERIFY2(w["xmin_age"].isDouble() && w["xmin_age"].toInteger() >= 0, qPrintable(QJsonDocument(w).toJson()));
        QVERIFY2(w["pins_xmin_s"].isDouble() && w["pins_xmin_s"].toDouble() >= 0, qPrintable(QJsonDocument(w).toJson()));
        // The text form of the same waiter.
        const auto text = run({"status", "--dsn", dsn()});
        const QRegularExpression waiter_line(QString("\\n  waiter pid=%1 mode=exclusive app=\\S* waiting=[0-9.]+m?s "
                                                     "pins_xmin=[0-9.]+m?s blocked_by=%2\\n").arg(b.pid()).arg(a.pid()));
        QVERIFY2(waiter_line.match(QString::fromUtf8(text.out)).hasMatch(), text.out.constData());

        // The shared lock with two holders.
        const QJsonObject l2 = find_json_lock(locks, k2);
        QCOMPARE(l2["name"].toString(), shared);
        QCOMPARE(l2["holders"].toArray().size(), 2);
        for (const auto& v : l2["holders"].toArray()) QCOMPARE(v.toObject()["mode"].toString(), QString("shared"));

        // Not in the catalog: name null.
        const QJsonObject l3 = find_json_lock(locks, k3);
        QVERIFY(!l3.isEmpty());
        QVERIFY(l3["name"].isNull());

        // The int4 pair: its own form, the pair, no key and no name.
        QJsonObject pair;
        for (const auto& v : locks) {
            const QJsonObject o = v.toObject();
            if (o["form"].toString() == "int_pair" && o["pair"].toArray() == QJsonArray{p1, p2}) pair = o;
        }
        QVERIFY2(!pair.isEmpty(), "the int4-pair lock is missing");
        QVERIFY(pair["key"].isNull());
        QVERIFY(pair["name"].isNull());
        QCOMPARE(pair["classid"].toInteger(), qint64(std::uint32_t(p1)));
        QCOMPARE(pair["objid"].toInteger(), qint64(p2));

        QVERIFY(a.unlock(k1));
        QVERIFY(b.finish());
        QCOMPARE(c.scalar("SELECT pg_advisory_unlock($1::int4, $2::int4)", {std::to_string(p1), std::to_string(p2)}),
                 std::string("t"));
    }

    void sqlite_catalog_keys_are_rederived_from_names() {
        const QString known = unique_name("status.sqlite.known");
        const QString stranger = unique_name("status.sqlite.stranger");
        const auto k1 = key_of(known), k2 = key_of(stranger);
        // The stored keys are wrong on purpose: "known" stores 42, and a decoy stores the key of
        // the stranger. Only names count.
        const QString catalog = write_sqlite_catalog(dir_, {{known.toUtf8(), 42}, {"decoy.name", qint64(k2)}});
        {
            QFile f(catalog);
            QVERIFY(f.open(QIODevice::ReadOnly));
            QCOMPARE(f.read(16), QByteArray("SQLite format 3\0", 16));
        }
        RawConn a(dsn());
        a.lock(k1);
        a.lock(k2);
        const auto r = run({"status", "--catalog", catalog, "--dsn", dsn()});
        QVERIFY2(r.code == 0, r.err.constData());
        QVERIFY2(lock_line(r.out, k1).contains(" name=" + known + " "), r.out.constData());
        QVERIFY2(lock_line(r.out, k2).contains(" name=unknown "), r.out.constData());
        QVERIFY2(!r.out.contains("decoy.name"), r.out.constData());
        QVERIFY(a.unlock(k1));
        QVERIFY(a.unlock(k2));
    }

    void bad_catalogs_fail_with_one_line() {
        QByteArray junk(4096, '\0');
        for (auto& c : junk) c = char(QRandomGenerator::global()->bounded(256));
        junk[10] = '\0';
        const QString junk_path = write_file(dir_, "junk.bin", junk);
        const QString not_catalog = dir_.filePath("other.sqlite");
        {
            sqlite3* db = nullptr;
            QCOMPARE(sqlite3_open(not_catalog.toUtf8().constData(), &db), SQLITE_OK);
            QCOMPARE(sqlite3_exec(db, "CREATE TABLE t (x)", nullptr, nullptr, nullptr), SQLITE_OK);
            sqlite3_close(db);
        }
        for (const QString& path : {junk_path, dir_.filePath("missing.txt"), not_catalog, dir_.path()}) {
            // No server is needed to refuse a catalog: the file is read first.
            const auto r = run({"status", "--catalog", path, "--dsn", dsn()});
            QVERIFY2(r.code == 1, qPrintable(path + ": " + QString::fromUtf8(r.err)));
            QVERIFY2(clean_one_line_error(r.err), r.err.constData());
            QVERIFY2(r.err.contains("catalog " + path.toUtf8()), r.err.constData());
            QVERIFY(r.out.isEmpty());
        }
    }

    void watch_polls_on_one_session_and_exits_0_on_sigterm() {
        const QString name = unique_name("status.watch");
        const QString app = unique_name("status-watch-app");
        const auto key = key_of(name);
        RawConn a(dsn()), obs(dsn());
        a.lock(key);
        Cli cli({"status", "--watch", "0.25s", "--dsn", dsn_with_app(app)});
        // At least three polls: the first shows held=- (first seen), later ones a duration.
        QVERIFY2(eventually([&] { return cli.out().count("PostgreSQL ") >= 3 || !cli.running(); }, 15000),
                 (cli.out() + cli.err()).constData());
        QVERIFY2(cli.running(), cli.err().constData());
        // One dedicated monitor session for every poll.
        QCOMPARE(obs.scalar("SELECT count(*) FROM pg_stat_activity WHERE application_name = $1", {app.toStdString()}),
                 std::string("1"));
        QCOMPARE(::kill(pid_t(cli.pid()), SIGTERM), 0);
        QVERIFY(cli.wait_finished(10000));
        QVERIFY(!cli.crashed());
        QVERIFY2(cli.exit_code() == 0, cli.err().constData());
        QVERIFY2(cli.err().isEmpty(), cli.err().constData());

        // Not a tty: plain snapshots separated by a blank line, no escape sequences.
        const QByteArray out = cli.out();
        QVERIFY(!out.contains('\x1b'));
        const QList<QByteArray> lines = out.split('\n');
        QVERIFY(out.contains("\n\nPostgreSQL "));
        const QString holder = QString("holder pid=%1 ").arg(a.pid());
        QStringList held;  // the held= of our holder, poll by poll
        for (const QByteArray& line : lines)
            if (QString::fromUtf8(line).contains(holder)) held << QString::fromUtf8(line).section("held=", 1);
        QVERIFY2(held.size() >= 3, out.constData());
        QCOMPARE(held[0], QString("-"));
        QVERIFY2(QRegularExpression("^[0-9.]+(ms|s)$").match(held[2]).hasMatch(), qPrintable(held.join(" | ")));
        QVERIFY(a.unlock(key));
    }

    // `status --watch` keeps one session for hours: over TCP it must carry the pool's keepalives
    // (first probe after 10 s idle). libpq alone turns keepalives on with the kernel's idle time,
    // 2 h, so a silently cut network would leave a poll waiting that long. Checked on the CLI's
    // own socket, where the kernel shows the keepalive timer and when it fires.
    void watch_session_has_tcp_keepalives() {
        const QString over_tcp = tcp_dsn(dsn());
        if (over_tcp.isEmpty() || !over_tcp.contains("host='127.0.0.1'")) QSKIP("the test server is not on this host");
        Cli cli({"status", "--watch", "0.5s", "--dsn", over_tcp});
        QVERIFY2(eventually([&] { return cli.out().count("PostgreSQL ") >= 1 || !cli.running(); }, 15000),
                 (cli.out() + cli.err()).constData());
        QVERIFY2(cli.running(), cli.err().constData());
        // Between polls the socket is idle and its only timer is the keepalive one; sample until
        // one look lands in such a gap (during a poll the timer may be the retransmit one).
        std::vector<SocketTimer> seen;
        const bool keepalive = eventually([&] {
            seen = tcp_timers_of(cli.pid());
            for (const SocketTimer& t : seen)
                if (t.kind == 2) return true;
            return false;
        }, 5000);
        QString timers;
        for (const SocketTimer& t : seen) timers += QString("tr=%1 when=%2; ").arg(t.kind).arg(t.ticks);
        QVERIFY2(keepalive, qPrintable("no keepalive timer on the CLI's TCP sockets: " + timers));
        for (const SocketTimer& t : seen)  // idle 10 s in clock ticks (100/s); without the pool's: 720,000
            if (t.kind == 2) QVERIFY2(t.ticks <= 10 * 100 + 50, qPrintable(timers));
        QCOMPARE(::kill(pid_t(cli.pid()), SIGTERM), 0);
        QVERIFY(cli.wait_finished(10000));
        QVERIFY2(cli.exit_code() == 0, cli.err().constData());
    }

    void watch_json_is_one_object_per_poll() {
        const QString name = unique_name("status.watch.json");
        const auto key = key_of(name);
        RawConn a(dsn());
        a.lock(key);
        Cli cli({"status", "--json", "--watch", "0.25", "--dsn", dsn()});
        QVERIFY(eventually([&] { return cli.out().count('\n') >= 3 || !cli.running(); }, 15000));
        QCOMPARE(::kill(pid_t(cli.pid()), SIGINT), 0);
        QVERIFY(cli.wait_finished(10000));
        QCOMPARE(cli.exit_code(), 0);
        QList<QByteArray> lines = cli.out().split('\n');
        QVERIFY(lines.last().isEmpty());
        lines.removeLast();
        QVERIFY(lines.size() >= 3);
        std::vector<QJsonValue> held;
        double last_now = 0;  // each line a new poll: no frame repeats an earlier one
        for (const QByteArray& line : lines) {
            const auto doc = QJsonDocument::fromJson(line);
            QVERIFY2(doc.isObject(), line.constData());
            const double now = doc.object()["server_now"].toDouble();
            QVERIFY2(now > last_now, line.left(200).constData());
            last_now = now;
            const QJsonObject l = find_json_lock(doc.object()["locks"].toArray(), key);
            QVERIFY(!l.isEmpty());
            held.push_back(l["holders"].toArray()[0].toObject()["held_for_s"]);
        }
        QVERIFY(held[0].isNull());
        QVERIFY(held[2].isDouble() && held[2].toDouble() > 0);
        QVERIFY(held[2].toDouble() > held[1].toDouble());
        QVERIFY(a.unlock(key));
    }

    // SIGPIPE is taken by the CLI's signal watcher, so a write to a closed pipe fails with EPIPE
    // instead of killing the process: --watch must notice and end, not poll for nobody. Run in a
    // process group of its own, killed whole if it is not over within the deadline.
    void watch_ends_when_its_output_is_closed() {
        QProcess sh;
        sh.setProgram(QStringLiteral("/bin/bash"));
        sh.setArguments({"-c", "\"$0\" status --watch 0.25s --dsn \"$1\" | head -1; echo \"status ${PIPESTATUS[*]}\" >&2",
                         cli_path(), dsn()});
        sh.setChildProcessModifier([] { ::setpgid(0, 0); });
        sh.start();
        QVERIFY(sh.waitForStarted(5000));
        const qint64 group = sh.processId();
        const bool ended = sh.waitForFinished(15000);
        if (!ended) {
            ::kill(-pid_t(group), SIGKILL);
            sh.waitForFinished(5000);
        }
        const QByteArray out = sh.readAllStandardOutput(), err = sh.readAllStandardError();
        QVERIFY2(ended, ("still watching 15 s after head left; stdout [" + out + "], stderr [" + err + "]").constData());
        QVERIFY2(out.startsWith("PostgreSQL "), out.constData());
        QCOMPARE(err, QByteArray("status 1 0\n"));  // pglock: 1, quietly; head: 0
    }

    void watch_interval_bounds_are_usage_errors() {
        QCOMPARE(run({"status", "--watch", "0.1s", "--dsn", dsn()}).code, 2);
        QCOMPARE(run({"status", "--watch", "61s", "--dsn", dsn()}).code, 2);
        QCOMPARE(run({"status", "--watch", "soon", "--dsn", dsn()}).code, 2);
    }
};

QTEST_GUILESS_MAIN(TestCliStatus)
#include "test_cli_status.moc"
