// A failover as operators live through it: a pool on a multi-host connection string
// (host=a,b target_session_attrs=read-write) holds locks on the primary; the hot standby is
// promoted and the old primary goes away. The test owns the pair (tests/pg/cluster start +
// standby, in a temp dir of its own), since it ends a primary for good.
// What must happen: every guard turns lost, once, well within the keepalive bound (the server's
// end of the connection closes, so it is not even a silent cut); the idle session to the old
// primary is never lent; and the same Pool object, unchanged, takes new locks on the new primary.
#include <QtTest>

#include <array>
#include <atomic>
#include <chrono>
#include <optional>
#include <string>
#include <thread>

#include "core_test_util.hpp"
#include "own_cluster.hpp"

using namespace std::chrono_literals;
using pglock::Context;
using pglock::Errc;
using pglock::Lock;
using pgt::Clock;
using pgt::guarded;
using pgt::wait_until;

namespace {

// How long a guard may take to turn lost at most: the keepalive bound of a pool session
// (idle + interval * count, which tcp_user_timeout equals), the longest a dead server can
// go unnoticed even when nothing tells the client.
std::chrono::milliseconds keepalive_bound() {
    const pglock::Keepalive k{};
    return std::chrono::duration_cast<std::chrono::milliseconds>(k.idle + k.interval * k.count);
}

// Which server a guard's session is on: inet_server_port() and pg_is_in_recovery().
struct ServerOf {
    int port = 0;
    bool in_recovery = true;
};
ServerOf server_of(pglock::Session& s) {
    auto r = s.exec("SELECT inet_server_port(), pg_is_in_recovery()");
    return {static_cast<int>(r.get_int64(0, 0)), r.get_bool(0, 1)};
}
ServerOf server_of(pglock::Guard& g) {
    auto lease = g.session();
    return server_of(*lease);
}

// One guard's lost notices: how many, and when the first came.
struct LostLog {
    std::atomic<int> calls{0};
    std::atomic<Clock::rep> first_at{0};
    void record() {
        Clock::rep expected = 0;
        first_at.compare_exchange_strong(expected, Clock::now().time_since_epoch().count());
        ++calls;
    }
    Clock::time_point at() const { return Clock::time_point(Clock::duration(first_at.load())); }
};

}  // namespace

class TestPromote : public QObject {
    Q_OBJECT

private slots:
    void failover_turns_guards_lost_and_new_locks_go_to_the_new_primary_data() {
        QTest::addColumn<QString>("mode");
        QTest::addColumn<bool>("promote_first");
        QTest::newRow("switchover: promote, then fast stop") << QString("fast") << true;
        QTest::newRow("promote, then immediate stop") << QString("immediate") << true;
        QTest::newRow("crash: immediate stop, then promote") << QString("immediate") << false;
    }

    void failover_turns_guards_lost_and_new_locks_go_to_the_new_primary() {
        QFETCH(QString, mode);
        QFETCH(bool, promote_first);
        pgt::within(240s, "the failover test", [&] { guarded([&] { run(mode, promote_first); }); });
    }

private:
    void run(const QString& mode, bool promote_first) {
        pglock::test::OwnCluster cluster;
        const int old_port = cluster.port();
        const int new_port = cluster.start_standby();
        const std::string dsn = "host=127.0.0.1,127.0.0.1 port=" + std::to_string(old_port) + "," +
                                std::to_string(new_port) +
                                " user=postgres dbname=postgres target_session_attrs=read-write";

        // What a fleet view polls: each server on its own. The standby says it is in recovery.
        const std::string standby_dsn = "host=127.0.0.1 port=" + std::to_string(new_port) + " user=postgres dbname=postgres";
        // Its monitoring session stays open across the promotion, as a poller's does.
        auto standby_mon = pglock::Session::connect(standby_dsn, Context::with_timeout(20s));
        {
            const auto snap = pglock::monitor::poll(standby_mon, Context::with_timeout(20s));
            QVERIFY(snap.in_recovery);
            QCOMPARE(snap.host, std::string("127.0.0.1"));
            QCOMPARE(snap.port, new_port);
        }

        // A pool that names the standby alone: refused there, and its session stays in the pool.
        pglock::Pool standby_pool(standby_dsn, {.max_size = 1});
        Lock on_standby(standby_pool, pgt::unique_name("promote.standby"));
        PGT_EXPECT_ERROR(on_standby.try_acquire(Context::with_timeout(20s)), Errc::on_standby);

        pglock::Pool pool(dsn, {.max_size = 4});
        std::array<Lock, 2> locks{Lock(pool, pgt::unique_name("promote.a")), Lock(pool, pgt::unique_name("promote.b"))};
        std::array<LostLog, 2> logs;  // before the guards: their callbacks write here until they go
        std::array<std::optional<pglock::Guard>, 2> guards;
        for (std::size_t i = 0; i < guards.size(); ++i) {
            guards[i] = locks[i].acquire(Context::with_timeout(20s));
            guards[i]->on_lost([&log = logs[i]] { log.record(); });
            const ServerOf s = server_of(*guards[i]);
            QCOMPARE(s.port, old_port);
            QVERIFY(!s.in_recovery);
        }
        // An idle session to the old primary waits in the pool: it must never be lent again.
        {
            Lock idle(pool, pgt::unique_name("promote.idle"));
            auto g = idle.acquire(Context::with_timeout(20s));
            QCOMPARE(g.release(), std::error_code());
        }

        // A second thread keeps using the guards (reads, and leases running statements) while
        // their server goes away: the notice must still come, and only once.
        std::atomic<int> toucher_statements{0};
        std::jthread toucher([&](std::stop_token stop) {
            while (!stop.stop_requested()) {
                for (auto& g : guards) {
                    if (g->lost() || g->lost_token().stop_requested()) continue;
                    try {
                        auto lease = g->session();
                        lease->exec("SELECT 1", {}, Context::with_timeout(2s));
                        ++toucher_statements;
                    } catch (const pglock::Error&) {
                        // the session died under the lease: the guard turns lost when it ends
                    }
                }
                std::this_thread::sleep_for(2ms);
            }
        });

        if (promote_first) cluster.promote_standby();
        const auto stop_started = Clock::now();
        cluster.halt_primary(mode);
        const auto stop_took = Clock::now() - stop_started;

        const auto bound = keepalive_bound();
        QVERIFY2(wait_until([&] { return guards[0]->lost() && guards[1]->lost(); }, bound + 5s),
                 "a guard on the stopped primary did not turn lost");
        std::this_thread::sleep_for(300ms);  // room for a second notice, which must not come
        toucher.request_stop();
        toucher.join();
        for (std::size_t i = 0; i < guards.size(); ++i) {
            const auto latency = std::chrono::duration_cast<std::chrono::milliseconds>(logs[i].at() - stop_started);
            qInfo("guard %zu (%s stop): lost %lld ms after the stop began (pg_ctl stop took %lld ms; bound %lld ms)", i,
                  qPrintable(mode), static_cast<long long>(latency.count()),
                  static_cast<long long>(std::chrono::duration_cast<std::chrono::milliseconds>(stop_took).count()),
                  static_cast<long long>(bound.count()));
            QCOMPARE(logs[i].calls.load(), 1);
            QVERIFY2(latency < bound, "the lost notice came later than the keepalive bound");
            QVERIFY(guards[i]->lost_token().stop_requested());
            QCOMPARE(guards[i]->release(), std::error_code(Errc::lock_lost));
        }
        qInfo("the second thread ran %d statements on the guards' sessions", toucher_statements.load());

        if (!promote_first) {
            // Between the crash and the promotion there is no primary: libpq refuses the
            // read-only standby (target_session_attrs) and the acquire fails; it must not take a
            // lock on the standby.
            const auto refused = pgt::catch_error([&] { (void)locks[0].try_acquire(Context::with_timeout(10s)); });
            QVERIFY2(refused.has_value(), "a lock was taken while no primary was up");
            QVERIFY2(refused->code() == Errc::acquire_failed && refused->detail().find("read-only") != std::string::npos,
                     pgt::describe(*refused).c_str());
            cluster.promote_standby();
        }

        // The same Pool, with no change: new locks (and the lost ones' names) on the new primary.
        for (auto& lock : locks) {
            auto g = lock.try_acquire(Context::with_timeout(20s));
            QVERIFY2(g.has_value(), "a lock lost in the failover was not free on the new primary");
            const ServerOf s = server_of(*g);
            QCOMPARE(s.port, new_port);
            QVERIFY(!s.in_recovery);
            pgt::RawConn obs(standby_dsn);
            QCOMPARE(pgt::granted_pids(obs, lock.key()), std::vector<int>{g->backend_pid()});
            QCOMPARE(g->release(), std::error_code());
        }
        // The standby's pool takes the lock now that its server is a primary, on the session it
        // kept from before the promotion (max_size 1).
        {
            auto g = on_standby.try_acquire(Context::with_timeout(20s));
            QVERIFY2(g.has_value(), "the promoted server's pool did not take a free lock");
            QCOMPARE(server_of(*g).port, new_port);
            QCOMPARE(g->release(), std::error_code());
        }
        // The first poll after the promotion, on the session opened before it, says primary.
        QVERIFY2(!pglock::monitor::poll(standby_mon, Context::with_timeout(20s)).in_recovery,
                 "the first poll after the promotion still reports a standby");
        // The former standby now polls as a primary, and so does the multi-host string.
        for (const std::string& where : {standby_dsn, dsn}) {
            auto mon = pglock::Session::connect(where, Context::with_timeout(20s));
            const auto snap = pglock::monitor::poll(mon, Context::with_timeout(20s));
            QVERIFY(!snap.in_recovery);
            QCOMPARE(snap.port, new_port);
        }
        Lock fresh(pool, pgt::unique_name("promote.fresh"));
        auto g = fresh.acquire(Context::with_timeout(20s));
        QCOMPARE(server_of(g).port, new_port);
        QCOMPARE(g.release(), std::error_code());
    }
};

QTEST_GUILESS_MAIN(TestPromote)
#include "test_promote.moc"
