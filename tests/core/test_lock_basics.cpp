// The Go package's lock tests, ported, and the rest of the Lock surface, against a real server.
// The "other replica" is a plain libpq session (pgt::RawConn) or a second pglock::Pool.
#include <QElapsedTimer>
#include <QtTest>

#include <algorithm>
#include <atomic>
#include <exception>
#include <latch>
#include <memory>
#include <optional>
#include <stop_token>
#include <string>
#include <thread>
#include <vector>

#include "core_test_util.hpp"

using namespace std::chrono_literals;
using pglock::Context;
using pglock::Errc;
using pglock::Guard;
using pglock::Lock;
using pglock::Mode;
using pgt::granted_pids;
using pgt::guarded;
using pgt::qba;
using pgt::RawConn;
using pgt::wait_until;
using pgt::waiting_pids;

namespace {
struct Boom {
    int value;
};
}  // namespace

class TestLockBasics : public QObject {
    Q_OBJECT

    std::string dsn_;
    std::unique_ptr<pglock::Pool> pool_;
    std::unique_ptr<RawConn> obs_;  // observer: reads pg_locks / pg_stat_activity

private slots:
    void initTestCase() {
        PGT_REQUIRE_DSN(dsn_);
        guarded([&] {
            pool_ = std::make_unique<pglock::Pool>(dsn_);
            obs_ = std::make_unique<RawConn>(dsn_);
        });
    }

    void cleanupTestCase() {
        pool_.reset();
        obs_.reset();
    }

    // Go: TestTryAcquire_HappyPath
    void try_acquire_happy_path() {
        guarded([&] {
            const auto name = pgt::unique_name();
            Lock lk(*pool_, name);
            QCOMPARE(qba(lk.name()), qba(name));
            const auto before = pglock::Clock::now();
            auto g = lk.try_acquire();
            QVERIFY2(g.has_value(), "a free lock was not acquired");
            QVERIFY(!g->released());
            QVERIFY(!g->lost());
            QCOMPARE(g->key(), pglock::key_of(name));
            QCOMPARE(qba(g->name()), qba(name));
            QCOMPARE(g->mode(), Mode::exclusive);
            QVERIFY(g->backend_pid() > 0);
            QVERIFY(g->acquired_at() >= before && g->acquired_at() <= pglock::Clock::now());
            QCOMPARE(granted_pids(*obs_, lk.key()), std::vector<int>{g->backend_pid()});

            const auto ec = g->release();
            QVERIFY2(!ec, pgt::describe(ec).c_str());
            QVERIFY(g->released());
            QVERIFY2(granted_pids(*obs_, lk.key()).empty(), "lock still granted after release() returned");
        });
    }

    // Go: TestTryAcquire_AlreadyHeld
    void try_acquire_already_held() {
        guarded([&] {
            Lock lk(*pool_, pgt::unique_name());
            RawConn other(dsn_);
            QVERIFY(other.try_lock(lk.key()));
            auto g = lk.try_acquire();
            QVERIFY2(!g.has_value(), "acquired a lock another session holds");
            QCOMPARE(granted_pids(*obs_, lk.key()), std::vector<int>{other.pid()});
            QVERIFY(other.unlock(lk.key()));
            g = lk.try_acquire();
            QVERIFY2(g.has_value(), "not acquired after the other session unlocked");
        });
    }

    // The pool must never lend the session that holds a lock: a second try on the same Lock
    // (another session) is contended.
    void second_try_on_same_lock_is_contended() {
        guarded([&] {
            Lock lk(*pool_, pgt::unique_name());
            auto g1 = lk.try_acquire();
            QVERIFY(g1.has_value());
            auto g2 = lk.try_acquire();
            QVERIFY2(!g2.has_value(), "a second try_acquire got the lock: reentrant on a lent-out session?");
            QCOMPARE(granted_pids(*obs_, lk.key()), std::vector<int>{g1->backend_pid()});
        });
    }

    // Go: TestRelease_AllowsReacquire
    void release_allows_reacquire() {
        guarded([&] {
            const auto name = pgt::unique_name();
            Lock lk(*pool_, name);
            pglock::Pool replica(dsn_);  // another process, in effect
            Lock other_lk(replica, name);

            auto g1 = lk.try_acquire();
            QVERIFY(g1.has_value());
            QVERIFY2(!other_lk.try_acquire().has_value(), "second pool acquired a held lock");
            QVERIFY(!g1->release());
            auto g2 = other_lk.try_acquire();
            QVERIFY2(g2.has_value(), "not acquired after release");
            QVERIFY(!g2->release());

            // The destructor releases too.
            {
                auto g3 = lk.try_acquire();
                QVERIFY(g3.has_value());
            }
            RawConn raw(dsn_);
            QVERIFY2(raw.try_lock(lk.key()), "lock still held after the guard was destroyed");
            QVERIFY(raw.unlock(lk.key()));
        });
    }

    void release_twice_is_harmless() {
        guarded([&] {
            Lock lk(*pool_, pgt::unique_name());
            auto g = lk.try_acquire();
            QVERIFY(g.has_value());
            const auto first = g->release();
            const auto second = g->release();
            QVERIFY2(!first, pgt::describe(first).c_str());
            QVERIFY2(first == second, ("second release() differs: " + pgt::describe(second)).c_str());
            QVERIFY(granted_pids(*obs_, lk.key()).empty());
        });
    }

    void guard_move_keeps_the_lock() {
        guarded([&] {
            Lock lk(*pool_, pgt::unique_name());
            auto g = lk.try_acquire();
            QVERIFY(g.has_value());
            const int pid = g->backend_pid();
            Guard moved = std::move(*g);
            g.reset();  // destroying the moved-from guard must not release
            QCOMPARE(granted_pids(*obs_, lk.key()), std::vector<int>{pid});
            QCOMPARE(moved.backend_pid(), pid);
            QVERIFY(!moved.release());
            QVERIFY(granted_pids(*obs_, lk.key()).empty());
        });
    }

    void guard_move_assign_releases_the_old_lock() {
        guarded([&] {
            Lock a(*pool_, pgt::unique_name("move_assign.a"));
            Lock b(*pool_, pgt::unique_name("move_assign.b"));
            auto ga = a.try_acquire();
            auto gb = b.try_acquire();
            QVERIFY(ga.has_value() && gb.has_value());
            const int pid_b = gb->backend_pid();
            *ga = std::move(*gb);
            QVERIFY2(granted_pids(*obs_, a.key()).empty(), "move-assigned-over guard kept its lock");
            QCOMPARE(granted_pids(*obs_, b.key()), std::vector<int>{pid_b});
            QCOMPARE(ga->key(), b.key());
            gb.reset();
            QCOMPARE(granted_pids(*obs_, b.key()), std::vector<int>{pid_b});
            ga.reset();
            QVERIFY(granted_pids(*obs_, b.key()).empty());
        });
    }

    // Go: TestAcquire_BlocksUntilRelease
    void acquire_blocks_until_release() {
        guarded([&] {
            Lock lk(*pool_, pgt::unique_name());
            RawConn holder(dsn_);
            holder.lock(lk.key());

            std::atomic<bool> returned{false};
            std::optional<Guard> got;
            std::exception_ptr err;
            std::jthread t([&](std::stop_token st) {
                try {
                    got.emplace(lk.acquire(Context{st, pglock::Clock::now() + 30s}));
                } catch (...) {
                    err = std::current_exception();
                }
                returned = true;
            });

            std::vector<int> waiters;
            QVERIFY2(wait_until([&] { waiters = waiting_pids(*obs_, lk.key()); return !waiters.empty() || returned; }, 10s),
                     "acquire() never waited on the server");
            QVERIFY2(!returned.load(), ("acquire() returned while the lock was held: " + pgt::describe(err)).c_str());
            QCOMPARE(waiters.size(), std::size_t{1});

            QVERIFY(holder.unlock(lk.key()));
            t.join();
            QVERIFY2(!err, pgt::describe(err).c_str());
            QVERIFY(got.has_value());
            QCOMPARE(got->backend_pid(), waiters.front());
            QCOMPARE(granted_pids(*obs_, lk.key()), std::vector<int>{got->backend_pid()});
        });
    }

    // Go: TestAcquire_CtxCancel (stop_token)
    void acquire_canceled_by_stop() {
        guarded([&] {
            Lock lk(*pool_, pgt::unique_name());
            RawConn holder(dsn_);
            holder.lock(lk.key());

            std::stop_source stop;
            std::atomic<bool> returned{false};
            std::optional<pglock::Error> err;
            std::exception_ptr other;
            bool acquired = false;
            std::jthread t([&] {
                try {
                    auto g = lk.acquire(Context{stop.get_token(), pglock::Clock::now() + 30s});
                    acquired = true;
                } catch (const pglock::Error& e) {
                    err = e;
                } catch (...) {
                    other = std::current_exception();
                }
                returned = true;
            });
            QVERIFY2(wait_until([&] { return !waiting_pids(*obs_, lk.key()).empty() || returned; }, 10s),
                     "acquire() never waited on the server");
            QVERIFY(!returned.load());

            QElapsedTimer timer;
            timer.start();
            stop.request_stop();
            t.join();
            QVERIFY2(timer.elapsed() < 5000, qPrintable(QStringLiteral("cancel took %1 ms").arg(timer.elapsed())));
            QVERIFY2(!other, pgt::describe(other).c_str());
            QVERIFY2(!acquired, "acquire() succeeded although the holder never released");
            QVERIFY2(err.has_value(), "acquire() returned without an error");
            QCOMPARE(err->code(), Errc::canceled);
            // The server-side wait is cancelled before acquire() returns.
            QVERIFY2(waiting_pids(*obs_, lk.key()).empty(), "a backend still waits for the lock after cancel");
            QCOMPARE(granted_pids(*obs_, lk.key()), std::vector<int>{holder.pid()});
        });
    }

    // Go: TestAcquire_CtxCancel (deadline)
    void acquire_deadline_exceeded() {
        guarded([&] {
            Lock lk(*pool_, pgt::unique_name());
            RawConn holder(dsn_);
            holder.lock(lk.key());
            QElapsedTimer timer;
            timer.start();
            const auto err = pgt::catch_error([&] { (void)lk.acquire(Context::with_timeout(300ms)); });
            const auto elapsed = timer.elapsed();
            QVERIFY2(err.has_value(), "acquire() of a held lock returned before its deadline without error");
            QCOMPARE(err->code(), Errc::deadline_exceeded);
            QVERIFY2(elapsed >= 280, qPrintable(QStringLiteral("gave up early: %1 ms").arg(elapsed)));
            QVERIFY2(elapsed < 5000, qPrintable(QStringLiteral("deadline overrun: %1 ms").arg(elapsed)));
            QVERIFY2(waiting_pids(*obs_, lk.key()).empty(), "a backend still waits for the lock after the deadline");
            QCOMPARE(granted_pids(*obs_, lk.key()), std::vector<int>{holder.pid()});
        });
    }

    void context_already_done() {
        guarded([&] {
            Lock lk(*pool_, pgt::unique_name());
            std::stop_source stop;
            stop.request_stop();
            PGT_EXPECT_ERROR(lk.try_acquire(Context{stop.get_token(), std::nullopt}), Errc::canceled);
            PGT_EXPECT_ERROR(lk.acquire(Context{stop.get_token(), std::nullopt}), Errc::canceled);
            const Context past{{}, pglock::Clock::now() - 1s};
            PGT_EXPECT_ERROR(lk.try_acquire(past), Errc::deadline_exceeded);
            PGT_EXPECT_ERROR(lk.acquire(past), Errc::deadline_exceeded);
            QVERIFY2(pgt::any_lock_pids(*obs_, lk.key()).empty(), "a done context still took the lock");
        });
    }

    // Go: TestRunOnce_OnlyOneRunsConcurrently
    void run_once_runs_exactly_one() {
        guarded([&] {
            const auto name = pgt::unique_name();
            constexpr int n = 5;
            std::latch start(n);
            std::atomic<int> calls{0}, ran{0}, skipped{0};
            std::atomic<bool> fn_saw_all_skips{false};
            std::vector<std::exception_ptr> errors(n);
            {
                std::vector<std::jthread> threads;
                for (int i = 0; i < n; ++i) {
                    threads.emplace_back([&, i] {
                        start.arrive_and_wait();
                        try {
                            const bool r = pglock::run_once(*pool_, name, Context::with_timeout(30s), [&](Guard&) {
                                ++calls;
                                // Hold the lock until every other caller has been turned away.
                                fn_saw_all_skips = wait_until([&] { return skipped.load() == n - 1; }, 10s, 1ms);
                            });
                            ++(r ? ran : skipped);
                        } catch (...) {
                            errors[static_cast<std::size_t>(i)] = std::current_exception();
                        }
                    });
                }
            }
            for (const auto& e : errors) QVERIFY2(!e, pgt::describe(e).c_str());
            QCOMPARE(calls.load(), 1);
            QCOMPARE(ran.load(), 1);
            QCOMPARE(skipped.load(), n - 1);
            QVERIFY2(fn_saw_all_skips.load(), "the other callers did not all return false while fn held the lock");
            QVERIFY(granted_pids(*obs_, pglock::key_of(name)).empty());
        });
    }

    void run_once_skips_when_contended() {
        guarded([&] {
            Lock lk(*pool_, pgt::unique_name());
            RawConn holder(dsn_);
            QVERIFY(holder.try_lock(lk.key()));
            int calls = 0;
            const bool r = lk.run_once({}, [&](Guard&) { ++calls; });
            QVERIFY(!r);
            QCOMPARE(calls, 0);
            QVERIFY(holder.unlock(lk.key()));
            int pid = 0;
            QVERIFY(lk.run_once({}, [&](Guard& g) {
                ++calls;
                pid = g.backend_pid();
            }));
            QCOMPARE(calls, 1);
            QVERIFY(pid > 0);
        });
    }

    // Go: TestRunOnce_PropagatesFnError
    void run_once_propagates_exception_and_releases() {
        guarded([&] {
            Lock lk(*pool_, pgt::unique_name());
            int pid = 0;
            bool held_inside = false;
            bool caught = false;
            try {
                lk.run_once({}, [&](Guard& g) {
                    pid = g.backend_pid();
                    held_inside = granted_pids(*obs_, lk.key()) == std::vector<int>{pid};
                    throw std::runtime_error("boom");
                });
            } catch (const pglock::Error& e) {
                QFAIL(("fn's exception was replaced by " + pgt::describe(e)).c_str());
            } catch (const std::runtime_error& e) {
                caught = std::string(e.what()) == "boom";
            }
            QVERIFY2(caught, "fn's std::runtime_error(\"boom\") did not propagate unchanged");
            QVERIFY(held_inside);
            QVERIFY2(granted_pids(*obs_, lk.key()).empty(), "lock still held after fn threw");

            // A non-std exception type too (the free function).
            int value = 0;
            try {
                pglock::run_once(*pool_, lk.name(), {}, [](Guard&) { throw Boom{42}; });
            } catch (const Boom& b) {
                value = b.value;
            }
            QCOMPARE(value, 42);
            RawConn raw(dsn_);
            QVERIFY2(raw.try_lock(lk.key()), "lock still held after fn threw (free run_once)");
            QVERIFY(raw.unlock(lk.key()));
            QVERIFY(!lk.is_held());
        });
    }

    void run_blocking_waits_then_runs() {
        guarded([&] {
            Lock lk(*pool_, pgt::unique_name());
            RawConn holder(dsn_);
            holder.lock(lk.key());
            std::atomic<int> calls{0};
            std::atomic<bool> returned{false};
            std::exception_ptr err;
            std::jthread t([&](std::stop_token st) {
                try {
                    lk.run_blocking(Context{st, pglock::Clock::now() + 30s}, [&](Guard&) { ++calls; });
                } catch (...) {
                    err = std::current_exception();
                }
                returned = true;
            });
            QVERIFY2(wait_until([&] { return !waiting_pids(*obs_, lk.key()).empty() || returned; }, 10s),
                     "run_blocking() never waited on the server");
            QCOMPARE(calls.load(), 0);
            QVERIFY(holder.unlock(lk.key()));
            t.join();
            QVERIFY2(!err, pgt::describe(err).c_str());
            QCOMPARE(calls.load(), 1);
            QVERIFY(granted_pids(*obs_, lk.key()).empty());
        });
    }

    // A cancelled run_blocking never calls fn, leaves nothing held, and says canceled.
    void run_blocking_cancelled() {
        guarded([&] {
            Lock lk(*pool_, pgt::unique_name());
            RawConn holder(dsn_);
            holder.lock(lk.key());
            std::stop_source stop;
            std::atomic<int> calls{0};
            std::optional<pglock::Error> err;
            std::jthread t([&] {
                // Bounded by the deadline too, so a failure below never leaves this thread behind.
                err = pgt::catch_error([&] {
                    lk.run_blocking(Context{stop.get_token(), pglock::Clock::now() + 30s}, [&](Guard&) { ++calls; });
                });
            });
            QVERIFY2(wait_until([&] { return !waiting_pids(*obs_, lk.key()).empty(); }, 10s),
                     "run_blocking() never waited on the server");
            stop.request_stop();
            t.join();
            QVERIFY2(err.has_value(), "a cancelled run_blocking returned normally");
            QCOMPARE(err->code(), Errc::canceled);
            QCOMPARE(calls.load(), 0);
            QCOMPARE(pgt::any_lock_pids(*obs_, lk.key()), std::vector<int>{holder.pid()});
            QVERIFY(holder.unlock(lk.key()));
        });
    }

    // fn throws: the exception reaches the caller unchanged, after the lock was released.
    void run_blocking_propagates_exception_and_releases() {
        guarded([&] {
            Lock lk(*pool_, pgt::unique_name());
            int held_by = 0;
            bool caught = false;
            try {
                lk.run_blocking(Context::with_timeout(10s), [&](Guard& g) {
                    held_by = g.backend_pid();
                    QCOMPARE(granted_pids(*obs_, lk.key()), std::vector<int>{held_by});
                    throw std::logic_error("boom");
                });
            } catch (const std::logic_error& e) {
                caught = std::string(e.what()) == "boom";
            }
            QVERIFY2(caught, "fn's exception did not reach the caller");
            QVERIFY(held_by != 0);
            QCOMPARE(pgt::any_lock_pids(*obs_, lk.key()), std::vector<int>{});
            QVERIFY(!lk.is_held());
        });
    }

    // is_held on a server that cannot be reached: an error, never a made-up answer.
    void is_held_fails_when_the_server_does() {
        guarded([&] {
            pglock::Pool dead("host=127.0.0.1 port=1 connect_timeout=2");
            Lock lk(dead, pgt::unique_name());
            PGT_EXPECT_ERROR(lk.is_held(Context::with_timeout(20s)), Errc::acquire_failed);
            PGT_EXPECT_ERROR(lk.holders(Context::with_timeout(20s)), Errc::connection_failed);
        });
    }

    // Go: TestNew_PanicsOnNilDB / TestNew_PanicsOnEmptyName
    void nil_pool_and_empty_name_rejected() {
        guarded([&] {
            pglock::Pool* none = nullptr;
            PGT_EXPECT_ERROR(Lock(none, "orders.daily-rollup"), Errc::nil_db);
            PGT_EXPECT_ERROR(Lock(nullptr, "orders.daily-rollup"), Errc::nil_db);
            PGT_EXPECT_ERROR(Lock(*pool_, ""), Errc::empty_name);
            PGT_EXPECT_ERROR(Lock(pool_.get(), std::string()), Errc::empty_name);
            PGT_EXPECT_ERROR(pglock::run_once(*pool_, "", {}, [](Guard&) {}), Errc::empty_name);
            PGT_EXPECT_ERROR(pglock::run_blocking(*pool_, "", {}, [](Guard&) {}), Errc::empty_name);
        });
    }

    // Go: TestKey_Deterministic
    void key_deterministic() {
        guarded([&] {
            const auto name = pgt::unique_name();
            Lock a(*pool_, name);
            Lock b(*pool_, name);
            Lock c(*pool_, name + "x");
            QCOMPARE(a.key(), pglock::key_of(name));
            QCOMPARE(a.key(), b.key());
            QVERIFY(a.key() != c.key());
            QVERIFY(a.tag() == pglock::tag_of(a.key()));
            QCOMPARE(Lock(*pool_, "orders.daily-rollup").key(), -7132652647757890940LL);

            // The server's own SHA-256 agrees, for any bytes (NUL and invalid UTF-8 included).
            const std::string names[] = {name, "orders.daily-rollup", "\xd0\xb1\xd0\xbb\xd0\xbe\xd0\xba",
                                         std::string("a\0b", 3), "\xff\xfe", std::string(100000, 'z')};
            for (const auto& n : names) {
                const auto hex = QByteArray::fromStdString(n).toHex().toStdString();
                const auto server = obs_->integer(
                    "SELECT ('x' || substr(encode(sha256(decode($1, 'hex')), 'hex'), 1, 16))::bit(64)::bigint", {hex});
                QCOMPARE(qint64(server), qint64(Lock(*pool_, n).key()));
            }
        });
    }

    void name_with_nul_locks_its_own_key() {
        guarded([&] {
            const std::string name = pgt::unique_name() + std::string("\0tail", 5);
            Lock lk(*pool_, name);
            QCOMPARE(lk.name().size(), name.size());
            QCOMPARE(lk.key(), pglock::key_of(name));
            auto g = lk.try_acquire();
            QVERIFY(g.has_value());
            QCOMPARE(granted_pids(*obs_, pglock::key_of(name)), std::vector<int>{g->backend_pid()});
            // The prefix up to the NUL is another lock.
            Lock prefix(*pool_, name.substr(0, name.find('\0')));
            QVERIFY(prefix.key() != lk.key());
            auto gp = prefix.try_acquire();
            QVERIFY2(gp.has_value(), "the name was cut at the NUL byte");
        });
    }

    // Go: TestTryAcquireXact_HappyPath
    void xact_happy_path() {
        guarded([&] {
            Lock lk(*pool_, pgt::unique_name());
            RawConn other(dsn_);
            {
                pglock::Transaction tx(*pool_);
                QVERIFY(tx.active());
                QVERIFY2(lk.try_acquire_xact(&tx), "free lock not acquired in a transaction");
                const int pid = tx.session().backend_pid();
                QCOMPARE(granted_pids(*obs_, lk.key()), std::vector<int>{pid});
                QVERIFY2(!other.try_lock(lk.key()), "another session took a lock held by a transaction");
                // Session-level locks of the same name interlock with it.
                QVERIFY2(!lk.try_acquire().has_value(), "session-level try_acquire got a lock held by a tx");
                // The transaction still works.
                QCOMPARE(tx.session().exec("SELECT 41 + 1").get_int64(0, 0), std::int64_t{42});
                QCOMPARE(granted_pids(*obs_, lk.key()), std::vector<int>{pid});
            }  // ~Transaction rolls back
            QVERIFY2(granted_pids(*obs_, lk.key()).empty(), "xact lock outlived its transaction");
        });
    }

    // Go: TestTryAcquireXact_Contended
    void xact_contended() {
        guarded([&] {
            Lock lk(*pool_, pgt::unique_name());
            RawConn other(dsn_);
            QVERIFY(other.try_lock(lk.key()));
            pglock::Transaction tx(*pool_);
            QVERIFY2(!lk.try_acquire_xact(&tx), "acquired in a tx a lock another session holds");
            QVERIFY(tx.active());
            QCOMPARE(granted_pids(*obs_, lk.key()), std::vector<int>{other.pid()});
            // A session-level guard from the library contends with it too.
            QVERIFY(other.unlock(lk.key()));
            auto g = lk.try_acquire();
            QVERIFY(g.has_value());
            QVERIFY2(!lk.try_acquire_xact(&tx), "acquired in a tx a lock a guard holds");
            tx.rollback();
        });
    }

    // Go: TestTryAcquireXact_RollbackReleases
    void xact_rollback_releases() {
        guarded([&] {
            Lock lk(*pool_, pgt::unique_name());
            RawConn other(dsn_);
            pglock::Transaction tx(*pool_);
            QVERIFY(lk.try_acquire_xact(&tx));
            QVERIFY(!other.try_lock(lk.key()));
            tx.rollback();
            QVERIFY(!tx.active());
            QVERIFY2(other.try_lock(lk.key()), "lock still held after rollback");
            QVERIFY(other.unlock(lk.key()));
        });
    }

    void xact_commit_releases() {
        guarded([&] {
            Lock lk(*pool_, pgt::unique_name());
            RawConn other(dsn_);
            pglock::Transaction tx(*pool_);
            QVERIFY(lk.try_acquire_xact(&tx));
            QVERIFY(!other.try_lock(lk.key()));
            tx.commit();
            QVERIFY(!tx.active());
            QVERIFY2(other.try_lock(lk.key()), "lock still held after commit");
            QVERIFY(other.unlock(lk.key()));
        });
    }

    // Go: TestTryAcquireXact_NilTx
    void xact_without_transaction() {
        guarded([&] {
            Lock lk(*pool_, pgt::unique_name());
            PGT_EXPECT_ERROR(lk.try_acquire_xact(nullptr), Errc::acquire_failed);
            pglock::Transaction tx(*pool_);
            tx.commit();
            PGT_EXPECT_ERROR(lk.try_acquire_xact(&tx), Errc::acquire_failed);
            QVERIFY(pgt::any_lock_pids(*obs_, lk.key()).empty());
        });
    }

    // Go: TestIsHeld
    void is_held_and_holders() {
        guarded([&] {
            Lock lk(*pool_, pgt::unique_name());
            QVERIFY2(!lk.is_held(), "free lock reported held");
            QVERIFY2(pgt::any_lock_pids(*obs_, lk.key()).empty(), "is_held() left the lock taken");
            QVERIFY(lk.holders().empty());

            RawConn other(dsn_);
            QVERIFY(other.try_lock(lk.key()));
            QVERIFY2(lk.is_held(), "lock held by another session reported free");
            QCOMPARE(lk.holders(), std::vector<int>{other.pid()});
            QCOMPARE(granted_pids(*obs_, lk.key()), std::vector<int>{other.pid()});
            QVERIFY(other.unlock(lk.key()));
            QVERIFY(!lk.is_held());

            auto g = lk.try_acquire();
            QVERIFY(g.has_value());
            QVERIFY2(lk.is_held(), "lock held by our own guard reported free");
            QCOMPARE(lk.holders(), std::vector<int>{g->backend_pid()});
        });
    }

    void shared_mode() {
        guarded([&] {
            const auto name = pgt::unique_name();
            pglock::LockOptions so;
            so.mode = Mode::shared;
            Lock sh(*pool_, name, so);
            Lock ex(*pool_, name);
            QCOMPARE(sh.mode(), Mode::shared);
            QCOMPARE(ex.mode(), Mode::exclusive);

            auto g1 = sh.try_acquire();
            auto g2 = sh.try_acquire();
            QVERIFY2(g1.has_value() && g2.has_value(), "two shared guards could not coexist");
            QCOMPARE(g1->mode(), Mode::shared);
            QVERIFY(g1->backend_pid() != g2->backend_pid());
            std::vector<int> expected{g1->backend_pid(), g2->backend_pid()};
            std::sort(expected.begin(), expected.end());
            QCOMPARE(granted_pids(*obs_, sh.key()), expected);
            QCOMPARE(sh.holders(), expected);
            const auto mode = obs_->scalar(
                "SELECT string_agg(DISTINCT mode, ',') FROM pg_locks WHERE locktype = 'advisory' AND objsubid = 1 "
                "AND classid = $1::oid AND objid = $2::oid",
                pgt::tag_params(sh.key()));
            QCOMPARE(qba(mode), QByteArray("ShareLock"));

            QVERIFY2(!ex.try_acquire().has_value(), "exclusive try succeeded while shared guards hold");
            RawConn other(dsn_);
            QVERIFY(!other.try_lock(sh.key()));
            QVERIFY(other.try_lock_shared(sh.key()));
            QVERIFY(other.unlock_shared(sh.key()));

            QVERIFY(!g1->release());
            QVERIFY2(!ex.try_acquire().has_value(), "exclusive try succeeded while one shared guard holds");
            QVERIFY(!g2->release());
            auto gx = ex.try_acquire();
            QVERIFY2(gx.has_value(), "exclusive try failed after the shared guards released");
            QVERIFY2(!sh.try_acquire().has_value(), "shared try succeeded while an exclusive guard holds");
        });
    }

    // The library's lock is the server's advisory lock on the bigint key, as pg_locks shows it.
    void visible_to_plain_sessions_and_pg_locks() {
        guarded([&] {
            Lock lk(*pool_, pgt::unique_name());
            auto g = lk.try_acquire();
            QVERIFY(g.has_value());
            RawConn other(dsn_);
            QVERIFY2(!other.try_lock(lk.key()), "pg_try_advisory_lock(key) succeeded while the guard holds");

            const auto tag = pglock::tag_of(lk.key());
            const auto bits = static_cast<std::uint64_t>(lk.key());
            auto res = obs_->query(
                "SELECT pid, granted, classid::bigint, objid::bigint, objsubid, "
                "((classid::bigint << 32) | objid::bigint) AS key, mode "
                "FROM pg_locks WHERE locktype = 'advisory' AND classid = $1::oid AND objid = $2::oid",
                pgt::tag_params(lk.key()));
            QCOMPARE(PQntuples(res.get()), 1);
            QCOMPARE(std::atoi(PQgetvalue(res.get(), 0, 0)), g->backend_pid());
            QCOMPARE(qba(PQgetvalue(res.get(), 0, 1)), QByteArray("t"));
            QCOMPARE(std::stoull(PQgetvalue(res.get(), 0, 2)), bits >> 32);
            QCOMPARE(std::stoull(PQgetvalue(res.get(), 0, 3)), bits & 0xffffffffu);
            QCOMPARE(std::stoull(PQgetvalue(res.get(), 0, 2)), std::uint64_t{tag.classid});
            QCOMPARE(qba(PQgetvalue(res.get(), 0, 4)), QByteArray("1"));
            QCOMPARE(std::stoll(PQgetvalue(res.get(), 0, 5)), static_cast<long long>(lk.key()));
            QCOMPARE(qba(PQgetvalue(res.get(), 0, 6)), QByteArray("ExclusiveLock"));

            // The library's ops SQL finds the holder on the real server.
            {
                const std::string q(pglock::pg_locks_query());
                auto r = obs_->query(q, pgt::tag_params(lk.key()));
                const int col = PQfnumber(r.get(), "pid");
                QVERIFY2(col >= 0, ("pg_locks_query() has no pid column: " + q).c_str());
                QCOMPARE(PQntuples(r.get()), 1);
                QCOMPARE(std::atoi(PQgetvalue(r.get(), 0, col)), g->backend_pid());
            }
            {
                const std::string q = pglock::pg_locks_sql(lk.key());
                auto r = obs_->query(q);
                const int col = PQfnumber(r.get(), "pid");
                QVERIFY2(col >= 0, ("pg_locks_sql() has no pid column: " + q).c_str());
                QCOMPARE(PQntuples(r.get()), 1);
                QCOMPARE(std::atoi(PQgetvalue(r.get(), 0, col)), g->backend_pid());
            }
        });
    }

    // Go: TestAcquireConn
    void acquire_conn_runs_on_the_lock_session() {
        guarded([&] {
            Lock lk(*pool_, pgt::unique_name());
            auto g = lk.acquire_conn(Context::with_timeout(10s));
            {
                auto s = g.session();
                QCOMPARE(static_cast<int>(s->exec("SELECT pg_backend_pid()").get_int64(0, 0)), g.backend_pid());
                QCOMPARE(s->backend_pid(), g.backend_pid());
                // The lock is on this very session: it can take it again (reentrant) and drop that.
                QVERIFY(s->exec("SELECT pg_try_advisory_lock($1::bigint)", {lk.key()}).get_bool(0, 0));
                QVERIFY(s->exec("SELECT pg_advisory_unlock($1::bigint)", {lk.key()}).get_bool(0, 0));
            }
            QCOMPARE(granted_pids(*obs_, lk.key()), std::vector<int>{g.backend_pid()});
            QVERIFY(!g.lost());
            QVERIFY(!g.release());
            QVERIFY(granted_pids(*obs_, lk.key()).empty());
            PGT_EXPECT_ERROR(g.session(), Errc::release_failed);
        });
    }
};

QTEST_GUILESS_MAIN(TestLockBasics)
#include "test_lock_basics.moc"
