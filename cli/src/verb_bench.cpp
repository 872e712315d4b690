// pglock bench : try_acquire+release throughput, and how fast a blocked acquire wakes up.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <exception>
#include <iostream>
#include <latch>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "pglock/error.hpp"
#include "pglock/lock.hpp"
#include "pglock_cli/connection.hpp"
#include "pglock_cli/exit_codes.hpp"
#include "pglock_cli/text.hpp"
#include "held_by.hpp"
#include "signals.hpp"
#include "verbs.hpp"

namespace pglock::cli {

namespace {

using Seconds = std::chrono::duration<double>;

struct BenchOptions {
    int clients = 4;
    double seconds = 5;
    std::string prefix = "pglock.bench.";
    int samples = 200;
    bool json = false;
    bool fence = false;  // LockOptions::fencing: what a token costs per acquisition
    // LockOptions::show_in_application_name: false measures the library without the holder
    // identity statements (the set_config pair), like for like with plain pgbench.
    bool holder_identity = true;
};

LockOptions bench_lock_options(const BenchOptions& options, const GlobalOptions& global) {
    LockOptions lock_opts = lock_options(global);
    lock_opts.fencing = options.fence;
    lock_opts.show_in_application_name = options.holder_identity;
    return lock_opts;
}

struct Throughput {
    long long pairs = 0;
    long long contended = 0;  // another process held one of our names: not counted as pairs
    double elapsed = 0;       // seconds
};

struct Latency {
    std::vector<double> us;  // sorted wake-up latencies in microseconds
    double percentile(double p) const {
        if (us.empty()) return 0;
        const auto rank = static_cast<std::size_t>(std::ceil(p * static_cast<double>(us.size())));
        return us[std::clamp<std::size_t>(rank, 1, us.size()) - 1];  // nearest rank
    }
};

// Every client thread runs try_acquire + release on its own name (so nobody contends) for the
// measured time. Each first makes one untimed pair, which opens its pooled session: connecting
// is not what this measures.
Throughput measure_pairs(Pool& pool, const BenchOptions& options, const GlobalOptions& global) {
    const auto n = static_cast<std::size_t>(options.clients);
    std::vector<Lock> locks;
    locks.reserve(n);
    for (std::size_t i = 0; i < n; ++i) locks.emplace_back(pool, options.prefix + "pair." + std::to_string(i),
                                                           bench_lock_options(options, global));

    std::vector<long long> pairs(n, 0), contended(n, 0);
    std::vector<std::exception_ptr> errors(n);
    std::atomic<bool> stop{false};
    std::latch ready(static_cast<std::ptrdiff_t>(n));
    std::latch go(1);
    Clock::time_point end;
    std::vector<std::jthread> threads;
    try {
        for (std::size_t i = 0; i < n; ++i) threads.emplace_back([&, i] {
            bool warm = false;
            try {
                if (auto g = locks[i].try_acquire()) g->release();
                warm = true;
            } catch (...) {
                errors[i] = std::current_exception();
                stop = true;
            }
            ready.count_down();
            go.wait();
            if (!warm) return;
            long long done = 0, busy = 0;  // thread-local counts: no cache line shared while timed
            try {
                while (!stop.load(std::memory_order_relaxed) && Clock::now() < end) {
                    if (auto g = locks[i].try_acquire()) {
                        if (auto ec = g->release()) throw Error(Errc::release_failed, ec.message());
                        ++done;
                    } else {
                        ++busy;
                    }
                }
            } catch (...) {
                errors[i] = std::current_exception();
                stop = true;
            }
            pairs[i] = done;
            contended[i] = busy;
        });
    } catch (...) {
        stop = true;  // the threads already started must not wait on `go` forever
        go.count_down();
        throw;
    }
    ready.wait();
    const auto start = Clock::now();
    end = start + std::chrono::duration_cast<Clock::duration>(Seconds(options.seconds));
    go.count_down();
    threads.clear();  // joins
    Throughput result;
    result.elapsed = Seconds(Clock::now() - start).count();  // includes each thread's last pair
    for (auto& e : errors)
        if (e) std::rethrow_exception(e);
    for (std::size_t i = 0; i < n; ++i) {
        result.pairs += pairs[i];
        result.contended += contended[i];
    }
    return result;
}

// One thread holds the lock; a second one blocks in acquire(). Once the server shows the second
// one waiting (a granted = false row in pg_locks), the holder notes the time and releases; the
// waiter notes the time its acquire() returned. The difference is what a blocked waiter pays
// after a release: unlock round trip, server wake-up, grant sent back, library hand-off.
Latency measure_wakeup(Pool& pool, const BenchOptions& options, const GlobalOptions& global) {
    const std::string name = options.prefix + "wake";
    Lock holder(pool, name, bench_lock_options(options, global));
    Lock waiter(pool, name, bench_lock_options(options, global));
    const LockTag tag = holder.tag();
    PooledSession observer = pool.acquire();

    std::mutex mutex;
    std::condition_variable cv;
    int requested = 0, done = 0;
    Clock::time_point woke;
    std::exception_ptr waiter_error;

    std::jthread thread([&](std::stop_token stop) {
        for (int round = 1;; ++round) {
            {
                std::unique_lock lk(mutex);
                cv.wait(lk, [&] { return requested >= round || stop.stop_requested(); });
                if (stop.stop_requested()) return;
            }
            try {
                Guard g = waiter.acquire(Context{stop, std::nullopt});
                const auto now = Clock::now();
                if (auto ec = g.release()) throw Error(Errc::release_failed, ec.message());
                std::lock_guard lk(mutex);
                woke = now;
                done = round;
            } catch (const Error&) {
                if (stop.stop_requested()) return;  // canceled because the holder gave up
                std::lock_guard lk(mutex);
                waiter_error = std::current_exception();
            } catch (...) {
                std::lock_guard lk(mutex);
                waiter_error = std::current_exception();
            }
            cv.notify_all();
            if (waiter_error) return;
        }
    });
    // On any exit from here: stop the waiter (cancelling a server-side wait) and wake it.
    struct StopWaiter {
        std::jthread& t;
        std::condition_variable& cv;
        std::mutex& m;
        ~StopWaiter() {
            {
                std::lock_guard lk(m);
                t.request_stop();
            }
            cv.notify_all();
        }
    } stop_waiter{thread, cv, mutex};

    const auto rethrow_waiter = [&] {
        std::lock_guard lk(mutex);
        if (waiter_error) std::rethrow_exception(waiter_error);
    };
    const auto time_limit = std::chrono::seconds(10);  // per round: a stuck round is an error
    const auto end = Clock::now() + std::chrono::duration_cast<Clock::duration>(Seconds(options.seconds));
    Latency result;
    for (int round = 1; round <= options.samples && Clock::now() < end; ++round) {
        auto g = holder.try_acquire();
        if (!g) throw Error(Errc::acquire_failed, "bench lock " + json_quote(name) + " is " + held_by(holder));
        {
            std::lock_guard lk(mutex);
            requested = round;
        }
        cv.notify_all();
        const auto give_up = Clock::now() + time_limit;
        for (;;) {
            const Result r = observer->exec(
                "SELECT pg_catalog.count(*) FROM pg_catalog.pg_locks WHERE locktype OPERATOR(pg_catalog.=) 'advisory' "
                "AND objsubid OPERATOR(pg_catalog.=) 1 AND classid OPERATOR(pg_catalog.=) $1 "
                "AND objid OPERATOR(pg_catalog.=) $2 AND NOT granted",
                {Param(tag.classid), Param(tag.objid)});
            if (r.get_int64(0, 0) > 0) break;
            rethrow_waiter();
            if (Clock::now() > give_up) throw Error(Errc::acquire_failed, "the waiter never showed up in pg_locks");
        }
        const auto released = Clock::now();
        if (auto ec = g->release()) throw Error(Errc::release_failed, ec.message());
        std::unique_lock lk(mutex);
        if (!cv.wait_until(lk, Clock::now() + time_limit, [&] { return done == round || waiter_error; }))
            throw Error(Errc::acquire_failed, "the waiter did not wake up within 10 s");
        if (waiter_error) std::rethrow_exception(waiter_error);
        result.us.push_back(std::chrono::duration<double, std::micro>(woke - released).count());
    }
    std::sort(result.us.begin(), result.us.end());
    return result;
}

std::string fixed(double v, int decimals) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
    return buf;
}

int run_bench(const BenchOptions& options, const GlobalOptions& global) {
    // Before the client threads, which inherit the mask. A signal ends the run at once, with a
    // line that says so: every lock and wait of the run is on sessions of this process, which
    // close with it (the waiter's holder goes too, so no wait outlives it).
    SignalStop signals;
    const auto on_signal = signals.exit_on_signal("benchmarking");
    // clients sessions for the pairs; holder, waiter and observer for the wake-up test.
    Pool pool(global.dsn, pool_options_for(global.dsn, static_cast<std::size_t>(options.clients) + 2, global.pooler_check));
    const Throughput t = measure_pairs(pool, options, global);
    const Latency l = measure_wakeup(pool, options, global);
    const double rate = t.elapsed > 0 ? static_cast<double>(t.pairs) / t.elapsed : 0;

    if (options.json) {
        std::cout << "{\"clients\":" << options.clients << ",\"fencing\":" << (options.fence ? "true" : "false")
                  << ",\"holder_identity\":" << (options.holder_identity ? "true" : "false")
                  << ",\"seconds\":" << fixed(t.elapsed, 3)
                  << ",\"pairs\":" << t.pairs << ",\"contended\":" << t.contended
                  << ",\"pairs_per_second\":" << fixed(rate, 1) << ",\"wake_latency_us\":{\"samples\":" << l.us.size()
                  << ",\"p50\":" << fixed(l.percentile(0.50), 1) << ",\"p99\":" << fixed(l.percentile(0.99), 1)
                  << ",\"max\":" << fixed(l.us.empty() ? 0 : l.us.back(), 1) << "}}" << std::endl;
    } else {
        say(std::cout, "try_acquire+release: " + std::to_string(t.pairs) + " pairs in " + fixed(t.elapsed, 2) +
                           " s with " + std::to_string(options.clients) + " clients" +
                           (options.fence ? " and fencing tokens" : "") +
                           (options.holder_identity ? "" : ", holders not named") + " = " + fixed(rate, 0) +
                           " pairs/s" + (t.contended ? " (" + std::to_string(t.contended) + " contended)" : ""));
        say(std::cout, "blocked acquire wake-up: " + std::to_string(l.us.size()) + " samples, p50 " +
                           fixed(l.percentile(0.50), 0) + " us, p99 " + fixed(l.percentile(0.99), 0) + " us, max " +
                           fixed(l.us.empty() ? 0 : l.us.back(), 0) + " us");
    }
    return exit_ok;
}

}  // namespace

void register_bench(CLI::App& app, const GlobalOptions& global, VerbRun& run) {
    auto options = std::make_shared<BenchOptions>();
    auto* cmd = app.add_subcommand(
        "bench", "Measure try_acquire+release pairs per second (each client on its own name) and the wake-up "
                 "latency of a blocked acquire.");
    cmd->add_option("--clients", options->clients, "client threads, each with its own session and name")
        ->capture_default_str()
        ->check(CLI::Range(1, 1000));
    cmd->add_option("--seconds", options->seconds, "length of the throughput run; also bounds the latency run")
        ->capture_default_str()
        ->check(CLI::Range(0.01, 86400.0));
    cmd->add_option("--name-prefix", options->prefix, "prefix of the lock names used")->capture_default_str();
    cmd->add_option("--samples", options->samples, "wake-up latency samples at most")
        ->capture_default_str()
        ->check(CLI::Range(1, 1000000));
    cmd->add_flag("--json", options->json, "one JSON object instead of text");
    cmd->add_flag("--fence", options->fence, "take a fencing token with every lock (needs `pglock fence init`)");
    cmd->add_flag("--no-holder-identity{false}", options->holder_identity,
                  "take the locks without naming the holder in application_name (the library's cost without "
                  "the holder identity statements)");
    cmd->callback([options, &global, &run] { run = [options, &global] { return run_bench(*options, global); }; });
}

}  // namespace pglock::cli
