// The guard, its watcher and its session() lease used the way ordinary programs use them: a
// health-check thread polling the guard, several lost-lock callbacks, the guard's own thread
// touching it while a lease is alive, and cleanup statements on a server that stopped answering.
#include <QElapsedTimer>
#include <QtTest>

#include <atomic>
#include <optional>
#include <random>
#include <stop_token>
#include <string>
#include <system_error>
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
using pgt::within;

class TestGuard : public QObject {
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

    // A holder whose health-check thread polls its own guard (released(), lost()) still gets its lost-lock notice within 1 s, in every trial.
    void lost_notice_reaches_a_guard_polled_by_another_thread() {
        guarded([&] {
            pglock::Pool pool(dsn_);
            for (int trial = 0; trial < 6; ++trial) {
                Lock lk(pool, pgt::unique_name());
                auto g = lk.try_acquire();
                QVERIFY(g.has_value());
                std::jthread poller([&](std::stop_token stop) {
                    while (!stop.stop_requested()) {
                        (void)g->released();
                        (void)g->lost();
                    }
                });
                std::this_thread::sleep_for(trial % 2 == 0 ? 5ms : 60ms);  // before / after the watch starts
                QVERIFY(terminate(g->backend_pid()));
                QElapsedTimer timer;
                timer.start();
                const bool lost = wait_until([&] { return g->lost(); }, 2s, 5ms);
                const auto elapsed = timer.elapsed();
                poller.request_stop();
                poller.join();
                QVERIFY2(lost, qPrintable(QStringLiteral("trial %1: lost() still false 2 s after the backend was "
                                                         "terminated while another thread polled the guard")
                                              .arg(trial)));
                QVERIFY2(elapsed < 1000, qPrintable(QStringLiteral("trial %1: loss noticed after %2 ms").arg(trial).arg(elapsed)));
            }
        });
    }

    // Every on_lost() callback runs, once each.
    void every_on_lost_callback_runs() {
        guarded([&] {
            pglock::Pool pool(dsn_);
            Lock lk(pool, pgt::unique_name());
            auto g = lk.try_acquire();
            QVERIFY(g.has_value());
            std::atomic<int> first{0}, second{0}, late{0};
            g->on_lost([&] { ++first; });
            g->on_lost([&] { ++second; });
            QVERIFY(terminate(g->backend_pid()));
            QVERIFY2(wait_until([&] { return first.load() > 0 && second.load() > 0; }, 2s),
                     qPrintable(QStringLiteral("callbacks after the loss: first %1, second %2")
                                    .arg(first.load())
                                    .arg(second.load())));
            g->on_lost([&] { ++late; });  // after the loss: runs at once
            QCOMPARE(late.load(), 1);
            std::this_thread::sleep_for(50ms);
            QCOMPARE(first.load(), 1);
            QCOMPARE(second.load(), 1);
        });
    }

    // The guard's own thread asks released() while it holds a lease: an answer, not a hang.
    void released_during_own_lease() {
        guarded([&] {
            pglock::Pool pool(dsn_);
            Lock lk(pool, pgt::unique_name());
            auto g = lk.try_acquire();
            QVERIFY(g.has_value());
            bool released = true;
            within(5000ms, "released() while this thread holds a session() lease", [&] {
                auto s = g->session();
                released = g->released();
            });
            QVERIFY(!released);
            QVERIFY(!g->release());
            QVERIFY(g->released());
        });
    }

    // release() on the lease's own thread is refused with resource_deadlock_would_occur (it would
    // wait for itself); the lock stays held, and a release after the lease works.
    void release_during_own_lease_is_refused() {
        guarded([&] {
            pglock::Pool pool(dsn_);
            Lock lk(pool, pgt::unique_name());
            auto g = lk.try_acquire();
            QVERIFY(g.has_value());
            std::error_code ec;
            std::int64_t after = 0;
            within(5000ms, "release() while this thread holds a session() lease", [&] {
                auto s = g->session();
                ec = g->release();
                after = s->exec("SELECT 1").get_int64(0, 0);  // the lease still works
            });
            QCOMPARE(after, std::int64_t{1});
            QVERIFY2(ec == std::errc::resource_deadlock_would_occur, pgt::describe(ec).c_str());
            QVERIFY(!g->released());
            QCOMPARE(granted_pids(*obs_, lk.key()), std::vector<int>{g->backend_pid()});
            QVERIFY(!g->release());
            QVERIFY(granted_pids(*obs_, lk.key()).empty());
        });
    }

    // A second lease on the same thread is refused the same way.
    void second_lease_on_one_thread_is_refused() {
        guarded([&] {
            pglock::Pool pool(dsn_);
            Lock lk(pool, pgt::unique_name());
            auto g = lk.try_acquire();
            QVERIFY(g.has_value());
            std::optional<std::error_code> refused;
            within(5000ms, "session() while this thread holds a session() lease", [&] {
                auto s = g->session();
                try {
                    auto again = g->session();
                } catch (const std::system_error& e) {
                    refused = e.code();
                }
            });
            QVERIFY2(refused.has_value(), "a second lease on the same thread was granted");
            QVERIFY2(*refused == std::errc::resource_deadlock_would_occur, pgt::describe(*refused).c_str());
            QVERIFY(!g->release());
        });
    }

    // The guard destroyed while its thread still holds a lease: the release happens when the
    // lease ends, and the session goes back to the pool lock-free.
    void guard_destroyed_during_own_lease() {
        guarded([&] {
            pglock::Pool pool(dsn_, pglock::PoolOptions{1});
            Lock lk(pool, pgt::unique_name());
            std::optional<Guard> g = lk.try_acquire();
            QVERIFY(g.has_value());
            const int pid = g->backend_pid();
            std::vector<int> during;
            within(5000ms, "~Guard while this thread holds a session() lease", [&] {
                auto s = g->session();
                g.reset();
                during = granted_pids(*obs_, lk.key());  // the lease still uses it
            });
            QCOMPARE(during, std::vector<int>{pid});
            QVERIFY(granted_pids(*obs_, lk.key()).empty());
            QCOMPARE(pool.idle_count(), std::size_t{1});
            auto s = pool.acquire(Context::with_timeout(5s));
            QCOMPARE(s->backend_pid(), pid);
        });
    }

    // A stop requested just as a statement completes must not leave the session's wake-up
    // signalled: the next statement on it, under a stop token nobody triggers, is not cancelled.
    void late_stop_does_not_cancel_the_next_statement() {
        guarded([&] {
            auto session = pglock::Session::connect(dsn_, Context::with_timeout(10s));
            // How long one statement takes here, to aim the stop requests around its end.
            QElapsedTimer t;
            t.start();
            for (int i = 0; i < 50; ++i) session.exec("SELECT 1", {}, Context{std::stop_source{}.get_token(), {}});
            const long long statement_ns = std::max<long long>(t.nsecsElapsed() / 50, 1000);

            // The stops are aimed at the end of the statement: each round that the stop cancelled
            // moves the aim later, each that completed moves it earlier, so most land right around
            // the moment the statement ends (where the gap was).
            constexpr int kRounds = 1500;
            std::vector<std::stop_source> sources(kRounds);
            std::atomic<int> go{-1}, fired{-1};
            std::atomic<long long> aim_ns{statement_ns};
            std::jthread stopper([&](std::stop_token quit) {
                std::minstd_rand rng{12345};
                for (int round = 0; round < kRounds && !quit.stop_requested(); ++round) {
                    for (int seen = go.load(); seen < round && !quit.stop_requested(); seen = go.load()) {
                        go.wait(seen);
                    }
                    const long long jitter = static_cast<long long>(rng() % 400) - 200;
                    const auto at = pgt::Clock::now() + std::chrono::nanoseconds(std::max(0LL, aim_ns.load() + jitter));
                    while (pgt::Clock::now() < at) {
                    }
                    sources[static_cast<std::size_t>(round)].request_stop();
                    fired = round;
                    fired.notify_one();
                }
            });
            int spurious = 0, checked = 0;
            for (int round = 0; round < kRounds; ++round) {
                bool completed = true;
                go = round;
                go.notify_one();
                try {
                    session.exec("SELECT 1", {}, Context{sources[static_cast<std::size_t>(round)].get_token(), {}});
                } catch (const pglock::Error&) {
                    completed = false;  // the stop came in time to cancel it: fine
                }
                for (int seen = fired.load(); seen < round; seen = fired.load()) fired.wait(seen);
                const long long step = aim_ns.load() / 32 + 50;  // proportional: fast and slow machines alike
                aim_ns = std::max(0LL, aim_ns.load() + (completed ? -step : step));
                if (!session.ok()) break;
                if (!completed) continue;
                ++checked;
                std::stop_source untouched;
                try {
                    session.exec("SELECT 1", {}, Context{untouched.get_token(), {}});
                } catch (const pglock::Error& e) {
                    if (e.code() != Errc::canceled) throw;
                    ++spurious;
                }
            }
            stopper.request_stop();
            go = kRounds;
            go.notify_one();
            stopper.join();
            QVERIFY2(spurious == 0, qPrintable(QStringLiteral("%1 of %2 statements after a late stop were cancelled "
                                                              "although their own stop token never fired")
                                                   .arg(spurious)
                                                   .arg(checked)));
            qInfo("%d rounds completed before their stop, final aim %lld ns", checked, aim_ns.load());
            QVERIFY2(checked > kRounds / 10, qPrintable(QStringLiteral("only %1 rounds completed").arg(checked)));
        });
    }

    // The rollback of an unfinished Transaction cannot be stopped by the caller: it is bounded,
    // and a server that does not answer costs the session, not a hang.
    void transaction_rollback_is_bounded() {
        guarded([&] {
            pglock::Pool pool(dsn_, pglock::PoolOptions{1});
            std::optional<pglock::Transaction> tx(std::in_place, pool, Context::with_timeout(10s));
            const int pid = tx->session().backend_pid();
            QElapsedTimer timer;
            {
                pgt::StoppedBackend frozen(pid);
                timer.start();
                within(12000ms, "~Transaction on a backend that does not answer", [&] { tx.reset(); });
            }
            QVERIFY2(timer.elapsed() < 8000, qPrintable(QStringLiteral("~Transaction took %1 ms").arg(timer.elapsed())));
            QCOMPARE(pool.open_count(), std::size_t{0});  // closed, not given back
        });
    }

    // The same for release(): bounded, and the lock goes with the closed session.
    void release_is_bounded() {
        guarded([&] {
            pglock::Pool pool(dsn_, pglock::PoolOptions{1});
            Lock lk(pool, pgt::unique_name());
            auto g = lk.try_acquire();
            QVERIFY(g.has_value());
            const int pid = g->backend_pid();
            QElapsedTimer timer;
            std::error_code ec;
            {
                pgt::StoppedBackend frozen(pid);
                timer.start();
                within(12000ms, "release() on a backend that does not answer", [&] { ec = g->release(); });
            }
            QVERIFY2(timer.elapsed() < 8000, qPrintable(QStringLiteral("release() took %1 ms").arg(timer.elapsed())));
            QVERIFY2(ec == Errc::release_failed, pgt::describe(ec).c_str());
            QCOMPARE(pool.open_count(), std::size_t{0});
            QVERIFY2(wait_until([&] { return granted_pids(*obs_, lk.key()).empty(); }, 5s),
                     "the lock outlived its closed session");
        });
    }
};

QTEST_GUILESS_MAIN(TestGuard)
#include "test_guard.moc"
