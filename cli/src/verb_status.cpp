// pglock status : who holds and who waits for advisory locks now, once or every INTERVAL.
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <iostream>
#include <mutex>
#include <optional>
#include <string>

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
Session connect(const std::string& dsn, const PoolOptions& pool_opts, std::stop_token stop) {
    return Session::connect(dsn, Context{std::move(stop), Clock::now() + pool_opts.connect_timeout}, {},
                            pool_opts.keepalive);
}

int run_status(const StatusOptions& options, const GlobalOptions& global) {
    // Before any thread exists: a signal must reach the watcher, never kill the process mid-poll.
    SignalStop signals;

    const auto interval = options.watch ? parse_interval(options.interval) : std::chrono::nanoseconds(0);
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

    monitor::HoldTracker tracker(0);  // finished holds are not shown: keep none
    const StatusContext context{&catalog, &tracker};
    const bool tty = ::isatty(STDOUT_FILENO) == 1;
    const std::string every = duration_text(interval);
    double last_server_now = 0;
    auto next = Clock::now();

    for (;;) {
        std::optional<monitor::Snapshot> snapshot;
        try {
            if (!session) session.emplace(connect(global.dsn, pool_opts, signals.token()));
            snapshot = monitor::poll(*session, Context{signals.token(), std::nullopt});
        } catch (const Error& e) {
            if (signals.signal()) return stopped();
            if (!options.watch) throw;
            // Keep watching through a server restart or a dropped connection: report it, end the
            // holds we knew of (they may be gone), and try again at the next tick.
            std::cerr << "pglock: status: poll failed: " << one_line(e.what()) << "; retrying every " << every
                      << std::endl;
            if (last_server_now > 0) tracker.close_all(last_server_now);
            if (session && !session->ok()) session.reset();
        }

        if (snapshot) {
            tracker.update(*snapshot);
            tracker.take_finished();
            last_server_now = snapshot->server_now;
            std::string frame;
            if (options.json) {
                frame = render_status_json(*snapshot, context) + "\n";
            } else {
                const std::string text =
                    options.tree ? render_tree_text(*snapshot, context) : render_status_text(*snapshot, context);
                if (options.watch && tty)
                    frame = "\x1b[H\x1b[2J" + text + "(every " + every + "; held = since first seen by this watch; Ctrl-C quits)\n";
                else
                    frame = (options.watch && !first_frame ? "\n" : "") + text;
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
    cmd->callback([options, watch, &global, &run] {
        options->watch = watch->count() > 0;
        run = [options, &global] { return run_status(*options, global); };
    });
}

}  // namespace pglock::cli
