// What a failover does to a lock. PostgreSQL cannot turn a running primary into a standby: a
// demotion is a shutdown, a restart in recovery and a new timeline, so every session (and every
// advisory lock) of the old primary ends on the way. The library sees that as the session dying:
// the guard turns lost. After the failover, a client whose connection string still lists the old
// primary can land on a standby; acquiring there is refused (Errc::on_standby), and
// target_session_attrs=read-write sends it to the primary instead.
#include <QtTest>

#include <atomic>
#include <cstdlib>
#include <string>

#include "core_test_util.hpp"

using namespace std::chrono_literals;
using pglock::Context;
using pglock::Errc;
using pglock::Lock;
using pgt::conninfo_value;
using pgt::guarded;
using pgt::RawConn;
using pgt::wait_until;

class TestFailover : public QObject {
    Q_OBJECT

    std::string dsn_;
    std::string standby_;
    std::optional<std::string> cluster_dir_;

private slots:
    void initTestCase() {
        PGT_REQUIRE_DSN(dsn_);
        cluster_dir_ = pglock::test::private_cluster_dir();
        if (auto s = pglock::test::standby_dsn()) standby_ = *s;
    }

    // The server restarts (as it does when a primary is demoted or crashes): the held lock is gone
    // and the guard says so within moments; the pool works again afterwards.
    void restart_turns_a_held_lock_lost() {
        if (!cluster_dir_) QSKIP("PGLOCK_TEST_DSN is set: not restarting someone else's server");
        guarded([&] {
            pglock::Pool pool(dsn_, {.max_size = 2});
            Lock lock(pool, pgt::unique_name());
            pglock::Guard guard = lock.acquire(Context::with_timeout(10s));
            std::atomic<bool> called{false};
            guard.on_lost([&] { called = true; });
            QVERIFY(!guard.lost());

            const std::string cmd = pglock::test::cluster_script() + " restart " + *cluster_dir_;
            QCOMPARE(std::system(cmd.c_str()), 0);

            QVERIFY2(wait_until([&] { return guard.lost(); }, 10s), "the restart went unnoticed by the guard");
            QVERIFY(called.load());
            QVERIFY(guard.lost_token().stop_requested());
            QCOMPARE(guard.release(), std::error_code(Errc::lock_lost));

            // The dead idle sessions are dropped, and the lock can be taken again at once.
            auto again = lock.try_acquire(Context::with_timeout(20s));
            QVERIFY2(again.has_value(), "the lock was not free after the restart");
            RawConn obs(dsn_);
            QCOMPARE(pgt::granted_pids(obs, lock.key()), std::vector<int>{again->backend_pid()});
            QCOMPARE(again->release(), std::error_code());
        });
    }

    // A connection string with the standby first (the old primary, after a failover): acquiring
    // is refused there instead of taking a lock that protects nothing; with
    // target_session_attrs=read-write libpq skips the standby and the lock is taken on the primary.
    void failed_over_connection_string_lands_on_standby() {
        if (standby_.empty()) {
            // Under ctest the pg_standby fixture always makes one: missing, it is a failure. Only a
            // server given by PGLOCK_TEST_DSN without PGLOCK_TEST_STANDBY_DSN has none to offer.
            if (!cluster_dir_) QSKIP("PGLOCK_TEST_DSN is set and no standby DSN (PGLOCK_TEST_STANDBY_DSN) was given");
            QFAIL("no standby: the pg_standby fixture did not write pgtest-standby.dsn");
        }
        guarded([&] {
            const std::string hosts = conninfo_value(standby_, "host") + "," + conninfo_value(dsn_, "host");
            const std::string ports = conninfo_value(standby_, "port") + "," + conninfo_value(dsn_, "port");
            const std::string both = "host=" + hosts + " port=" + ports + " user=postgres dbname=postgres";

            pglock::Pool stale(both, {.max_size = 1});
            Lock refused(stale, pgt::unique_name());
            PGT_EXPECT_ERROR(refused.try_acquire(Context::with_timeout(10s)), Errc::on_standby);
            PGT_EXPECT_ERROR(refused.acquire(Context::with_timeout(10s)), Errc::on_standby);

            pglock::Pool primary(both + " target_session_attrs=read-write", {.max_size = 1});
            Lock taken(primary, refused.name());
            auto guard = taken.try_acquire(Context::with_timeout(10s));
            QVERIFY(guard.has_value());
            RawConn obs(dsn_);
            QCOMPARE(pgt::granted_pids(obs, taken.key()), std::vector<int>{guard->backend_pid()});
            QCOMPARE(guard->release(), std::error_code());
        });
    }
};

QTEST_GUILESS_MAIN(TestFailover)
#include "test_failover.moc"
