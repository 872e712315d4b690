// `pglock status --metrics-url`: what an application believes it holds (its lock_held_info)
// against what the server holds, end to end: a real process using the library serves its
// metrics, its lock is lost while its lost-lock notice is held back (a ghost), and a lock is
// taken on its other guard's session behind the guard's back (a leak).
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QtTest>

#include "claims_holder_process.hpp"
#include "cli_test_support.hpp"

using namespace clitest;

namespace {

QJsonObject app_metrics(const Run& r) {
    const auto doc = QJsonDocument::fromJson(r.out);
    const auto apps = doc.object()["app_metrics"].toArray();
    return apps.size() == 1 ? apps[0].toObject() : QJsonObject{};
}

// The lock object of `key` in status --json, empty when the poll shows no such lock.
QJsonObject lock_of(const Run& r, qint64 key) {
    for (const auto& l : QJsonDocument::fromJson(r.out).object()["locks"].toArray())
        if (l.toObject()["key"].toInteger() == key) return l.toObject();
    return {};
}

}  // namespace

class TestCliClaims : public QObject {
    Q_OBJECT

private slots:
    void ghost_and_leak_end_to_end() {
        try {
            const QString name = unique_name("claims");
            pglock::test::ClaimsHolder holder(QStringLiteral(PGLOCK_CLAIMS_HOLDER_PATH), dsn(), name);
            const QString url = holder.url();
            const int ghost_pid = holder.ghostPid();
            const int leak_pid = holder.leakPid();

            // Believed and held agree: no ghost, no leak.
            Run r = run({"--dsn", dsn(), "status", "--json", "--metrics-url", url});
            QCOMPARE(r.code, 0);
            QJsonObject app = app_metrics(r);
            QVERIFY2(!app.isEmpty(), r.out.constData());
            QCOMPARE(app["url"].toString(), url);
            QVERIFY2(app["error"].isNull(), r.out.constData());
            QCOMPARE(app["claimed"].toInt(), 2);
            QVERIFY2(app["ghosts"].toArray().isEmpty() && app["leaks"].toArray().isEmpty(), r.out.constData());
            // Per lock too: a claims list, empty.
            const QJsonObject held = lock_of(r, key_of(name + ".leak"));
            QVERIFY2(held["claims"].isArray() && held["claims"].toArray().isEmpty(), r.out.constData());

            holder.lease();
            RawConn admin(dsn());
            QCOMPARE(admin.scalar("SELECT pg_terminate_backend($1::int)", {std::to_string(ghost_pid)}), std::string("t"));
            QVERIFY(eventually([&] {
                return admin.scalar("SELECT count(*) FROM pg_stat_activity WHERE pid = $1::int",
                                    {std::to_string(ghost_pid)}) == "0";
            }));

            r = run({"--dsn", dsn(), "status", "--json", "--metrics-url", url});
            QCOMPARE(r.code, 0);
            app = app_metrics(r);
            const QJsonArray ghosts = app["ghosts"].toArray();
            const QJsonArray leaks = app["leaks"].toArray();
            QVERIFY2(ghosts.size() == 1 && leaks.size() == 1, r.out.constData());
            const QJsonObject ghost = ghosts[0].toObject();
            QCOMPARE(ghost["key"].toInteger(), key_of(name + ".ghost"));
            QCOMPARE(ghost["pid"].toInt(), ghost_pid);
            QCOMPARE(ghost["name"].toString(), name + ".ghost");
            QVERIFY(ghost["since_s"].toDouble() >= 0);
            const QJsonObject leak = leaks[0].toObject();
            QCOMPARE(leak["key"].toInteger(), key_of(name + ".extra"));
            QCOMPARE(leak["pid"].toInt(), leak_pid);
            // Per lock: the leaked key's object carries it, and its holder has the orphan sign
            // "unclaimed" with the application's URL as evidence. The ghost's key is held by no
            // backend: no lock object, app_metrics alone lists it.
            QVERIFY2(lock_of(r, key_of(name + ".ghost")).isEmpty(), r.out.constData());
            const QJsonObject leaked = lock_of(r, key_of(name + ".extra"));
            const QJsonArray lock_claims = leaked["claims"].toArray();
            QVERIFY2(lock_claims.size() == 1, r.out.constData());
            QCOMPARE(lock_claims[0].toObject()["kind"].toString(), QStringLiteral("leak"));
            QCOMPARE(lock_claims[0].toObject()["url"].toString(), url);
            QCOMPARE(lock_claims[0].toObject()["pid"].toInt(), leak_pid);
            QVERIFY(lock_claims[0].toObject()["since_s"].toDouble() >= 0);
            QVERIFY2(lock_of(r, key_of(name + ".leak"))["claims"].toArray().isEmpty(), r.out.constData());
            // The same backend holds the guard's own lock, which the application claims: the
            // unclaimed evidence is about the other key only.
            QVERIFY2(lock_of(r, key_of(name + ".leak"))["holders"].toArray()[0].toObject()["orphan_evidence"].toArray().isEmpty(),
                     r.out.constData());
            const QJsonArray evidence = leaked["holders"].toArray()[0].toObject()["orphan_evidence"].toArray();
            QVERIFY2(evidence.size() == 1, r.out.constData());
            QCOMPARE(evidence[0].toObject()["sign"].toString(), QStringLiteral("unclaimed"));
            QVERIFY2(evidence[0].toObject()["evidence"].toString().startsWith(
                         QStringLiteral("its application (%1) does not claim key %2").arg(url).arg(key_of(name + ".extra"))),
                     r.out.constData());

            // The text form says the same.
            r = run({"--dsn", dsn(), "status", "--metrics-url", url});
            QCOMPARE(r.code, 0);
            const QString text = QString::fromUtf8(r.out);
            QVERIFY2(text.contains(QStringLiteral("app url=%1 claimed=2 ghosts=1 leaks=1").arg(url)), r.out.constData());
            QVERIFY2(text.contains(QStringLiteral("  ghost key=%1 name=%2.ghost pid=%3 for=")
                                       .arg(key_of(name + ".ghost")).arg(name).arg(ghost_pid)),
                     r.out.constData());
            QVERIFY2(text.contains(QStringLiteral("  leak key=%1 name=unknown pid=%2 for=")
                                       .arg(key_of(name + ".extra")).arg(leak_pid)),
                     r.out.constData());
            QVERIFY2(text.contains(QStringLiteral(" orphan?=unclaimed ")), r.out.constData());
            QVERIFY2(text.contains(QStringLiteral("    evidence: its application (%1) does not claim key %2, which this backend holds (for ")
                                       .arg(url).arg(key_of(name + ".extra"))),
                     r.out.constData());
        } catch (const std::exception& e) {
            QFAIL(e.what());
        }
    }

    // An endpoint that does not answer is reported, not fatal; a URL that is not http:// is a
    // usage error before any connection.
    void bad_endpoints() {
        try {
            SilentServer silent;
            Run r = run({"--dsn", dsn(), "status", "--json", "--metrics-url",
                         QStringLiteral("http://127.0.0.1:1/metrics")});
            QCOMPARE(r.code, 0);
            QJsonObject app = app_metrics(r);
            QVERIFY2(app["error"].toString().contains("cannot connect"), r.out.constData());
            // Accepts and never answers: the request's deadline (5 s) ends it.
            QElapsedTimer t;
            t.start();
            r = run({"--dsn", dsn(), "status", "--json", "--metrics-url",
                     QStringLiteral("http://127.0.0.1:%1/metrics").arg(silent.port())});
            QCOMPARE(r.code, 0);
            app = app_metrics(r);
            QVERIFY2(app["error"].toString().contains("timed out"), r.out.constData());
            QVERIFY2(t.elapsed() < 15000, "the scrape of a silent endpoint was not bounded");
            for (const char* bad : {"https://127.0.0.1:9/metrics", "127.0.0.1:9", "http://user:pw@127.0.0.1:9/"}) {
                r = run({"--dsn", "host=127.0.0.1 port=1", "status", "--metrics-url", QString::fromLatin1(bad)});
                QVERIFY2(r.code == 2, (QByteArray(bad) + ": " + r.err).constData());
                QVERIFY2(r.err.contains("--metrics-url"), r.err.constData());
            }
        } catch (const std::exception& e) {
            QFAIL(e.what());
        }
    }
};

QTEST_GUILESS_MAIN(TestCliClaims)
#include "test_cli_claims.moc"
