// `pglock demo`: the workload an operator watches shows real contention on the server (several
// keys held at once, waiters, a holder idle in transaction), serves its metrics, and leaves
// nothing behind when it stops.
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTcpSocket>
#include <QTemporaryDir>
#include <QtTest>

#include <algorithm>
#include <csignal>

#include "cli_test_support.hpp"

using namespace clitest;

namespace {


// What pg_locks shows of the demo's sessions (application_name demo-*) right now.
struct DemoLocks {
    int held_keys = 0;      // distinct advisory keys with a granted row
    int waiters = 0;        // rows with granted = false
    int idle_in_tx = 0;     // granted rows whose backend is idle in transaction
    int rows = 0;           // every advisory row
};

DemoLocks demo_locks(RawConn& obs) {
    const auto rows = obs.query(
        "SELECT count(DISTINCT (l.classid, l.objid, l.objsubid)) FILTER (WHERE l.granted),"
        " count(*) FILTER (WHERE NOT l.granted),"
        " count(*) FILTER (WHERE l.granted AND a.state = 'idle in transaction'),"
        " count(*)"
        " FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid"
        " WHERE l.locktype = 'advisory' AND a.application_name LIKE 'demo-%'");
    return {std::stoi(rows[0][0]), std::stoi(rows[0][1]), std::stoi(rows[0][2]), std::stoi(rows[0][3])};
}

}  // namespace

class TestCliDemo : public QObject {
    Q_OBJECT

private slots:
    void demo_shows_contention_serves_metrics_and_cleans_up() {
        RawConn obs(dsn());
        QCOMPARE(demo_locks(obs).rows, 0);  // nothing of an earlier demo is around
        QElapsedTimer t;
        t.start();
        Cli cli({"demo", "--for", "6s", "--dsn", dsn()});

#if PGLOCK_WITH_PROMETHEUS
        const auto url = cli.wait_stdout(QRegularExpression("demo: metrics on http://127\\.0\\.0\\.1:(\\d+)/metrics"));
        QVERIFY2(url.hasMatch(), (cli.out() + cli.err()).constData());
        const int port = url.captured(1).toInt();
        QVERIFY(port > 0);
#endif

        // Poll pg_locks while it runs: several keys held at once, a waiter, a holder idle in
        // transaction (each may show at a different moment).
        int max_held = 0;
        bool waiter = false, idle_in_tx = false;
        QVERIFY2(eventually(
                     [&] {
                         const DemoLocks now = demo_locks(obs);
                         max_held = std::max(max_held, now.held_keys);
                         waiter = waiter || now.waiters > 0;
                         idle_in_tx = idle_in_tx || now.idle_in_tx > 0;
                         return (max_held >= 6 && waiter && idle_in_tx) || !cli.running();
                     },
                     6000),
                 qPrintable(QString("held keys at most %1, waiter seen %2, idle in transaction seen %3")
                                .arg(max_held)
                                .arg(waiter)
                                .arg(idle_in_tx)));
        QVERIFY2(cli.running(), (cli.out() + cli.err()).constData());
        QVERIFY2(max_held >= 6, qPrintable(QString("at most %1 keys held at once").arg(max_held)));
        QVERIFY(waiter);
        QVERIFY(idle_in_tx);

#if PGLOCK_WITH_PROMETHEUS
        const QByteArray reply = http_get(quint16(port), "/metrics");
        QVERIFY2(reply.startsWith("HTTP/1.") && reply.contains(" 200 "), reply.left(200).constData());
        QVERIFY2(reply.contains("lock_acquires_total{"), reply.constData());
        QVERIFY2(reply.contains("outcome=\"acquired\""), reply.constData());
        QVERIFY2(reply.contains("lock_hold_duration_seconds_bucket{"), reply.constData());
#endif

        QVERIFY(cli.wait_finished(30000));
        QVERIFY(!cli.crashed());
        QVERIFY2(cli.exit_code() == 0, cli.err().constData());
        QVERIFY(t.elapsed() >= 6000);
        QVERIFY2(t.elapsed() < 20000, qPrintable(QString("took %1 ms to stop").arg(t.elapsed())));
        // One line per job start, the first twelve catalog names among them.
        const QByteArray out = cli.out();
        QVERIFY2(out.count("demo: started job ") >= 12, out.constData());
        for (const char* name : {"orders.daily-rollup", "payments.settle", "reports.monthly-close",
                                 "etl.nightly-load", "search.reindex", "session.warmup"})
            QVERIFY2(out.contains(QByteArray("\"") + name + "\""), name);
        QVERIFY2(out.contains("\"adhoc.reindex-"), out.constData());
        QVERIFY2(out.contains("demo: stopped ("), out.constData());

        // Nothing of the demo stays on the server. (A backend leaves pg_stat_activity a moment
        // after its client hung up, so wait for that, bounded.)
        QVERIFY2(eventually([&] { return demo_locks(obs).rows == 0; }, 5000), "demo locks left in pg_locks");
    }

    // What other software does on the same database: the migration locks of Rails and
    // golang-migrate (named by `status` from the database alone), an advisory holder waiting on a
    // row lock held by a session idle in transaction, and an orphaned holder (idle, not in a
    // transaction) with a waiter.
    void demo_shows_other_libraries_a_row_chain_and_an_orphan() {
        RawConn obs(dsn());
        QVERIFY(eventually([&] { return demo_locks(obs).rows == 0; }, 5000));
        Cli cli({"demo", "--for", "8s", "--dsn", dsn()});
        bool rails = false, golang = false, chain = false, orphan = false;
        QString last;
        QVERIFY2(eventually(
                     [&] {
                         const auto r = run({"status", "--json", "--orphan-idle", "100ms", "--dsn", dsn()});
                         last = QString::fromUtf8(r.out);
                         for (const auto& v : QJsonDocument::fromJson(r.out).object()["locks"].toArray()) {
                             const QJsonObject o = v.toObject();
                             rails = rails || o["name_scheme"].toString() == "rails-migration";
                             golang = golang || (o["name_scheme"].toString() == "golang-migrate" &&
                                                 o["name"].toString().endsWith(", schema public"));
                             for (const auto& h : o["holders"].toArray())
                                 for (const auto& e : h.toObject()["orphan_evidence"].toArray())
                                     orphan = orphan || (e.toObject()["sign"].toString() == "idle_holder" &&
                                                         h.toObject()["application_name"].toString() == "demo-forgotten-job");
                         }
                         // An advisory holder of the demo that itself waits on a transaction
                         // (row) lock held by the demo's row owner, idle in transaction.
                         chain = chain || obs.scalar(
                             "SELECT count(*) FROM pg_locks w JOIN pg_stat_activity a ON a.pid = w.pid"
                             " JOIN pg_stat_activity o ON o.pid = ANY(pg_blocking_pids(w.pid))"
                             " WHERE NOT w.granted AND w.locktype = 'transactionid' AND a.application_name LIKE 'demo-%'"
                             " AND o.application_name = 'demo-row-owner' AND o.state = 'idle in transaction'"
                             " AND EXISTS (SELECT 1 FROM pg_locks h WHERE h.pid = w.pid AND h.locktype = 'advisory' AND h.granted)") != "0";
                         return (rails && golang && chain && orphan) || !cli.running();
                     },
                     8000),
                 qPrintable(QString("rails %1 golang-migrate %2 row chain %3 orphan %4; last status: %5")
                                .arg(rails).arg(golang).arg(chain).arg(orphan).arg(last)));
        QVERIFY(cli.wait_finished(30000));
        QVERIFY2(cli.exit_code() == 0, cli.err().constData());
        QVERIFY2(!cli.err().contains("demo: job"), cli.err().constData());  // no job failed
        QVERIFY2(eventually([&] { return demo_locks(obs).rows == 0; }, 5000), "demo locks left in pg_locks");
        QCOMPARE(obs.scalar("SELECT count(*) FROM pg_class WHERE relname = 'pglock_demo_rows'"), std::string("0"));
    }

    void sigterm_stops_the_demo_with_exit_0() {
        RawConn obs(dsn());
        Cli cli({"demo", "--metrics", "127.0.0.1:0", "--dsn", dsn()});
        QVERIFY(eventually([&] { return demo_locks(obs).held_keys >= 3 || !cli.running(); }));
        QVERIFY2(cli.running(), cli.err().constData());
        QCOMPARE(::kill(pid_t(cli.pid()), SIGTERM), 0);
        QVERIFY(cli.wait_finished(15000));
        QVERIFY(!cli.crashed());
        QVERIFY2(cli.exit_code() == 0, cli.err().constData());
        QVERIFY2(cli.out().contains("demo: stopped (SIGTERM)"), cli.out().constData());
        QVERIFY(eventually([&] { return demo_locks(obs).rows == 0; }, 5000));
    }

    void a_catalog_too_small_is_an_error() {
        QTemporaryDir dir;
        const QString path = dir.filePath("small.txt");
        QFile f(path);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write("# three names are not enough\na.one\na.two\na.three\n");
        f.close();
        const auto r = run({"demo", "--catalog", path, "--for", "1s", "--dsn", dsn()});
        QCOMPARE(r.code, 1);
        QVERIFY2(clean_one_line_error(r.err), r.err.constData());
        QVERIFY2(r.err.contains("needs 12 names"), r.err.constData());
        QCOMPARE(run({"demo", "--metrics", "nohostport", "--dsn", dsn()}).code, 2);
        QCOMPARE(run({"demo", "--for", "soon", "--dsn", dsn()}).code, 2);
    }
};

QTEST_GUILESS_MAIN(TestCliDemo)
#include "test_cli_demo.moc"
