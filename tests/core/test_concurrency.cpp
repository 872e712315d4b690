// Threads racing on guards, locks and pools. Run under TSan by the tsan preset (label concurrency).
#include <QtTest>

#include <algorithm>
#include <atomic>
#include <exception>
#include <latch>
#include <memory>
#include <mutex>
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
using pglock::Outcome;
using pgt::any_lock_pids;
using pgt::granted_pids;
using pgt::guarded;
using pgt::RawConn;
using pgt::wait_until;
using pgt::waiting_pids;

namespace {

class CountingMetrics : public pglock::Metrics {
public:
    std::atomic<int> acquired{0}, contended{0}, errors{0}, holds{0};

    std::unique_ptr<pglock::LockMetrics> register_lock(std::string_view) override {
        struct Series : pglock::LockMetrics {
            CountingMetrics* m;
            explicit Series(CountingMetrics* owner) : m(owner) {}
            void count_acquire(Outcome o) override {
                (o == Outcome::acquired ? m->acquired : o == Outcome::contended ? m->contended : m->errors)++;
            }
            void observe_hold(double) override { ++m->holds; }
        };
        return std::make_unique<Series>(this);
    }
};

class CountingLogger : public pglock::Logger {
public:
    std::atomic<int> released{0}, release_failed{0};
    void log(pglock::LogLevel, std::string_view message, std::span<const pglock::LogAttr>) override {
        if (message == "lock: released") ++released;
        if (message == "lock: release failed") ++release_failed;
    }
};

std::string join_pids(const std::vector<int>& pids) {
    std::string s;
    for (int p : pids) s += (s.empty() ? "" : ",") + std::to_string(p);
    return "[" + s + "]";
}

// What the server says about the sessions (other than `except`) that hold or await the key.
std::string key_rows(RawConn& obs, std::int64_t key, int except) {
    const auto tag = pgt::tag_params(key);
    const auto res = obs.query(
        "SELECT l.pid, l.granted, a.state, a.wait_event, a.query FROM pg_locks l "
        "LEFT JOIN pg_stat_activity a ON a.pid = l.pid WHERE l.locktype = 'advisory' AND l.objsubid = 1 "
        "AND l.classid = $1::oid AND l.objid = $2::oid AND l.pid <> $3::int ORDER BY l.pid",
        {tag[0], tag[1], std::to_string(except)});
    std::string s;
    for (int r = 0; r < PQntuples(res.get()); ++r) {
        s += std::string(s.empty() ? "" : "; ") + "pid=" + PQgetvalue(res.get(), r, 0) +
             " granted=" + PQgetvalue(res.get(), r, 1) + " state=" + PQgetvalue(res.get(), r, 2) +
             " wait_event=" + PQgetvalue(res.get(), r, 3) + " query=" + PQgetvalue(res.get(), r, 4);
    }
    return s;
}

}  // namespace

class TestConcurrency : public QObject {
    Q_OBJECT

    std::string dsn_;
    std::unique_ptr<pglock::Pool> pool_;
    std::unique_ptr<RawConn> obs_;

private slots:
    void initTestCase() {
        PGT_REQUIRE_DSN(dsn_);
        guarded([&] {
            pool_ = std::make_unique<pglock::Pool>(dsn_, pglock::PoolOptions{20, std::chrono::milliseconds(10000)});
            obs_ = std::make_unique<RawConn>(dsn_);
        });
    }
    void cleanupTestCase() {
        pool_.reset();
        obs_.reset();
    }

    // 16 threads call release() on one guard at once: one unlock happens, all see its result.
    void racing_release_unlocks_once() {
        guarded([&] {
            constexpr int rounds = 10;
            constexpr int n = 16;
            for (int round = 0; round < rounds; ++round) {
                auto metrics = std::make_shared<CountingMetrics>();
                auto logger = std::make_shared<CountingLogger>();
                pglock::LockOptions opts;
                opts.metrics = metrics;
                opts.logger = logger;
                Lock lk(*pool_, pgt::unique_name(), opts);
                auto g = lk.try_acquire();
                QVERIFY(g.has_value());

                std::latch go(n);
                std::vector<std::error_code> results(n);
                std::vector<char> released_after(n, 0);
                {
                    std::vector<std::jthread> threads;
                    for (int i = 0; i < n; ++i) {
                        threads.emplace_back([&, i] {
                            go.arrive_and_wait();
                            results[static_cast<std::size_t>(i)] = g->release();
                            released_after[static_cast<std::size_t>(i)] = g->released() ? 1 : 0;
                            (void)g->lost();
                        });
                    }
                }
                for (int i = 0; i < n; ++i) {
                    const auto& ec = results[static_cast<std::size_t>(i)];
                    QVERIFY2(!ec, ("round " + std::to_string(round) + " thread " + std::to_string(i) +
                                   ": release() failed: " + pgt::describe(ec))
                                      .c_str());
                    QVERIFY2(released_after[static_cast<std::size_t>(i)], "released() false after release() returned");
                }
                QVERIFY2(granted_pids(*obs_, lk.key()).empty(), "lock still granted after 16 release() calls");
                QCOMPARE(metrics->holds.load(), 1);
                QCOMPARE(logger->released.load(), 1);
                QCOMPARE(logger->release_failed.load(), 0);
            }
        });
    }

    // 8 threads on two pools (two "replicas") take the same lock in turn: never two inside.
    void mutual_exclusion_under_contention() {
        guarded([&] {
            constexpr int threads = 8;
            constexpr int iterations = 25;
            const auto name = pgt::unique_name();
            pglock::Pool replica(dsn_);
            Lock la(*pool_, name);
            Lock lb(replica, name);

            // The counter is read and written in two steps, as a plain variable would be: lost
            // updates show overlaps. (Atomic loads/stores only so that TSan, which cannot see
            // the server's lock, does not report the deliberate race this test guards against.)
            std::atomic<long> counter{0};
            std::atomic<int> inside{0}, overlaps{0};
            std::latch go(threads);
            std::mutex err_mu;
            std::vector<std::string> errors;
            {
                std::vector<std::jthread> ts;
                for (int t = 0; t < threads; ++t) {
                    ts.emplace_back([&, t] {
                        Lock& lk = (t % 2) ? lb : la;
                        go.arrive_and_wait();
                        for (int i = 0; i < iterations; ++i) {
                            try {
                                auto g = lk.acquire(Context::with_timeout(60s));
                                if (inside.fetch_add(1) != 0) ++overlaps;
                                const long v = counter.load(std::memory_order_relaxed);
                                std::this_thread::yield();
                                counter.store(v + 1, std::memory_order_relaxed);
                                inside.fetch_sub(1);
                                if (const auto ec = g.release()) {
                                    std::lock_guard lk2(err_mu);
                                    errors.push_back("release: " + pgt::describe(ec));
                                }
                            } catch (...) {
                                std::lock_guard lk2(err_mu);
                                errors.push_back(pgt::describe(std::current_exception()));
                                return;
                            }
                        }
                    });
                }
            }
            for (const auto& e : errors) QFAIL(e.c_str());
            QCOMPARE(overlaps.load(), 0);
            QCOMPARE(counter.load(), long{threads * iterations});
            QVERIFY(any_lock_pids(*obs_, la.key()).empty());
        });
    }

    // Many threads hammer try_acquire on one Lock: at most one holds at a time.
    void try_acquire_storm() {
        guarded([&] {
            constexpr int threads = 12;
            constexpr int iterations = 30;
            auto metrics = std::make_shared<CountingMetrics>();
            pglock::LockOptions opts;
            opts.metrics = metrics;
            Lock lk(*pool_, pgt::unique_name(), opts);
            std::atomic<int> inside{0}, overlaps{0}, wins{0}, losses{0};
            std::latch go(threads);
            std::mutex err_mu;
            std::vector<std::string> errors;
            {
                std::vector<std::jthread> ts;
                for (int t = 0; t < threads; ++t) {
                    ts.emplace_back([&] {
                        go.arrive_and_wait();
                        for (int i = 0; i < iterations; ++i) {
                            try {
                                auto g = lk.try_acquire(Context::with_timeout(30s));
                                if (!g) {
                                    ++losses;
                                    continue;
                                }
                                ++wins;
                                if (inside.fetch_add(1) != 0) ++overlaps;
                                std::this_thread::yield();
                                inside.fetch_sub(1);
                            } catch (...) {
                                std::lock_guard lk2(err_mu);
                                errors.push_back(pgt::describe(std::current_exception()));
                                return;
                            }
                        }
                    });
                }
            }
            for (const auto& e : errors) QFAIL(e.c_str());
            QCOMPARE(overlaps.load(), 0);
            QCOMPARE(wins.load() + losses.load(), threads * iterations);
            QVERIFY(wins.load() > 0);
            QCOMPARE(metrics->acquired.load(), wins.load());
            QCOMPARE(metrics->contended.load(), losses.load());
            QCOMPARE(metrics->holds.load(), wins.load());
            QVERIFY(any_lock_pids(*obs_, lk.key()).empty());
        });
    }

    // A cancelled acquire leaves no waiting backend and no grant that arrives later.
    void canceled_acquire_leaves_nothing_behind() {
        guarded([&] {
            Lock lk(*pool_, pgt::unique_name());
            RawConn holder(dsn_);
            holder.lock(lk.key());

            std::stop_source stop;
            std::optional<pglock::Error> err;
            std::exception_ptr other;
            std::atomic<bool> returned{false};
            std::jthread t([&] {
                try {
                    auto g = lk.acquire(Context{stop.get_token(), pglock::Clock::now() + 30s});
                } catch (const pglock::Error& e) {
                    err = e;
                } catch (...) {
                    other = std::current_exception();
                }
                returned = true;
            });
            std::vector<int> waiters;
            QVERIFY2(wait_until([&] { waiters = waiting_pids(*obs_, lk.key()); return !waiters.empty() || returned; }, 10s),
                     "acquire() never waited");
            QVERIFY(!returned.load());
            stop.request_stop();
            t.join();
            QVERIFY2(!other, pgt::describe(other).c_str());
            QVERIFY2(err.has_value(), "acquire() did not fail although the lock stayed held");
            QCOMPARE(err->code(), Errc::canceled);
            QVERIFY2(wait_until([&] { return waiting_pids(*obs_, lk.key()).empty(); }, 2s),
                     ("still waiting after cancel: " + join_pids(waiting_pids(*obs_, lk.key()))).c_str());

            QVERIFY(holder.unlock(lk.key()));
            // No late grant to the cancelled waiter (or any pooled session) for a while.
            std::vector<int> late;
            const bool leaked = wait_until([&] { late = any_lock_pids(*obs_, lk.key()); return !late.empty(); }, 500ms);
            QVERIFY2(!leaked, ("late grant after cancel, pids " + join_pids(late) + ", waiter was " +
                               join_pids(waiters)).c_str());
            auto fresh = lk.try_acquire();
            QVERIFY2(fresh.has_value(), "a fresh try_acquire failed after the cancelled wait");
        });
    }

    // Cancels racing the wait at random moments: every call fails with canceled, nothing is left.
    void cancel_race_stress() {
        guarded([&] {
            Lock lk(*pool_, pgt::unique_name());
            RawConn holder(dsn_);
            holder.lock(lk.key());
            std::mt19937 rng(std::random_device{}());
            for (int i = 0; i < 20; ++i) {
                std::stop_source stop;
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
                });
                // A random moment: before the query is sent, while it is in flight, or waiting.
                std::this_thread::sleep_for(std::chrono::microseconds(rng() % 5000));
                stop.request_stop();
                t.join();
                QVERIFY2(!other, pgt::describe(other).c_str());
                QVERIFY2(!acquired, "acquired a lock the holder never released");
                QVERIFY2(err.has_value(), "no error");
                QVERIFY2(err->code() == Errc::canceled, ("iteration " + std::to_string(i) + ": " + pgt::describe(*err)).c_str());
                const auto rows = any_lock_pids(*obs_, lk.key());
                QVERIFY2(rows == std::vector<int>{holder.pid()},
                         ("iteration " + std::to_string(i) + ": pg_locks rows " + join_pids(rows) +
                          " after the cancelled call returned; holder " + std::to_string(holder.pid()))
                             .c_str());
            }
            QVERIFY(holder.unlock(lk.key()));
            std::vector<int> late;
            QVERIFY2(!wait_until([&] { late = any_lock_pids(*obs_, lk.key()); return !late.empty(); }, 500ms),
                     ("late grant: " + join_pids(late)).c_str());
        });
    }

    // Short deadlines (or stop requests) racing a session that grabs and drops the lock: a call
    // that returned an error never leaves the key granted to (or awaited by) a pooled session.
    void interrupt_race_never_leaks_data() {
        QTest::addColumn<bool>("use_stop");
        QTest::newRow("deadline") << false;
        QTest::newRow("stop_token") << true;
    }

    void interrupt_race_never_leaks() {
        QFETCH(bool, use_stop);
        guarded([&] {
            const Errc expected = use_stop ? Errc::canceled : Errc::deadline_exceeded;
            Lock lk(*pool_, pgt::unique_name());
            // Warm the pool: a session that is connected and has the lock statements prepared, so
            // the short limits below fall on the lock wait, not on connecting.
            {
                Lock warm(*pool_, pgt::unique_name("interrupt_race.warm"));
                auto g = warm.acquire(Context::with_timeout(10s));
            }
            RawConn grabber(dsn_);
            const int grabber_pid = grabber.pid();
            auto holds_only_grabber = [&] { return granted_pids(*obs_, lk.key()) == std::vector<int>{grabber_pid}; };
            std::exception_ptr grabber_err;
            std::jthread grab([&](std::stop_token st) {
                std::mt19937 rng(12345);
                try {
                    while (!st.stop_requested()) {
                        grabber.lock(lk.key());
                        std::this_thread::sleep_for(std::chrono::microseconds(3000 + rng() % 20000));
                        grabber.unlock(lk.key());
                        std::this_thread::sleep_for(std::chrono::microseconds(rng() % 1000));
                    }
                } catch (...) {
                    grabber_err = std::current_exception();
                }
            });
            QVERIFY2(wait_until(holds_only_grabber, 5s), "the grabber never took the lock");

            std::mt19937 rng(std::random_device{}());
            int successes = 0, failures = 0;
            std::vector<std::string> problems;
            constexpr int iterations = 150;
            for (int i = 0; i < iterations && problems.empty(); ++i) {
                // Start each attempt while the grabber holds the lock (its hold has 3-23 ms left).
                if (!wait_until(holds_only_grabber, 5s, 1ms)) {
                    problems.push_back("iteration " + std::to_string(i) + ": the grabber did not get the lock back: " +
                                       key_rows(*obs_, lk.key(), grabber_pid));
                    break;
                }
                const auto limit = std::chrono::milliseconds(1 + rng() % 20);
                try {
                    if (use_stop) {
                        std::stop_source stop;
                        std::jthread stopper([&] {
                            std::this_thread::sleep_for(limit);
                            stop.request_stop();
                        });
                        auto g = lk.acquire(Context{stop.get_token(), pglock::Clock::now() + 10s});
                        ++successes;
                        if (const auto ec = g.release()) problems.push_back("release: " + pgt::describe(ec));
                    } else {
                        auto g = lk.acquire(Context::with_timeout(limit));
                        ++successes;
                        if (const auto ec = g.release()) problems.push_back("release: " + pgt::describe(ec));
                    }
                } catch (const pglock::Error& e) {
                    ++failures;
                    if (e.code() != expected)
                        problems.push_back("iteration " + std::to_string(i) + ": " + pgt::describe(e));
                    auto rows = any_lock_pids(*obs_, lk.key());
                    rows.erase(std::remove(rows.begin(), rows.end(), grabber_pid), rows.end());
                    if (!rows.empty()) {
                        const std::string now = key_rows(*obs_, lk.key(), grabber_pid);
                        std::string later;
                        const bool cleared = wait_until(
                            [&] { return (later = key_rows(*obs_, lk.key(), grabber_pid)).empty(); }, 500ms, 5ms);
                        problems.push_back("iteration " + std::to_string(i) + " (limit " + std::to_string(limit.count()) +
                                           " ms, " + e.what() +
                                           "): after the error returned, pooled session(s) still hold/await the key: " +
                                           now + (cleared ? " (gone within 500 ms)" : " (still there after 500 ms: " + later + ")"));
                    }
                }
            }
            grab.request_stop();
            // A grant leaked to a pooled session blocks the grabber forever: free the key by
            // ending the backends that still have it (they are reported above).
            std::vector<int> stuck;
            if (!wait_until([&] {
                    stuck = any_lock_pids(*obs_, lk.key());
                    stuck.erase(std::remove(stuck.begin(), stuck.end(), grabber_pid), stuck.end());
                    return stuck.empty();
                }, 2s)) {
                problems.push_back("at the end: " + key_rows(*obs_, lk.key(), grabber_pid));
                for (int pid : stuck) obs_->query("SELECT pg_terminate_backend($1::int)", {std::to_string(pid)});
            }
            grab.join();
            QVERIFY2(!grabber_err, pgt::describe(grabber_err).c_str());
            for (const auto& p : problems) QFAIL(p.c_str());
            QVERIFY2(failures > 0 && successes > 0,
                     qPrintable(QStringLiteral("the race was not exercised: %1 acquired, %2 interrupted")
                                    .arg(successes).arg(failures)));
            qInfo("%s race: %d acquired, %d interrupted", use_stop ? "stop" : "deadline", successes, failures);
            QVERIFY(any_lock_pids(*obs_, lk.key()).empty());
        });
    }

    // An interrupt that lands while the lock statement is being prepared must not leave the
    // session's prepared-statement bookkeeping out of step with the server (which would make
    // every later lock on that pooled session fail with 42P05 "prepared statement already exists").
    // Deadlines sweep 0-6 ms over the first PREPARE of fresh sessions; the bad window (PREPARE done
    // after the poll gave up but before the cancel landed) is narrow, so this catches it only
    // sometimes.
    void interrupted_prepare_does_not_poison_the_session() {
        guarded([&] {
            std::vector<std::string> problems;
            int interrupted = 0;
            for (int step = 0; step < 40 && problems.empty(); ++step) {
                pglock::Pool pool(dsn_, pglock::PoolOptions{1, std::chrono::milliseconds(10000)});
                { auto warm = pool.acquire(Context::with_timeout(10s)); }  // connected, nothing prepared
                Lock lk(pool, pgt::unique_name("prepare_race"));
                const auto limit = std::chrono::microseconds(150 * step);
                const bool blocking = step % 2 == 0;
                try {
                    if (blocking) {
                        auto g = lk.acquire(Context::with_timeout(limit));
                    } else {
                        auto g = lk.try_acquire(Context::with_timeout(limit));
                    }
                } catch (const pglock::Error& e) {
                    if (e.code() != Errc::deadline_exceeded) problems.push_back("first: " + pgt::describe(e));
                    ++interrupted;
                }
                // The same (only) session again, with time to spare: must work.
                try {
                    if (blocking) {
                        auto g = lk.acquire(Context::with_timeout(10s));
                    } else {
                        auto g = lk.try_acquire(Context::with_timeout(10s));
                        if (!g) problems.push_back("try_acquire of a free lock was contended");
                    }
                } catch (const pglock::Error& e) {
                    problems.push_back(std::string(blocking ? "acquire" : "try_acquire") + " after a " +
                                       std::to_string(limit.count()) + " us deadline: " + pgt::describe(e));
                }
            }
            for (const auto& p : problems) QFAIL(p.c_str());
            QVERIFY2(interrupted > 0, "no deadline fired: nothing was exercised");
        });
    }

    // Many threads, different locks, a pool of 2: everyone gets through and the pool stays bounded.
    void small_pool_many_threads() {
        guarded([&] {
            pglock::Pool small(dsn_, pglock::PoolOptions{2, std::chrono::milliseconds(10000)});
            constexpr int threads = 8;
            constexpr int iterations = 10;
            std::atomic<std::size_t> max_open{0};
            std::atomic<int> done{0};
            std::latch go(threads);
            std::mutex err_mu;
            std::vector<std::string> errors;
            {
                std::vector<std::jthread> ts;
                for (int t = 0; t < threads; ++t) {
                    ts.emplace_back([&, t] {
                        Lock lk(small, pgt::unique_name(("small_pool." + std::to_string(t)).c_str()));
                        go.arrive_and_wait();
                        for (int i = 0; i < iterations; ++i) {
                            try {
                                auto g = lk.acquire(Context::with_timeout(60s));
                                std::size_t open = small.open_count();
                                std::size_t seen = max_open.load();
                                while (open > seen && !max_open.compare_exchange_weak(seen, open)) {
                                }
                                if (const auto ec = g.release()) throw pglock::Error(Errc::release_failed, ec.message());
                                ++done;
                            } catch (...) {
                                std::lock_guard lk2(err_mu);
                                errors.push_back(pgt::describe(std::current_exception()));
                                return;
                            }
                        }
                    });
                }
            }
            for (const auto& e : errors) QFAIL(e.c_str());
            QCOMPARE(done.load(), threads * iterations);
            QVERIFY2(max_open.load() <= 2, qPrintable(QStringLiteral("pool of 2 had %1 open").arg(max_open.load())));
            QVERIFY(small.open_count() <= 2);
        });
    }
};

QTEST_GUILESS_MAIN(TestConcurrency)
#include "test_concurrency.moc"
