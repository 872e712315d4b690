// pglock status : who holds and who waits for advisory locks now, once or every INTERVAL.
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "catalog_file.hpp"
#include "pglock/sleep.hpp"
#include "pglock/duration_text.hpp"
#include "pglock/error.hpp"
#include "pglock/monitor.hpp"
#include "pglock/session.hpp"
#include "pglock_cli/connection.hpp"
#include "pglock_cli/duration.hpp"
#include "pglock_cli/exit_codes.hpp"
#include "pglock_cli/text.hpp"
#include "signals.hpp"
#include "http_get.hpp"
#include "status_claims.hpp"
#include "status_render.hpp"
#include "verbs.hpp"

namespace pglock::cli {

namespace {

using namespace std::chrono_literals;

struct StatusOptions {
    bool json = false;
    bool tree = false;  // the lock tree instead of the lock list
    std::string catalog;  // FILE, empty: no names
    bool watch = false;
    std::string interval;  // --watch's optional value
    std::vector<std::string> metrics_urls;  // --metrics-url: applications' /metrics pages to join
    std::string orphan_idle = "30s";  // --orphan-idle
};

constexpr auto min_interval = 250ms;
constexpr auto max_interval = 60s;

// --watch's INTERVAL: a duration ("500ms", "2s") or a bare number of seconds ("0.25"), as
// watch(1) takes it. Empty: 1 s.
std::chrono::nanoseconds parse_interval(const std::string& text) {
    if (text.empty()) return 1s;
    std::optional<std::chrono::nanoseconds> d = parse_duration(text);
    if (!d) {
        char* end = nullptr;
        errno = 0;
        const double seconds = std::strtod(text.c_str(), &end);
        if (end != text.c_str() && *end == '\0' && errno == 0 && seconds >= 0 && seconds <= 3600)
            d = std::chrono::nanoseconds(static_cast<std::int64_t>(seconds * 1e9));
    }
    if (!d && duration_error(text).find("out of range") == std::string::npos)
        throw UsageError("--watch: not an interval (examples: 0.25s, 500ms, 2s, 2): " + text);
    if (!d || *d < min_interval || *d > max_interval)
        throw UsageError("--watch: the interval must be between 250ms and 60s (polling pg_locks takes all lock "
                         "manager partitions), got " + text);
    return *d;
}

// The monitoring session gets the pool's TCP keepalives and user timeout: `status --watch` keeps
// it for hours, and with libpq's own (the kernel's 2 h idle time) a silently cut network would
// leave a poll waiting that long instead of reporting the failure and reconnecting.
// monitor::prepare_session: a poll gives up on a busy catalog lock instead of queueing.
Session connect(const std::string& dsn, const PoolOptions& pool_opts, std::stop_token stop) {
    const Context ctx{std::move(stop), Clock::now() + pool_opts.connect_timeout};
    return monitor::connect_session(dsn, ctx, {}, pool_opts.keepalive);
}

int run_status(const StatusOptions& options, const GlobalOptions& global) {
    // Before any thread exists: a signal must reach the watcher, never kill the process mid-poll.
    SignalStop signals;

    const auto interval = options.watch ? parse_interval(options.interval) : std::chrono::nanoseconds(0);
    for (const auto& url : options.metrics_urls) parse_http_url(url);  // usage errors before connecting
    Catalog catalog;
    if (!options.catalog.empty()) {
        // A FIFO or a slow disk blocks in open()/read(), where no stop token reaches.
        const auto on_signal = signals.exit_on_signal("reading the catalog " + options.catalog);
        catalog = load_catalog(options.catalog);
    }
    for (const std::string& line : catalog_warnings(catalog, options.catalog)) std::cerr << line << '\n';
    const PoolOptions pool_opts = pool_options_for(global.dsn, 1);  // validates --dsn, connect timeout

    // Stopped before any snapshot was printed: no answer, which a script must not read as "no
    // locks" (exit 0 with empty output).
    bool first_frame = true;
    std::string frame;  // one buffer for every poll's output
    const auto stopped = [&] {
        return first_frame ? report_interrupted(signals.signal(), "before the first poll completed") : exit_ok;
    };

    // One dedicated monitoring session for every poll of the run.
    std::optional<Session> session;
    try {
        session.emplace(connect(global.dsn, pool_opts, signals.token()));
    } catch (const Error&) {
        if (signals.signal()) return stopped();
        throw;
    }

    const std::optional<std::chrono::nanoseconds> orphan_idle = parse_duration(options.orphan_idle);
    monitor::HoldTracker tracker(0);  // finished holds are not shown: keep none
    claims::Join join;
    ClaimsReport claims_report;
    const bool scrapes = !options.metrics_urls.empty();
    const auto wall_now = [] {
        return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
    };
    monitor::OrphanWatch orphans({.idle_seconds = std::chrono::duration<double>(orphan_idle.value_or(std::chrono::seconds(30))).count()});
    // The database's schemas, read with the first poll and again once a minute (not every poll).
    monitor::ContextLockCache context_cache;
    StatusContext context{.catalog = &catalog,
                          .tracker = &tracker,
                          .claims = scrapes ? &claims_report : nullptr,
                          .context_locks = nullptr,
                          .orphans = &orphans};
    const bool tty = ::isatty(STDOUT_FILENO) == 1;
    const std::string every = duration_text(interval);
    double last_server_now = 0;
    std::shared_ptr<const monitor::ContextLocks> context_locks;
    auto next = Clock::now();

    for (;;) {
        std::optional<monitor::Snapshot> snapshot;
        try {
            if (!session) session.emplace(connect(global.dsn, pool_opts, signals.token()));
            const auto derived = context_cache.get(*session, Context{signals.token(), std::nullopt});
            snapshot = monitor::poll(*session, Context{signals.token(), std::nullopt});
            context_locks = derived;
        } catch (const Error& e) {
            if (signals.signal()) return stopped();
            if (!options.watch) throw;
            // Keep watching through a server restart or a dropped connection: report it, end the
            // holds we knew of (they may be gone), and try again at the next tick.
            std::cerr << "pglock: status: poll failed: " << display_line(e.what()) << "; retrying every " << every
                      << std::endl;
            if (last_server_now > 0) tracker.close_all(last_server_now);
            if (session && !session->ok()) {
                session.reset();
                context_cache.invalidate();  // the reconnect may reach another server
            }
        }

        if (snapshot && scrapes) {
            // A ghost or a leak counts once two polls after a scrape show it (pglock/claims.hpp):
            // without --watch, poll, scrape, and poll twice more a moment apart; with --watch
            // every tick polls and scrapes.
            join.poll(*snapshot, wall_now());
            claims_report.endpoints = scrape_endpoints(options.metrics_urls, join, wall_now());
            for (int extra = 0; !options.watch && extra < 2; ++extra) {
                if (!sleep_until(Clock::now() + min_interval, signals.token())) return stopped();
                try {
                    snapshot = monitor::poll(*session, Context{signals.token(), std::nullopt});
                } catch (const Error&) {
                    if (signals.signal()) return stopped();
                    throw;
                }
                join.poll(*snapshot, wall_now());
            }
            claims_report.found = join.confirmed();
            claims_report.now = wall_now();
        }
        if (snapshot) {
            tracker.update(*snapshot);
            tracker.take_finished();
            orphans.update(*snapshot);
            if (scrapes) orphans.add_unclaimed(claims_report.found, claims_report.now);
            context.context_locks = context_locks.get();
            last_server_now = snapshot->server_now;
            frame.clear();  // keeps its capacity: the next poll's frame is about as big
            if (options.json) {
                render_status_json(frame, *snapshot, context);
                frame += '\n';
            } else {
                if (options.watch && tty) frame += "\x1b[H\x1b[2J";
                else if (options.watch && !first_frame) frame += '\n';
                if (options.tree) render_tree_text(frame, *snapshot, context);
                else render_status_text(frame, *snapshot, context);
                if (options.watch && tty) frame += "(every " + every + "; held = since first seen by this watch; Ctrl-C quits)\n";
            }
            std::cout << frame << std::flush;
            // The reader of our output is gone (SIGPIPE is blocked: the write fails with EPIPE):
            // watching on would be polling for nobody.
            if (!std::cout) return exit_error;
            first_frame = false;
        }

        if (!options.watch) return exit_ok;
        next += interval;
        if (const auto now = Clock::now(); next < now) next = now;  // a slow poll: no catching up
        if (!sleep_until(next, signals.token())) return stopped();
    }
}

}  // namespace

void register_status(CLI::App& app, const GlobalOptions& global, VerbRun& run) {
    auto options = std::make_shared<StatusOptions>();
    auto* cmd = app.add_subcommand(
        "status", "Show the advisory locks of the database now: key, name, holders (pid, mode, state, "
                  "application, client, held-for) and waiters (waiting-for, blocked by).");
    auto* json = cmd->add_flag("--json", options->json, "one JSON object per poll (fields in docs/cli.md)");
    cmd->add_flag("--tree", options->tree,
                  "the lock tree instead of the lock list: each root blocker (blocks others, waits on nothing) "
                  "with the sessions it blocks, to any depth and across lock types")
        ->excludes(json);
    cmd->add_option("--catalog", options->catalog,
                    "names to show for known keys: a text file (one name per line) or a lockscope SQLite catalog")
        ->type_name("FILE");
    auto* watch = cmd->add_option("--watch", options->interval,
                                  "poll again every INTERVAL (default 1s, 250ms..60s) until SIGINT/SIGTERM");
    watch->expected(0, 1)->type_name("[INTERVAL]");
    cmd->add_option("--metrics-url", options->metrics_urls,
                    "an application's /metrics page (http:// only, 5 s, 8 MiB, no proxy; repeatable): report "
                    "ghosts (locks it claims that its backend does not hold) and leaks (locks its backends hold "
                    "that it does not claim)")
        ->type_name("URL");
    cmd->add_option("--orphan-idle", options->orphan_idle,
                    "flag a holder idle (not in a transaction) longer than this while others wait (default 30s)")
        ->type_name("DURATION")
        ->check([](const std::string& text) {
            return parse_duration(text) ? std::string() : "--orphan-idle: not a duration (examples: 500ms, 30s, 2m): " + text;
        });
    cmd->callback([options, watch, &global, &run] {
        options->watch = watch->count() > 0;
        run = [options, &global] { return run_status(*options, global); };
    });
}

}  // namespace pglock::cli
