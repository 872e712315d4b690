// A hot standby: advisory locks there are local to it and protect nothing, so the library
// refuses them unless allow_standby is set.
#include <QtTest>

#include <cstdlib>
#include <memory>
#include <string>

#include "core_test_util.hpp"

using namespace std::chrono_literals;
using pglock::Context;
using pglock::Errc;
using pglock::Lock;
using pgt::guarded;

class TestStandby : public QObject {
    Q_OBJECT

    std::string standby_;

private slots:
    void initTestCase() {
        std::string primary;
        PGT_REQUIRE_DSN(primary);
        const auto standby = pglock::test::standby_dsn();
        if (!standby) {
            const char* user_dsn = std::getenv("PGLOCK_TEST_DSN");
            if (user_dsn && *user_dsn)
                QSKIP("PGLOCK_TEST_DSN is set and no standby DSN (PGLOCK_TEST_STANDBY_DSN) was given");
            QFAIL("no standby: the pg_standby fixture did not write pgtest-standby.dsn");
        }
        standby_ = *standby;
        guarded([&] {
            pgt::RawConn raw(standby_);
            QVERIFY2(raw.boolean("SELECT pg_is_in_recovery()"), "the standby DSN is not a server in recovery");
        });
    }

    void try_acquire_refused_on_standby() {
        guarded([&] {
            pglock::Pool pool(standby_);
            Lock lk(pool, pgt::unique_name());
            PGT_EXPECT_ERROR(lk.try_acquire(Context::with_timeout(10s)), Errc::on_standby);
            PGT_EXPECT_ERROR(lk.acquire(Context::with_timeout(10s)), Errc::on_standby);
            PGT_EXPECT_ERROR(lk.run_once(Context::with_timeout(10s), [](pglock::Guard&) {}), Errc::on_standby);
            // Nothing was taken there.
            pgt::RawConn obs(standby_);
            QVERIFY(pgt::any_lock_pids(obs, lk.key()).empty());
        });
    }

    void allowed_on_standby_when_asked() {
        guarded([&] {
            pglock::Pool pool(standby_);
            pglock::LockOptions opts;
            opts.allow_standby = true;
            Lock lk(pool, pgt::unique_name(), opts);
            auto g = lk.try_acquire(Context::with_timeout(10s));
            QVERIFY2(g.has_value(), "allow_standby: a free lock was not acquired on the standby");
            {
                auto s = g->session();
                QVERIFY(s->in_recovery());
                QVERIFY(s->exec("SELECT pg_is_in_recovery()").get_bool(0, 0));
            }
            pgt::RawConn obs(standby_);
            QCOMPARE(pgt::granted_pids(obs, lk.key()), std::vector<int>{g->backend_pid()});
            QVERIFY(!g->release());
            QVERIFY(pgt::granted_pids(obs, lk.key()).empty());
        });
    }
};

QTEST_GUILESS_MAIN(TestStandby)
#include "test_standby.moc"
