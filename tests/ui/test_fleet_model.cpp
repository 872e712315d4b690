// The Fleet tab's model without a widget (a QCoreApplication linked against the model library
// only), against real servers: three sessions, two on databases of the test server and one on a
// closed port. The unreachable one says "disconnected, retrying" and ranks worst while the other
// two keep polling (their poll counts advance within a deadline); a waiter on one of them shows as
// its waiters, its longest wait with the lock's name, and in its sparkline history; read-only is
// per server. Then a failover on a primary + hot standby pair of the test's own: a session on a
// multi-host conninfo shows the new host:port and "primary", one on the old primary alone shows
// disconnected, and the session on the standby turns from "standby" to "primary". Many results
// a second reach the views as a few dataChanged a second (the Fleet table's repaints).
#include <libpq-fe.h>

#include <QAbstractItemModelTester>
#include <QCoreApplication>
#include <QStandardPaths>
#include <QTcpServer>
#include <QSignalSpy>
#include <QUuid>
#include <QElapsedTimer>
#include <QtTest>

#include <memory>
#include <string>

#include "actions/read_only_switch.hpp"
#include "fleet/fleet_model.hpp"
#include "own_cluster.hpp"
#include "pg_conn.hpp"
#include "pg_test_env.hpp"
#include "pglock/key.hpp"
#include "pglock/lock.hpp"
#include "pglock/pool.hpp"
#include "session/server_session.hpp"
#include "stores/catalog_name_cache.hpp"

namespace {

using Conn = pglock::test::PgConn;
using lockscope::FleetModel;
using State = lockscope::FleetModel::ServerState;

std::string unique(const char* prefix) { return prefix + QUuid::createUuid().toString(QUuid::Id128).left(8).toStdString(); }

// A TCP port on 127.0.0.1 that nothing listens on: bound for a moment to learn a free one, closed.
int closedPort() {
    QTcpServer probe;
    if (!probe.listen(QHostAddress::LocalHost, 0)) return 1;  // port 1: closed on any test machine
    const int port = probe.serverPort();
    probe.close();
    return port;
}

// Sessions and the model over them, as the window holds them.
struct Fleet {
    lockscope::CatalogNameCache names;
    std::vector<std::unique_ptr<lockscope::ServerSession>> sessions;
    FleetModel model;
    QAbstractItemModelTester tester{&model, QAbstractItemModelTester::FailureReportingMode::QtTest};

    lockscope::ServerSession& open(const std::string& conninfo, const QString& label) {
        sessions.push_back(std::make_unique<lockscope::ServerSession>(names));
        lockscope::ServerSession& s = *sessions.back();
        s.poller().setInterval(std::chrono::milliseconds(250));
        model.addSession(&s);
        s.connectTo(QString::fromStdString(conninfo), {}, label);
        return s;
    }
    int row(const lockscope::ServerSession& s) const { return model.rowOf(&s); }
    State state(const lockscope::ServerSession& s) const { return model.state(row(s)); }
    QString cell(const lockscope::ServerSession& s, int column) const { return model.index(row(s), column).data().toString(); }
    quint64 polls(const lockscope::ServerSession& s) const { return model.pollCount(row(s)); }
};

// Describes every row, for a failure message.
QByteArray describe(const Fleet& f) {
    QStringList out;
    for (int r = 0; r < f.model.rowCount(); ++r) {
        QStringList cells;
        for (int c = 0; c < FleetModel::ColumnCount; ++c) cells << f.model.index(r, c).data().toString();
        out << cells.join(QStringLiteral(" | "));
    }
    return out.join(QStringLiteral("\n")).toUtf8();
}

}  // namespace

class TestFleetModel : public QObject {
    Q_OBJECT
    std::string dsn_;
    std::string db_;

private slots:
    void initTestCase() {
        auto dsn = pglock::test::test_dsn();
        QVERIFY2(dsn.has_value(), "no test server");
        dsn_ = *dsn;
        QVERIFY2(dsn_.find('=') != std::string::npos, "needs a keyword=value DSN to name a second database");
        QStandardPaths::setTestModeEnabled(true);  // the history files go to a scratch place
        // Two databases of their own: other tests' locks on the shared server never show in them.
        db_ = "pglock_fleet_" + std::to_string(QCoreApplication::applicationPid());
        Conn admin(dsn_);
        QVERIFY(admin.ok());
        for (const std::string& db : {db_ + "_a", db_ + "_b"}) {
            PQclear(PQexec(admin.c, ("DROP DATABASE IF EXISTS " + db).c_str()));
            PGresult* r = PQexec(admin.c, ("CREATE DATABASE " + db).c_str());
            const bool created = PQresultStatus(r) == PGRES_COMMAND_OK;
            PQclear(r);
            QVERIFY2(created, PQerrorMessage(admin.c));
        }
    }

    void cleanupTestCase() {
        if (db_.empty()) return;
        Conn admin(dsn_);
        for (const std::string& db : {db_ + "_a", db_ + "_b"})
            PQclear(PQexec(admin.c, ("DROP DATABASE IF EXISTS " + db + " WITH (FORCE)").c_str()));
    }

    void an_unreachable_server_retries_while_the_others_keep_polling() {
        Fleet f;
        const std::string dsnA = dsn_ + " dbname=" + db_ + "_a";
        auto& a = f.open(dsnA, QStringLiteral("a-first"));
        auto& b = f.open(dsn_ + " dbname=" + db_ + "_b", QStringLiteral("b-second"));
        auto& down = f.open("host=127.0.0.1 port=" + std::to_string(closedPort()) + " dbname=postgres connect_timeout=2",
                            QStringLiteral("c-down"));
        QCOMPARE(f.model.rowCount(), 3);

        // On a: a holder named by its identity, and a plain libpq waiter behind it.
        const std::string name = unique("fleet.rollup-");
        const qint64 key = pglock::key_of(name);
        pglock::PoolOptions po;
        po.overrides = {{"application_name", "fleet-holder"}};
        pglock::Pool pool(dsnA, po);
        pglock::Lock lock(pool, name);
        pglock::Guard guard = lock.acquire();
        Conn waiter(dsnA);
        QVERIFY(waiter.ok());
        QVERIFY(PQsendQuery(waiter.c, ("SELECT pg_advisory_lock(" + std::to_string(key) + ")").c_str()) == 1);

        QTRY_VERIFY2_WITH_TIMEOUT(f.state(a) == State::primary && f.state(b) == State::primary && f.state(down) == State::retrying,
                                  describe(f), 15000);
        QTRY_VERIFY2_WITH_TIMEOUT(f.cell(a, FleetModel::Waiters) == QStringLiteral("1"), describe(f), 10000);
        QVERIFY2(f.cell(a, FleetModel::LongestWait).contains(QString::fromStdString(name)), describe(f));
        QCOMPARE(f.cell(b, FleetModel::Waiters), QStringLiteral("0"));
        QCOMPARE(f.cell(down, FleetModel::State), QStringLiteral("disconnected, retrying"));
        QVERIFY(f.cell(down, FleetModel::Locks).isEmpty());  // never polled: no numbers to show
        QVERIFY2(!f.cell(a, FleetModel::Address).isEmpty(), describe(f));
        // Worst first: the unreachable server, then the one with a waiter, then the quiet one.
        QCOMPARE(f.model.rank(f.row(down)), 0);
        QCOMPARE(f.model.rank(f.row(a)), 1);
        QCOMPARE(f.model.rank(f.row(b)), 2);
        QCOMPARE(f.model.index(f.row(a), FleetModel::Trend).data(FleetModel::WaitersHistoryRole).value<QList<int>>().last(), 1);

        // The dead server delays neither: both poll counts advance while it keeps retrying.
        const quint64 polledA = f.polls(a), polledB = f.polls(b);
        QTRY_VERIFY2_WITH_TIMEOUT(f.polls(a) >= polledA + 4 && f.polls(b) >= polledB + 4, describe(f), 10000);
        QCOMPARE(f.state(down), State::retrying);
        QCOMPARE(f.polls(down), quint64(0));

        // Read-only is each server's own.
        QCOMPARE(f.cell(b, FleetModel::Access), QStringLiteral("read-write"));
        b.readOnlySwitch().set(true);
        QCOMPARE(f.cell(b, FleetModel::Access), QStringLiteral("read-only"));
        QCOMPARE(f.cell(a, FleetModel::Access), QStringLiteral("read-write"));

        // The wait ends: the waiters drop to 0, and the sparkline keeps the 1 it had.
        QVERIFY(!guard.release());
        QTRY_VERIFY2_WITH_TIMEOUT(f.cell(a, FleetModel::Waiters) == QStringLiteral("0"), describe(f), 10000);
        QVERIFY(f.model.index(f.row(a), FleetModel::Trend).data(FleetModel::WaitersHistoryRole).value<QList<int>>().contains(1));
        QTRY_COMPARE_WITH_TIMEOUT(f.model.rank(f.row(down)), 0, 5000);
    }

    // Two servers polled as often as the poller allows: more results than the views hear of, at
    // most once per FleetModel::kNotifyInterval (each dataChanged re-sorts and repaints the Fleet
    // table); the numbers themselves are current at once.
    void many_results_reach_the_views_as_a_few_refreshes_a_second() {
        Fleet f;
        auto& a = f.open(dsn_ + " dbname=" + db_ + "_a", QStringLiteral("a"));
        auto& b = f.open(dsn_ + " dbname=" + db_ + "_b", QStringLiteral("b"));
        for (auto* s : {&a, &b}) s->poller().setInterval(std::chrono::milliseconds(20));
        QTRY_VERIFY2_WITH_TIMEOUT(f.polls(a) > 0 && f.polls(b) > 0, describe(f), 10000);
        QSignalSpy changes(&f.model, &QAbstractItemModel::dataChanged);
        const quint64 before = f.polls(a) + f.polls(b);
        QElapsedTimer clock;
        clock.start();
        QTest::qWait(3000);
        const qint64 ms = clock.elapsed();
        const quint64 results = f.polls(a) + f.polls(b) - before;
        const qint64 allowed = ms / FleetModel::kNotifyInterval.count() + 1;
        // Fewer results than allowed refreshes would prove nothing.
        QVERIFY2(static_cast<qint64>(results) > allowed, qPrintable(QStringLiteral("only %1 results in %2 ms").arg(results).arg(ms)));
        QVERIFY2(changes.size() <= allowed, qPrintable(QStringLiteral("%1 dataChanged for %2 results in %3 ms (at most %4)")
                                                          .arg(changes.size()).arg(results).arg(ms).arg(allowed)));
        QVERIFY2(!changes.isEmpty(), "the views never heard of the results");
    }

    void a_failover_shows_as_a_new_primary_and_the_old_one_disconnected() {
        pglock::test::OwnCluster cluster;
        const int oldPort = cluster.port();
        const int newPort = cluster.start_standby();
        const std::string both = "host=127.0.0.1,127.0.0.1 port=" + std::to_string(oldPort) + "," + std::to_string(newPort) +
                                 " user=postgres dbname=postgres target_session_attrs=read-write connect_timeout=2";
        const std::string oldOnly = "host=127.0.0.1 port=" + std::to_string(oldPort) + " user=postgres dbname=postgres connect_timeout=2";
        const std::string standbyOnly = "host=127.0.0.1 port=" + std::to_string(newPort) + " user=postgres dbname=postgres connect_timeout=2";
        const QString oldAddress = QStringLiteral("127.0.0.1:%1").arg(oldPort);
        const QString newAddress = QStringLiteral("127.0.0.1:%1").arg(newPort);

        Fleet f;
        auto& multi = f.open(both, QStringLiteral("orders (multi-host)"));
        auto& old = f.open(oldOnly, QStringLiteral("orders-1"));
        auto& standby = f.open(standbyOnly, QStringLiteral("orders-2"));
        QTRY_VERIFY2_WITH_TIMEOUT(f.state(multi) == State::primary && f.state(old) == State::primary && f.state(standby) == State::standby,
                                  describe(f), 20000);
        QCOMPARE(f.cell(multi, FleetModel::Address), oldAddress);
        QCOMPARE(f.cell(standby, FleetModel::Address), newAddress);

        cluster.promote_standby();
        cluster.halt_primary(QStringLiteral("fast"));

        // The poller's backoff tops out at 10 s: well within 40 s every session has tried again.
        QTRY_VERIFY2_WITH_TIMEOUT(f.state(multi) == State::primary && f.cell(multi, FleetModel::Address) == newAddress, describe(f), 40000);
        QTRY_VERIFY2_WITH_TIMEOUT(f.state(standby) == State::primary, describe(f), 40000);
        QTRY_VERIFY2_WITH_TIMEOUT(f.state(old) == State::retrying, describe(f), 40000);
        QCOMPARE(f.cell(old, FleetModel::State), QStringLiteral("disconnected, retrying"));
        QCOMPARE(f.model.rank(f.row(old)), 0);
        // The multi-host session keeps polling on the new primary.
        const quint64 polled = f.polls(multi);
        QTRY_VERIFY2_WITH_TIMEOUT(f.polls(multi) >= polled + 3, describe(f), 10000);
    }
};

QTEST_GUILESS_MAIN(TestFleetModel)
#include "test_fleet_model.moc"
