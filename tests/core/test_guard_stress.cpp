// Stress: several threads acquire, release, poll (released(), lost()) and lease (session()) guards
// while an admin connection terminates holders' backends. Checked: every terminated holder turns
// lost within 1 s (or had released cleanly before), no session goes back to the pool holding an
// advisory lock, and nothing deadlocks (a watchdog ends the run). Runs under TSan (concurrency).
#include <QtTest>

#include <algorithm>
#include <atomic>
#include <memory>
#include <mutex>
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
using pgt::guarded;
using pgt::RawConn;
using pgt::wait_until;

namespace {

// One grant as the other threads see it.
struct Holding {
    std::shared_ptr<Guard> guard;
    int pid = 0;
    std::atomic<bool> release_done{false};
    std::error_code release_result;  // written before release_done
};

struct Shared {
    std::mutex mutex;
    std::vector<std::shared_ptr<Holding>> live;
    std::vector<std::string> failures;
    std::atomic<int> grants{0}, kills{0}, leases{0};

    void fail(std::string what) {
        std::lock_guard lock(mutex);
        if (failures.size() < 20) failures.push_back(std::move(what));
    }
    std::shared_ptr<Holding> pick(std::minstd_rand& rng) {
        std::lock_guard lock(mutex);
        if (live.empty()) return nullptr;
        return live[std::uniform_int_distribution<std::size_t>(0, live.size() - 1)(rng)];
    }
    void add(const std::shared_ptr<Holding>& h) {
        std::lock_guard lock(mutex);
        live.push_back(h);
    }
    void remove(const std::shared_ptr<Holding>& h) {
        std::lock_guard lock(mutex);
        live.erase(std::remove(live.begin(), live.end(), h), live.end());
    }
};

}  // namespace

class TestGuardStress : public QObject {
    Q_OBJECT

    std::string dsn_;

private slots:
    void initTestCase() { PGT_REQUIRE_DSN(dsn_); }

    void mixed_use_with_backend_terminations() {
        pgt::Watchdog dog(60s, "the guard stress test (deadlock?)");
        guarded([&] {
            const std::string app = "pglock_stress_" + std::to_string(::getpid());
            pglock::PoolOptions options{6};
            options.overrides = {{"application_name", app}};
            pglock::Pool pool(dsn_, options);
            std::vector<Lock> locks;
            for (int i = 0; i < 4; ++i) locks.emplace_back(pool, pgt::unique_name(("stress" + std::to_string(i)).c_str()));
            RawConn admin(dsn_);
            Shared shared;

            constexpr int kRounds = 8;
            constexpr auto kRoundTime = 900ms;
            for (int round = 0; round < kRounds; ++round) {
                {
                    std::vector<std::jthread> threads;
                    // Holders: take a lock, use it a little (lease, polls), release.
                    for (int w = 0; w < 4; ++w) {
                        threads.emplace_back([&, w](std::stop_token stop) {
                            std::minstd_rand rng(static_cast<unsigned>(round * 100 + w));
                            while (!stop.stop_requested()) {
                                Lock& lk = locks[rng() % locks.size()];
                                std::optional<Guard> got;
                                try {
                                    if (rng() % 2) got = lk.try_acquire(Context::with_timeout(2s));
                                    else got.emplace(lk.acquire(Context::with_timeout(100ms)));
                                } catch (const pglock::Error& e) {
                                    if (e.code() != Errc::deadline_exceeded && e.code() != Errc::acquire_failed) {
                                        shared.fail("acquire: " + pgt::describe(e));
                                    }
                                    continue;
                                }
                                if (!got) continue;
                                ++shared.grants;
                                auto h = std::make_shared<Holding>();
                                h->guard = std::make_shared<Guard>(std::move(*got));
                                h->pid = h->guard->backend_pid();
                                shared.add(h);
                                const auto until = pglock::Clock::now() + std::chrono::milliseconds(rng() % 60);
                                while (pglock::Clock::now() < until) {
                                    try {
                                        if (rng() % 3 == 0) {
                                            auto s = h->guard->session();
                                            s->exec("SELECT 1", {}, Context::with_timeout(2s));
                                            ++shared.leases;
                                        }
                                    } catch (const pglock::Error&) {
                                        // lost under us (terminated): expected, lost() says so
                                    }
                                    (void)h->guard->lost();
                                    (void)h->guard->released();
                                    std::this_thread::sleep_for(std::chrono::milliseconds(rng() % 5));
                                }
                                h->release_result = h->guard->release();
                                h->release_done = true;
                                shared.remove(h);
                            }
                        });
                    }
                    // A health-check thread polls whatever guards are live.
                    threads.emplace_back([&](std::stop_token stop) {
                        std::minstd_rand rng(static_cast<unsigned>(round));
                        while (!stop.stop_requested()) {
                            if (auto h = shared.pick(rng)) {
                                (void)h->guard->released();
                                (void)h->guard->lost();
                            } else {
                                std::this_thread::yield();
                            }
                        }
                    });
                    // The killer: terminates a random holder, then checks its notice.
                    threads.emplace_back([&](std::stop_token stop) {
                        std::minstd_rand rng(static_cast<unsigned>(round + 7));
                        while (!stop.stop_requested()) {
                            std::this_thread::sleep_for(std::chrono::milliseconds(20 + rng() % 40));
                            auto h = shared.pick(rng);
                            if (!h) continue;
                            bool terminated = false;
                            try {
                                // Waits (up to 5 s) until the backend has exited: the 1 s bound
                                // below is the library's, not a loaded server's time to exit.
                                terminated = admin.boolean("SELECT pg_terminate_backend($1::int, 5000)",
                                                           {std::to_string(h->pid)});
                            } catch (const std::exception& e) {
                                shared.fail(std::string("terminate: ") + e.what());
                                continue;
                            }
                            if (!terminated) continue;  // gone already (terminated earlier), or slower than 5 s
                            ++shared.kills;
                            // Lost within 1 s, unless its holder had released it cleanly first.
                            const bool noticed = wait_until(
                                [&] { return h->guard->lost() || (h->release_done && !h->release_result); }, 1s, 2ms);
                            if (!noticed) {
                                const auto late = pglock::Clock::now();
                                const bool ever = wait_until([&] { return h->guard->lost(); }, 5s, 5ms);
                                const auto extra = std::chrono::duration_cast<std::chrono::milliseconds>(pglock::Clock::now() - late);
                                shared.fail("backend " + std::to_string(h->pid) +
                                            " terminated, its guard not lost within 1 s (released: " +
                                            (h->guard->released() ? "yes" : "no") + "; lost " +
                                            (ever ? std::to_string(extra.count()) + " ms later" : "not even 5 s later") + ")");
                            }
                        }
                    });
                    std::this_thread::sleep_for(kRoundTime);
                }  // jthreads: stop and join

                // Between rounds nothing holds a lock: no session of this pool, lent or idle,
                // may have an advisory lock.
                const auto held = admin.integer(
                    "SELECT count(*) FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid "
                    "WHERE l.locktype = 'advisory' AND a.application_name LIKE $1 || '%'",
                    {app});
                if (held != 0) shared.fail("round " + std::to_string(round) + ": " + std::to_string(held) +
                                           " advisory lock(s) still held by this pool's sessions");
                std::lock_guard lock(shared.mutex);
                if (!shared.live.empty()) shared.fail("a guard outlived its round");
            }

            std::string report;
            for (const auto& f : shared.failures) report += "\n  " + f;
            QVERIFY2(shared.failures.empty(), qPrintable(QString::fromStdString("failures:" + report)));
            qInfo("%d grants, %d terminations, %d leases", shared.grants.load(), shared.kills.load(),
                  shared.leases.load());
            QVERIFY(shared.kills.load() >= kRounds);
            QVERIFY(shared.grants.load() > shared.kills.load());
        });
    }
};

QTEST_GUILESS_MAIN(TestGuardStress)
#include "test_guard_stress.moc"
