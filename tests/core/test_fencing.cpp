// Fencing tokens (LockOptions::fencing): a number per lock, taken from pglock_fence in the lock's
// own statement, that strictly increases from holder to holder: across pools, lost locks, failed
// and cancelled acquisitions, server crashes and restarts (on a cluster of the test's own).
#include <QtTest>

#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>

#include "core_test_util.hpp"
#include "own_cluster.hpp"

using namespace std::chrono_literals;
using pglock::Context;
using pglock::Errc;
using pglock::Lock;
using pglock::LockOptions;
using pgt::guarded;
using pgt::RawConn;
using pgt::wait_until;

namespace {

LockOptions fenced() {
    LockOptions o;
    o.fencing = true;
    return o;
}

}  // namespace

class TestFencing : public QObject {
    Q_OBJECT

    std::string dsn_;
    std::unique_ptr<RawConn> obs_;

    // The last token the table holds for `name`, read with plain libpq; -1 when it has no row.
    long long table_token(const std::string& name, const std::string& schema = "public") {
        auto res = obs_->query("SELECT token FROM " + schema + ".pglock_fence WHERE key = $1::bigint",
                               {std::to_string(pglock::key_of(name))});
        return PQntuples(res.get()) ? std::stoll(PQgetvalue(res.get(), 0, 0)) : -1;
    }

    // A schema of its own, for a table no other test touches; dropped by the caller.
    std::string fresh_schema() {
        std::string schema = "fence_" + QUuid::createUuid().toString(QUuid::Id128).toStdString();
        obs_->query("CREATE SCHEMA " + schema);
        return schema;
    }
    pglock::PoolOptions in_schema(const std::string& schema, std::size_t max_size = 2) {
        pglock::PoolOptions o;
        o.max_size = max_size;
        o.overrides = {{"options", "-c search_path=" + schema}};
        return o;
    }

private slots:
    void initTestCase() {
        PGT_REQUIRE_DSN(dsn_);
        obs_ = std::make_unique<RawConn>(dsn_);
        guarded([&] {
            pglock::Pool pool(dsn_, {.max_size = 1});
            pglock::fence::init(pool);  // the table of the default search_path, shared by the tests below
        });
    }

    // init creates the table once and reports it; a second init changes nothing. A fresh table
    // starts every lock at token 1, and stores the name as raw bytes (here with NUL and 0xff).
    void init_is_idempotent_and_tokens_start_at_one() {
        guarded([&] {
            const std::string schema = fresh_schema();
            {
                pglock::Pool pool(dsn_, in_schema(schema));
                const auto first = pglock::fence::init(pool);
                QVERIFY(first.created);
                QCOMPARE(pgt::qba(first.table), pgt::qba(schema + ".pglock_fence"));
                const auto second = pglock::fence::init(pool);
                QVERIFY(!second.created);
                QCOMPARE(pgt::qba(second.table), pgt::qba(first.table));
                QCOMPARE(obs_->scalar("SELECT relpersistence::text FROM pg_class WHERE oid = $1::regclass",
                                      {schema + ".pglock_fence"}),
                         std::string("p"));  // logged: tokens survive a crash

                const std::string name = pgt::unique_name() + std::string("\0\xff", 2);
                Lock lock(pool, name, fenced());
                QCOMPARE(pglock::fence::last_token(pool, name), std::optional<std::int64_t>{});
                auto g = lock.try_acquire(Context::with_timeout(10s));
                QVERIFY(g.has_value());
                QCOMPARE(g->fencing_token(), std::optional<std::int64_t>(1));
                QCOMPARE(pglock::fence::last_token(pool, name), std::optional<std::int64_t>(1));
                QCOMPARE(obs_->scalar("SELECT encode(name, 'hex') FROM " + schema + ".pglock_fence"),
                         pglock::fence::bytea_hex(name).substr(2));
                QCOMPARE(g->release(), std::error_code());
            }
            obs_->query("DROP TABLE IF EXISTS " + schema + ".pglock_fence");
            obs_->query("DROP SCHEMA " + schema);
        });
    }

    // Without the option a guard carries no token and the table is not touched.
    void no_token_without_the_option() {
        guarded([&] {
            pglock::Pool pool(dsn_, {.max_size = 1});
            const std::string name = pgt::unique_name();
            Lock lock(pool, name);
            auto g = lock.try_acquire(Context::with_timeout(10s));
            QVERIFY(g.has_value());
            QCOMPARE(g->fencing_token(), std::optional<std::int64_t>{});
            QCOMPARE(table_token(name), -1LL);
        });
    }

    // Two pools (two replicas) take turns, with try_acquire and acquire: every grant gets a
    // greater token than the one before, and the table agrees with the guard.
    void tokens_strictly_increase_across_holders() {
        guarded([&] {
            pglock::Pool a(dsn_, {.max_size = 2}), b(dsn_, {.max_size = 2});
            const std::string name = pgt::unique_name();
            Lock la(a, name, fenced()), lb(b, name, fenced());
            std::int64_t previous = 0;
            for (int i = 0; i < 40; ++i) {
                Lock& lock = i % 2 ? lb : la;
                auto g = i % 4 < 2 ? lock.try_acquire(Context::with_timeout(10s))
                                   : std::optional<pglock::Guard>(lock.acquire(Context::with_timeout(10s)));
                QVERIFY(g.has_value());
                const auto token = g->fencing_token();
                QVERIFY(token.has_value());
                QVERIFY2(*token > previous, (std::to_string(*token) + " after " + std::to_string(previous)).c_str());
                QCOMPARE(table_token(name), static_cast<long long>(*token));
                previous = *token;
                QCOMPARE(g->release(), std::error_code());
            }
        });
    }

    // Sessions whose default isolation is repeatable read or serializable (a server or role
    // setting): two fenced waiters queue behind a holder. The second one granted started its
    // statement, and took its snapshot, before the first one's token committed; both must still
    // get their token, each greater than the one before.
    void fenced_waiters_under_every_default_isolation() {
        guarded([&] {
            for (const char* isolation : {"repeatable\\ read", "serializable", "read\\ committed"}) {
                pglock::PoolOptions po;
                po.max_size = 1;
                po.overrides = {{"options", std::string("-c default_transaction_isolation=") + isolation}};
                pglock::Pool a(dsn_, po), b(dsn_, po);
                {
                    auto s = a.acquire(Context::with_timeout(10s));
                    const std::string shown(s->exec("SHOW default_transaction_isolation").get(0, 0));
                    QCOMPARE(pgt::qba(shown), pgt::qba(std::string(isolation)).replace("\\ ", " "));
                }
                const std::string name = pgt::unique_name();
                Lock la(a, name, fenced()), lb(b, name, fenced());
                std::int64_t first = 0;
                { first = *la.acquire(Context::with_timeout(10s)).fencing_token(); }  // the row exists

                RawConn holder(dsn_);
                holder.lock(la.key());
                std::optional<std::int64_t> tokens[2];
                std::string errors[2];
                auto waiter = [&](Lock& lock, int i) {
                    try {
                        auto g = lock.acquire(Context::with_timeout(20s));
                        tokens[i] = g.fencing_token();
                    } catch (...) {
                        errors[i] = pgt::describe(std::current_exception());
                    }
                };
                std::jthread wa(waiter, std::ref(la), 0);  // joined on every path, each bounded by its deadline
                QVERIFY(wait_until([&] { return pgt::waiting_pids(*obs_, la.key()).size() == 1; }, 10s));
                std::jthread wb(waiter, std::ref(lb), 1);
                QVERIFY(wait_until([&] { return pgt::waiting_pids(*obs_, la.key()).size() == 2; }, 10s));
                QVERIFY(holder.unlock(la.key()));
                wa.join();
                wb.join();
                QVERIFY2(errors[0].empty() && errors[1].empty(), (isolation + (": " + errors[0] + " / " + errors[1])).c_str());
                QVERIFY(tokens[0] && tokens[1]);
                QCOMPARE(std::min(*tokens[0], *tokens[1]), first + 1);
                QCOMPARE(std::max(*tokens[0], *tokens[1]), first + 2);
                QCOMPARE(table_token(name), static_cast<long long>(first + 2));
                QCOMPARE(pgt::any_lock_pids(*obs_, la.key()), std::vector<int>{});
            }
        });
    }

    // A try that finds the lock held takes no token: the next grant gets the very next number.
    void contended_try_takes_no_token() {
        guarded([&] {
            pglock::Pool pool(dsn_, {.max_size = 2});
            const std::string name = pgt::unique_name();
            Lock lock(pool, name, fenced());
            std::int64_t first = 0;
            {
                auto g = lock.try_acquire(Context::with_timeout(10s));
                QVERIFY(g.has_value());
                first = *g->fencing_token();
            }
            RawConn other(dsn_);
            other.lock(lock.key());
            for (int i = 0; i < 5; ++i) QVERIFY(!lock.try_acquire(Context::with_timeout(10s)).has_value());
            QCOMPARE(table_token(name), static_cast<long long>(first));
            QVERIFY(other.unlock(lock.key()));
            auto g = lock.try_acquire(Context::with_timeout(10s));
            QVERIFY(g.has_value());
            QCOMPARE(g->fencing_token(), std::optional<std::int64_t>(first + 1));
        });
    }

    // AcquireStrategy::poll retries the fenced try: tries that lose take no token either.
    void poll_strategy_takes_one_token_per_grant() {
        guarded([&] {
            const std::string app = "fence-poll-" + QUuid::createUuid().toString(QUuid::Id128).toStdString();
            pglock::Pool pool(dsn_, {.max_size = 2, .overrides = {{"application_name", app}}});
            const std::string name = pgt::unique_name();
            auto opts = fenced();
            opts.strategy = pglock::AcquireStrategy::poll;
            opts.poll = {5ms, 20ms};
            opts.show_in_application_name = false;
            Lock lock(pool, name, opts);
            RawConn other(dsn_);
            other.lock(lock.key());
            std::optional<pglock::Guard> g;
            std::optional<pglock::Error> err;
            // jthread: joined on every path; the acquire's deadline bounds it.
            std::jthread waiter([&] { err = pgt::catch_error([&] { g.emplace(lock.acquire(Context::with_timeout(20s))); }); });
            // Tries have run, and lost: the poller's session shows the try statement as its last
            // one, with a new query_start (the first sighting may be the PREPARE; any later
            // statement is a try, and the lock is still held by `other`).
            auto last_try = [&] {
                auto res = obs_->query("SELECT query_start::text FROM pg_stat_activity WHERE application_name = $1 "
                                       "AND query LIKE '%pg_try_advisory_lock%'", {app});
                return PQntuples(res.get()) == 1 ? std::string(PQgetvalue(res.get(), 0, 0)) : std::string();
            };
            std::string first;
            QVERIFY(wait_until([&] { return !(first = last_try()).empty(); }, 10s, 1ms));
            QVERIFY(wait_until([&] { const auto now = last_try(); return !now.empty() && now != first; }, 10s, 1ms));
            QVERIFY(other.unlock(lock.key()));
            waiter.join();
            QVERIFY2(!err, err ? pgt::describe(*err).c_str() : "");
            QVERIFY(g.has_value());
            QCOMPARE(g->fencing_token(), std::optional<std::int64_t>(1));
        });
    }

    // The holder's session dies (pg_terminate_backend): the guard turns lost and the next holder's
    // token is greater, so writes still carrying the old token can be refused.
    void lost_lock_next_token_is_greater() {
        guarded([&] {
            pglock::Pool pool(dsn_, {.max_size = 2});
            const std::string name = pgt::unique_name();
            Lock lock(pool, name, fenced());
            auto g = lock.acquire(Context::with_timeout(10s));
            const auto old = *g.fencing_token();
            QVERIFY(obs_->boolean("SELECT pg_terminate_backend($1::int)", {std::to_string(g.backend_pid())}));
            QVERIFY(wait_until([&] { return g.lost(); }, 10s));
            QCOMPARE(g.fencing_token(), std::optional<std::int64_t>(old));  // still what it was given

            pglock::Pool other(dsn_, {.max_size = 1});
            Lock next(other, name, fenced());
            auto g2 = next.try_acquire(Context::with_timeout(10s));
            QVERIFY(g2.has_value());
            QVERIFY(*g2->fencing_token() > old);
        });
    }

    // Crashes and a restart of the server: the table is logged, and a grant's commit is durable
    // even where synchronous_commit = off (as on this cluster), so no token handed out before a
    // crash is handed out again after it. A cluster of the test's own, so that the crashes
    // disturb no other test.
    void tokens_survive_crashes_and_restarts() {
        guarded([&] {
            pglock::test::OwnCluster cluster;
            // The WAL writer writes an asynchronous commit within wal_writer_delay: make that
            // long, so a crash right after the grant loses any commit that was not made durable.
            cluster.append_conf("wal_writer_delay = 10s\nwal_writer_flush_after = 1GB");
            cluster.restart();
            const std::string dsn = cluster.admin_dsn();
            QCOMPARE(RawConn(dsn).scalar("SHOW synchronous_commit"), std::string("off"));  // the worst case
            pglock::Pool pool(dsn, {.max_size = 2});
            pglock::fence::init(pool);
            Lock lock(pool, pgt::unique_name(), fenced());
            std::int64_t previous = 0;
            for (int round = 0; round < 5; ++round) {
                auto g = lock.acquire(Context::with_timeout(30s));
                const auto token = *g.fencing_token();
                QVERIFY2(token > previous, (std::to_string(token) + " after " + std::to_string(previous)).c_str());
                previous = token;
                if (round == 4) cluster.restart();
                else cluster.crash();
                QVERIFY(wait_until([&] { return g.lost(); }, 20s));
            }
            auto g = lock.acquire(Context::with_timeout(30s));
            QVERIFY(*g.fencing_token() > previous);
        });
    }

    // No table: a clear error that says what to run, and no lock left behind, for try_acquire,
    // acquire, and a table dropped after the statement was prepared on the session.
    void missing_table_is_a_clear_error_and_leaves_no_lock() {
        guarded([&] {
            const std::string schema = fresh_schema();
            {
                pglock::Pool pool(dsn_, in_schema(schema, 1));
                Lock lock(pool, pgt::unique_name(), fenced());
                for (const bool wait : {false, true}) {
                    const auto e = pgt::catch_error([&] {
                        if (wait) (void)lock.acquire(Context::with_timeout(10s));
                        else (void)lock.try_acquire(Context::with_timeout(10s));
                    });
                    QVERIFY(e.has_value());
                    QCOMPARE(e->code(), Errc::acquire_failed);
                    QCOMPARE(pgt::qba(e->sqlstate()), QByteArray("42P01"));
                    QVERIFY2(std::string(e->what()).find("pglock fence init") != std::string::npos, e->what());
                    QCOMPARE(pgt::any_lock_pids(*obs_, lock.key()), std::vector<int>{});
                }

                // Prepared while the table existed, run after it was dropped.
                pglock::fence::init(pool);
                { QVERIFY(lock.try_acquire(Context::with_timeout(10s)).has_value()); }
                { auto warm = lock.acquire(Context::with_timeout(10s)); }
                obs_->query("DROP TABLE " + schema + ".pglock_fence");
                for (const bool wait : {false, true}) {
                    const auto e = pgt::catch_error([&] {
                        if (wait) (void)lock.acquire(Context::with_timeout(10s));
                        else (void)lock.try_acquire(Context::with_timeout(10s));
                    });
                    QVERIFY(e.has_value());
                    QCOMPARE(pgt::qba(e->sqlstate()), QByteArray("42P01"));
                    QVERIFY2(std::string(e->what()).find("pglock fence init") != std::string::npos, e->what());
                    QCOMPARE(pgt::any_lock_pids(*obs_, lock.key()), std::vector<int>{});
                }
            }
            obs_->query("DROP TABLE IF EXISTS " + schema + ".pglock_fence");
            obs_->query("DROP SCHEMA " + schema);
        });
    }

    // The token's update fails after the lock was granted (bigint overflow): the acquisition fails,
    // the lock is not left held, the token is not consumed, and the pool goes on working. With and
    // without holder identity (application_name put back).
    void error_after_grant_leaves_no_lock() {
        guarded([&] {
            for (const bool named : {false, true}) {
                pglock::PoolOptions po;
                po.max_size = 1;
                po.show_in_application_name = named;
                po.overrides = {{"application_name", "fence-test"}};
                pglock::Pool pool(dsn_, po);
                const std::string name = pgt::unique_name();
                Lock lock(pool, name, fenced());
                { QVERIFY(lock.try_acquire(Context::with_timeout(10s)).has_value()); }  // the row exists
                const std::string key = std::to_string(lock.key());
                obs_->query("UPDATE pglock_fence SET token = 9223372036854775807 WHERE key = $1::bigint", {key});
                for (const bool wait : {false, true}) {
                    const auto e = pgt::catch_error([&] {
                        if (wait) (void)lock.acquire(Context::with_timeout(10s));
                        else (void)lock.try_acquire(Context::with_timeout(10s));
                    });
                    QVERIFY2(e.has_value(), "an overflowing token was handed out");
                    QCOMPARE(e->code(), Errc::acquire_failed);
                    QCOMPARE(pgt::qba(e->sqlstate()), QByteArray("22003"));
                    QCOMPARE(pgt::any_lock_pids(*obs_, lock.key()), std::vector<int>{});
                    QCOMPARE(table_token(name), 9223372036854775807LL);
                }
                // The pool's session (the same one, or a new one) is clean and works.
                {
                    auto s = pool.acquire(Context::with_timeout(10s));
                    QCOMPARE(pgt::qba(std::string(s->exec("SHOW application_name").get(0, 0))), QByteArray("fence-test"));
                }
                obs_->query("UPDATE pglock_fence SET token = 41 WHERE key = $1::bigint", {key});
                auto g = lock.acquire(Context::with_timeout(10s));
                QCOMPARE(g.fencing_token(), std::optional<std::int64_t>(42));
                QCOMPARE(pgt::granted_pids(*obs_, lock.key()), std::vector<int>{g.backend_pid()});
            }
        });
    }

    // A waiting acquire cut short by its deadline takes no token and leaves no lock; the next
    // grant gets the next number.
    void cancelled_wait_takes_no_token() {
        guarded([&] {
            pglock::Pool pool(dsn_, {.max_size = 1});
            const std::string name = pgt::unique_name();
            Lock lock(pool, name, fenced());
            std::int64_t first = 0;
            { first = *lock.acquire(Context::with_timeout(10s)).fencing_token(); }
            RawConn other(dsn_);
            other.lock(lock.key());
            PGT_EXPECT_ERROR(lock.acquire(Context::with_timeout(300ms)), Errc::deadline_exceeded);
            std::stop_source stop;
            std::jthread canceller([&] {  // joined on every path; its wait is bounded
                wait_until([&] { return pgt::waiting_pids(*obs_, lock.key()).size() == 1; }, 10s);
                stop.request_stop();
            });
            const auto e = pgt::catch_error([&] { (void)lock.acquire(Context{stop.get_token(), std::nullopt}); });
            canceller.join();
            QVERIFY(e.has_value());
            QCOMPARE(e->code(), Errc::canceled);
            QCOMPARE(pgt::any_lock_pids(*obs_, lock.key()), std::vector<int>{other.pid()});
            QCOMPARE(table_token(name), static_cast<long long>(first));
            QVERIFY(other.unlock(lock.key()));
            auto g = lock.acquire(Context::with_timeout(10s));
            QCOMPARE(g.fencing_token(), std::optional<std::int64_t>(first + 1));
        });
    }

    // With holder identity the holder still shows the lock's name, the guard's pid is the holder's,
    // and the session's own synchronous_commit is untouched (the statement raises it for its own
    // transaction only).
    void works_with_holder_identity_and_pid_check() {
        guarded([&] {
            pglock::PoolOptions po;
            po.max_size = 1;
            po.overrides = {{"application_name", "fence-app"}};
            pglock::Pool pool(dsn_, po);
            const std::string name = "fence." + QUuid::createUuid().toString(QUuid::Id128).toStdString();
            Lock lock(pool, name, fenced());
            std::string before;
            {
                auto s = pool.acquire();
                before = s->exec("SHOW synchronous_commit").get(0, 0);
            }
            auto g = lock.try_acquire(Context::with_timeout(10s));
            QVERIFY(g.has_value());
            QVERIFY(g->fencing_token().has_value());
            QCOMPARE(pgt::granted_pids(*obs_, lock.key()), std::vector<int>{g->backend_pid()});
            const std::string app =
                obs_->scalar("SELECT application_name FROM pg_stat_activity WHERE pid = $1::int",
                             {std::to_string(g->backend_pid())});
            QCOMPARE(pgt::qba(app), pgt::qba("fence-app pglock:" + name));
            {
                auto s = g->session();
                QCOMPARE(pgt::qba(std::string(s->exec("SHOW synchronous_commit").get(0, 0))), pgt::qba(before));
            }
            QCOMPARE(g->release(), std::error_code());
            const std::string after = obs_->scalar("SELECT application_name FROM pg_stat_activity WHERE pid = $1::int",
                                                   {std::to_string(g->backend_pid())});
            QCOMPARE(pgt::qba(after), QByteArray("fence-app"));
        });
    }

    // Shared holders run side by side (no token could tell them apart), and a transaction-level
    // lock has no guard to carry a token: both refused.
    void shared_and_transaction_level_are_refused() {
        guarded([&] {
            pglock::Pool pool(dsn_, {.max_size = 1});
            auto opts = fenced();
            opts.mode = pglock::Mode::shared;
            QVERIFY_THROWS_EXCEPTION(std::invalid_argument, Lock(pool, pgt::unique_name(), opts));
            Lock lock(pool, pgt::unique_name(), fenced());
            pglock::Transaction tx(pool);
            QVERIFY_THROWS_EXCEPTION(std::invalid_argument, lock.try_acquire_xact(&tx));
        });
    }

    // The token rides in the lock statement: try + release + acquire + release are four
    // statements on the wire, as without fencing, and nothing is prepared again.
    void no_extra_round_trip() {
        guarded([&] {
            pglock::Pool pool(dsn_, {.max_size = 1});
            Lock lk(pool, pgt::unique_name(), fenced());
            { auto warm = lk.acquire(); }  // prepares the statements, once per session
            { auto warm = lk.try_acquire(); }

            char* buffer = nullptr;
            std::size_t size = 0;
            FILE* trace = open_memstream(&buffer, &size);
            QVERIFY(trace);
            {
                auto s = pool.acquire();
                PQtrace(s->native_handle(), trace);
                PQsetTraceFlags(s->native_handle(), PQTRACE_SUPPRESS_TIMESTAMPS);
            }
            std::int64_t t1 = 0, t2 = 0;
            {
                auto g = lk.try_acquire();
                QVERIFY(g.has_value());
                t1 = *g->fencing_token();
                QVERIFY(!g->release());
                auto g2 = lk.acquire();
                t2 = *g2.fencing_token();
                QVERIFY(!g2.release());
            }
            {
                auto s = pool.acquire();
                PQuntrace(s->native_handle());
            }
            std::fclose(trace);
            const std::string text(buffer, size);
            std::free(buffer);
            QCOMPARE(t2, t1 + 1);
            const auto [syncs, parses, queries] = pgt::count_frontend_messages(text);
            QVERIFY2(syncs == 4, (std::to_string(syncs) + " statements for try+release+acquire+release:\n" + text).c_str());
            QCOMPARE(parses, 0);
            QCOMPARE(queries, 0);
        });
    }
};

QTEST_GUILESS_MAIN(TestFencing)
#include "test_fencing.moc"
