// pglock hold NAME : take the lock and keep it until a signal or --for ends the hold.
#include <condition_variable>
#include <iostream>
#include <mutex>
#include <optional>
#include <string>

#include "held_by.hpp"
#include "metrics_server.hpp"
#include "pglock/duration_text.hpp"
#include "pglock/error.hpp"
#include "pglock/lock.hpp"
#include "pglock_cli/connection.hpp"
#include "pglock_cli/duration.hpp"
#include "pglock_cli/exit_codes.hpp"
#include "pglock_cli/text.hpp"
#include "signals.hpp"
#include "verbs.hpp"

namespace pglock::cli {

namespace {

struct HoldOptions {
    std::string name;
    std::string hold_for;  // DURATION, empty: until a signal
    std::string timeout;   // DURATION, empty: no bound
    bool wait = false;
    bool shared = false;
    bool fence = false;
    std::string metrics;   // HOST:PORT, empty: none
};

// Set by the guard's on_lost callback (on the library's watcher thread). Shared ownership,
// because that thread may still run the callback while this verb unwinds.
struct LostFlag {
    std::mutex mutex;
    std::condition_variable_any cv;
    bool lost = false;
};

int report_lost(const std::string& what, int pid) {
    std::cerr << "pglock: lock lost: " << what << ": its session (backend pid " << pid
              << ") ended while holding it; the lock is no longer held" << std::endl;
    return exit_lost;
}

int run_hold(const HoldOptions& options, const GlobalOptions& global) {
    // Before any thread exists (pool, lost-lock watcher, civetweb): they must inherit the mask.
    SignalStop signals;

    std::optional<std::chrono::nanoseconds> hold_for, timeout;
    if (!options.hold_for.empty()) hold_for = parse_duration(options.hold_for);
    if (!options.timeout.empty()) timeout = parse_duration(options.timeout);

    LockOptions lock_opts = lock_options(global);
    lock_opts.mode = options.shared ? Mode::shared : Mode::exclusive;
    if (options.fence && options.shared) throw UsageError("--fence needs an exclusive lock: drop --shared");
    lock_opts.fencing = options.fence;
    std::unique_ptr<MetricsServer> server;
    if (!options.metrics.empty()) {
        server = MetricsServer::start(options.metrics);
        lock_opts.metrics = server->metrics();
        say(std::cout, "metrics: serving " + server->url());
    }

    Pool pool(global.dsn, pool_options_for(global.dsn, 2, global.pooler_check));
    Lock lock(pool, options.name, std::move(lock_opts));
    const std::string what = json_quote(lock.name()) + " key=" + std::to_string(lock.key());

    Context ctx{signals.token(), std::nullopt};
    if (timeout) ctx.deadline = Clock::now() + *timeout;
    std::optional<Guard> guard;
    try {
        if (options.wait) {
            guard.emplace(lock.acquire(ctx));
        } else {
            guard = lock.try_acquire(ctx);
        }
    } catch (const Error& e) {
        if (e.code() == Errc::deadline_exceeded && timeout) {
            say(std::cout, "timed out: " + what + " not acquired within " + duration_text(*timeout) + "; " + held_by(lock));
            return exit_contended;
        }
        if (e.code() == Errc::canceled && signals.signal()) {
            std::cerr << "pglock: canceled by signal (" << signal_name(signals.signal()) << ") while waiting for "
                      << what << std::endl;
            return exit_error;
        }
        throw;
    }
    if (!guard) {
        say(std::cout, "contended: " + what + " is " + held_by(lock));
        return exit_contended;
    }

    const int pid = guard->backend_pid();
    say(std::cout, "acquired: " + what + " pid=" + std::to_string(pid) +
                       " mode=" + (options.shared ? "shared" : "exclusive") +
                       (guard->fencing_token() ? " token=" + std::to_string(*guard->fencing_token()) : std::string()) +
                       "; holding " +
                       (hold_for ? "for " + duration_text(*hold_for) : std::string("until SIGINT/SIGTERM")));

    auto flag = std::make_shared<LostFlag>();
    guard->on_lost([flag] {
        {
            std::lock_guard lk(flag->mutex);
            flag->lost = true;
        }
        flag->cv.notify_all();
    });
    {
        std::unique_lock lk(flag->mutex);
        const auto is_lost = [&] { return flag->lost; };
        // Wakes on loss, on the signal watcher's stop request, or when --for has passed.
        if (hold_for) {
            flag->cv.wait_until(lk, signals.token(), guard->acquired_at() + *hold_for, is_lost);
        } else {
            flag->cv.wait(lk, signals.token(), is_lost);
        }
        if (flag->lost) return report_lost(what, pid);
    }

    const auto held = Clock::now() - guard->acquired_at();
    if (const auto ec = guard->release()) {
        if (ec == Errc::lock_lost) return report_lost(what, pid);
        throw Error(Errc::release_failed, "releasing " + what + " failed: " + ec.message());
    }
    std::string line = "released: " + what + " after " + duration_text(held);
    if (signals.signal()) line += std::string(" (") + signal_name(signals.signal()) + ")";
    say(std::cout, line);
    return exit_ok;
}

}  // namespace

void register_hold(CLI::App& app, const GlobalOptions& global, VerbRun& run) {
    auto options = std::make_shared<HoldOptions>();
    auto* cmd = app.add_subcommand(
        "hold", "Take the lock and hold it until SIGINT/SIGTERM or --for ends; exit 3 when contended or timed "
                "out, 4 when the session dies while holding it.");
    cmd->add_option("name", options->name, "lock name")->required();
    cmd->add_option("--for", options->hold_for, "hold this long, then release (default: until a signal)")
        ->check(duration_check());
    cmd->add_flag("--wait", options->wait, "wait for the lock instead of giving up when it is held");
    cmd->add_option("--timeout", options->timeout, "give up (exit 3) when the lock is not ours after this long")
        ->check(duration_check());
    cmd->add_flag("--shared", options->shared, "take the shared mode (pg_advisory_lock_shared)");
    cmd->add_flag("--fence", options->fence,
                  "take a fencing token with the lock and print it as token=N (needs `pglock fence init`)");
    cmd->add_option("--metrics", options->metrics,
                    "serve Prometheus metrics on HOST:PORT/metrics while running (port 0: any free port)");
    cmd->callback([options, &global, &run] { run = [options, &global] { return run_hold(*options, global); }; });
}

}  // namespace pglock::cli
