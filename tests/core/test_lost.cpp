// Lost locks: the session holding a lock dies under the guard.
#include <QElapsedTimer>
#include <QtTest>

#include <algorithm>
#include <atomic>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "core_test_util.hpp"

using namespace std::chrono_literals;
using pglock::Context;
using pglock::Errc;
using pglock::Guard;
using pglock::Lock;
using pgt::granted_pids;
using pgt::guarded;
using pgt::RawConn;
using pgt::wait_until;

class TestLost : public QObject {
    Q_OBJECT

    std::string dsn_;
    std::unique_ptr<RawConn> obs_;

    bool terminate(int pid) {
        return obs_->boolean("SELECT pg_terminate_backend($1::int)", {std::to_string(pid)});
    }

private slots:
    void initTestCase() {
        PGT_REQUIRE_DSN(dsn_);
        guarded([&] { obs_ = std::make_unique<RawConn>(dsn_); });
    }
    void cleanupTestCase() { obs_.reset(); }

    void backend_terminated_while_held() {
        guarded([&] {
            pglock::Pool pool(dsn_, pglock::PoolOptions{4, std::chrono::milliseconds(10000)});
            Lock lk(pool, pgt::unique_name());
            auto g = lk.try_acquire();
            QVERIFY(g.has_value());
            const int dead_pid = g->backend_pid();
            std::atomic<int> fired{0};
            g->on_lost([&] { ++fired; });
            const auto token = g->lost_token();
            QVERIFY(!g->lost());
            QVERIFY(!token.stop_requested());
            QCOMPARE(fired.load(), 0);

            QElapsedTimer timer;
            timer.start();
            QVERIFY(terminate(dead_pid));
            const bool lost = wait_until([&] { return g->lost(); }, 5s, 5ms);
            const auto elapsed = timer.elapsed();
            QVERIFY2(lost, "guard.lost() still false 5 s after its backend was terminated");
            QVERIFY2(elapsed < 1000, qPrintable(QStringLiteral("loss noticed after %1 ms (> 1 s)").arg(elapsed)));
            QVERIFY2(wait_until([&] { return fired.load() > 0; }, 1s), "on_lost callback not called");
            QVERIFY2(token.stop_requested(), "lost_token() not stopped");
            QVERIFY2(g->lost_token().stop_requested(), "a fresh lost_token() not stopped");

            // A callback registered after the loss runs at once.
            std::atomic<int> late{0};
            g->on_lost([&] { ++late; });
            QVERIFY2(wait_until([&] { return late.load() > 0; }, 1s), "on_lost after the loss did not run");

            PGT_EXPECT_ERROR(g->session(), Errc::lock_lost);
            const auto ec = g->release();
            QVERIFY2(ec == Errc::lock_lost, ("release() of a lost lock: " + pgt::describe(ec)).c_str());
            QVERIFY(g->released());
            QCOMPARE(fired.load(), 1);
            QCOMPARE(late.load(), 1);

            // The lock is free on the server.
            RawConn other(dsn_);
            QVERIFY(other.try_lock(lk.key()));
            QVERIFY(other.unlock(lk.key()));

            // The pool never lends the dead session: take several at once; all work, none is it.
            std::vector<pglock::PooledSession> sessions;
            std::set<int> pids;
            for (int i = 0; i < 4; ++i) {
                sessions.push_back(pool.acquire(Context::with_timeout(10s)));
                auto& s = sessions.back();
                QCOMPARE(s->exec("SELECT 1").get_int64(0, 0), std::int64_t{1});
                QVERIFY2(s->backend_pid() != dead_pid, "the pool lent the terminated session");
                pids.insert(s->backend_pid());
            }
            QCOMPARE(pids.size(), std::size_t{4});
            // And the lock works again through the same pool.
            sessions.clear();
            auto again = lk.try_acquire();
            QVERIFY(again.has_value());
            QVERIFY(again->backend_pid() != dead_pid);
            QVERIFY(!again->lost());
        });
    }

    // Every idle session of the pool died (a server restart, or an operator terminating them):
    // try_acquire() and acquire() still get the lock, on a new session, and report no error.
    void lock_never_fails_on_dead_idle_sessions() {
        guarded([&] {
            pglock::Pool pool(dsn_, {.max_size = 3});
            Lock a(pool, pgt::unique_name()), b(pool, pgt::unique_name()), c(pool, pgt::unique_name());
            for (int round = 0; round < 2; ++round) {
                std::set<int> dead;
                {
                    auto ga = a.try_acquire(Context::with_timeout(10s));
                    auto gb = b.try_acquire(Context::with_timeout(10s));
                    auto gc = c.try_acquire(Context::with_timeout(10s));
                    QVERIFY(ga && gb && gc);
                    dead = {ga->backend_pid(), gb->backend_pid(), gc->backend_pid()};
                }
                QCOMPARE(pool.idle_count(), std::size_t{3});
                for (int pid : dead) QVERIFY(terminate(pid));
                QVERIFY(wait_until([&] { return std::none_of(dead.begin(), dead.end(), [&](int pid) {
                                       return pgt::backend_exists(*obs_, pid); }); }, 5s));
                std::optional<Guard> g;
                try {
                    g = round == 0 ? a.try_acquire(Context::with_timeout(10s)) : a.acquire(Context::with_timeout(10s));
                } catch (const pglock::Error& e) {
                    QFAIL((std::string("a lock failed on a dead idle session: ") + e.what()).c_str());
                }
                QVERIFY(g.has_value());
                QVERIFY2(!dead.count(g->backend_pid()), "the lock was granted on a terminated session");
                QCOMPARE(granted_pids(*obs_, a.key()), std::vector<int>{g->backend_pid()});
                QVERIFY(!g->release());
                QVERIFY(pool.open_count() <= 3);
            }
        });
    }

    // The backend dies and release() runs before the watcher has looked (its watch starts a
    // moment after the grant): the unlock statement finds the session dead. That is a lost lock,
    // as the contract says, not a failed release; and the guard turns lost.
    void release_finds_the_session_dead() {
        guarded([&] {
            pglock::Pool pool(dsn_, {.max_size = 1});
            Lock lk(pool, pgt::unique_name());
            for (int round = 0; round < 5; ++round) {
                auto g = lk.try_acquire(Context::with_timeout(10s));
                QVERIFY(g.has_value());
                const int pid = g->backend_pid();
                QVERIFY(terminate(pid));
                QVERIFY(wait_until([&] { return !pgt::backend_exists(*obs_, pid); }, 5s, 1ms));
                const auto ec = g->release();
                QVERIFY2(ec == Errc::lock_lost, ("round " + std::to_string(round) + ": " + pgt::describe(ec)).c_str());
                QVERIFY(g->lost());
            }
        });
    }

    // on_lost fires once even with several callbacks... and only for the guard that lost.
    void only_the_dead_guard_is_lost() {
        guarded([&] {
            pglock::Pool pool(dsn_);
            Lock a(pool, pgt::unique_name("only_dead.a"));
            Lock b(pool, pgt::unique_name("only_dead.b"));
            auto ga = a.try_acquire();
            auto gb = b.try_acquire();
            QVERIFY(ga.has_value() && gb.has_value());
            std::atomic<int> fired_b{0};
            gb->on_lost([&] { ++fired_b; });
            QVERIFY(terminate(ga->backend_pid()));
            QVERIFY2(wait_until([&] { return ga->lost(); }, 2s), "terminated guard not lost");
            QVERIFY(!gb->lost());
            QCOMPARE(fired_b.load(), 0);
            QCOMPARE(granted_pids(*obs_, b.key()), std::vector<int>{gb->backend_pid()});
            QVERIFY(!gb->release());
        });
    }

    // A healthy guard is not reported lost, also while its session is used through a lease.
    void no_false_loss() {
        guarded([&] {
            pglock::Pool pool(dsn_);
            Lock lk(pool, pgt::unique_name());
            auto g = lk.acquire_conn(Context::with_timeout(10s));
            std::atomic<int> fired{0};
            g.on_lost([&] { ++fired; });
            const auto end = pglock::Clock::now() + 400ms;
            int queries = 0;
            while (pglock::Clock::now() < end) {
                auto s = g.session();
                QCOMPARE(s->exec("SELECT $1::int + 1", {queries}).get_int64(0, 0), std::int64_t{queries + 1});
                ++queries;
                QVERIFY(!g.lost());
            }
            // Idle a moment with the watcher on it (observing that nothing happens takes time).
            std::this_thread::sleep_for(200ms);
            QVERIFY2(!g.lost(), "a healthy guard was reported lost");
            QCOMPARE(fired.load(), 0);
            QVERIFY(!g.lost_token().stop_requested());
            QCOMPARE(granted_pids(*obs_, lk.key()), std::vector<int>{g.backend_pid()});
            QVERIFY(!g.release());
        });
    }

    // acquire_conn: the server closes the session while the caller works on it through a lease.
    void lost_while_leased() {
        guarded([&] {
            pglock::Pool pool(dsn_);
            Lock lk(pool, pgt::unique_name());
            auto g = lk.acquire_conn(Context::with_timeout(10s));
            const int pid = g.backend_pid();
            std::atomic<int> fired{0};
            g.on_lost([&] { ++fired; });
            {
                auto s = g.session();
                QCOMPARE(s->exec("SELECT 1").get_int64(0, 0), std::int64_t{1});
                QVERIFY(terminate(pid));
                QVERIFY2(wait_until([&] { return !pgt::backend_exists(*obs_, pid); }, 5s), "backend not gone");
                const auto err = pgt::catch_error([&] { (void)s->exec("SELECT 1", {}, Context::with_timeout(5s)); });
                QVERIFY2(err.has_value(), "a query on a terminated session succeeded");
                QVERIFY2(err->code() == Errc::connection_failed || err->code() == Errc::query_failed,
                         pgt::describe(*err).c_str());
                QVERIFY(!s->ok() || !s->check_alive());
            }  // the lease ends: the guard learns its session died
            QElapsedTimer timer;
            timer.start();
            QVERIFY2(wait_until([&] { return g.lost(); }, 5s, 5ms), "guard not lost after its leased session died");
            QVERIFY2(timer.elapsed() < 1000, qPrintable(QStringLiteral("loss noticed after %1 ms").arg(timer.elapsed())));
            QVERIFY(wait_until([&] { return fired.load() > 0; }, 1s));
            QVERIFY(g.lost_token().stop_requested());
            PGT_EXPECT_ERROR(g.session(), Errc::lock_lost);
            const auto ec = g.release();
            QVERIFY2(ec == Errc::lock_lost, pgt::describe(ec).c_str());
            QCOMPARE(fired.load(), 1);

            auto s2 = pool.acquire(Context::with_timeout(10s));
            QVERIFY(s2->backend_pid() != pid);
            QCOMPARE(s2->exec("SELECT 1").get_int64(0, 0), std::int64_t{1});
        });
    }

    // The watcher notices a loss even when the caller is blocked in nothing: the guard is idle,
    // its callback may release() (documented as allowed).
    void on_lost_callback_may_release() {
        guarded([&] {
            pglock::Pool pool(dsn_);
            Lock lk(pool, pgt::unique_name());
            auto g = lk.try_acquire();
            QVERIFY(g.has_value());
            std::atomic<bool> done{false};
            std::error_code from_callback;
            Guard* gp = &*g;
            g->on_lost([&] {
                from_callback = gp->release();
                done = true;
            });
            QVERIFY(terminate(g->backend_pid()));
            QVERIFY2(wait_until([&] { return done.load(); }, 2s), "on_lost callback did not run");
            QVERIFY2(from_callback == Errc::lock_lost, pgt::describe(from_callback).c_str());
            QVERIFY(g->released());
            QVERIFY(g->release() == from_callback);
        });
    }
};

QTEST_GUILESS_MAIN(TestLost)
#include "test_lost.moc"
