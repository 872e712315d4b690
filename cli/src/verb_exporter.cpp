// pglock exporter : named advisory locks on a Prometheus endpoint, for one server (--dsn) or a
// fleet (--config FILE, probed as /probe?target=NAME like the blackbox exporter).
//
// It polls on scrape, with the same monitor poll as lockscope and `pglock status`, and answers
// from a cache while the last poll is younger than --min-interval: however many Prometheus
// replicas scrape, a server sees at most one poll per interval. The HTTP side is civetweb, the
// server prometheus-cpp's own Exposer runs on, used directly because /probe needs the query
// string, which the Exposer does not pass on; the exposition is written by prometheus-cpp.
#include <civetweb.h>

#include <chrono>
#include <condition_variable>
#include <iostream>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "catalog_file.hpp"
#include "exporter_config.hpp"
#include "exporter_render.hpp"
#include "exporter_series.hpp"
#include "metrics_server.hpp"
#include "pglock/sleep.hpp"
#include "pglock/duration_text.hpp"
#include "pglock/conninfo.hpp"
#include "pglock/conninfo_secrets.hpp"
#include "pglock/error.hpp"
#include "pglock/monitor.hpp"
#include "pglock/session.hpp"
#include "pglock_cli/connection.hpp"
#include "pglock_cli/duration.hpp"
#include "pglock_cli/exit_codes.hpp"
#include "pglock_cli/text.hpp"
#include "signals.hpp"
#include "verbs.hpp"

namespace pglock::cli {

namespace {

using namespace std::chrono_literals;

struct ExporterOptions {
    std::string listen;
    std::string config;
    std::string catalog;
    std::string min_interval = "5s";
    std::string poll_timeout = "5s";
    SeriesLimits limits;
};

std::chrono::nanoseconds duration_in(const std::string& text, const char* option, std::chrono::nanoseconds low,
                                     std::chrono::nanoseconds high) {
    const auto d = parse_duration(text);
    if (!d || *d < low || *d > high)
        throw UsageError(std::string(option) + ": must be a duration between " + duration_text(low) + " and " +
                         duration_text(high) + ", got \"" + text + "\"");
    return *d;
}

// One server: its monitoring session, its hold/wait trackers and the last answer. Scrapes of one
// target take turns on the mutex, so replicas scraping together cause one poll, not several.
class Target {
public:
    Target(ExporterTarget config, const Catalog& catalog, const SeriesLimits& limits,
           std::chrono::nanoseconds min_interval, std::chrono::nanoseconds poll_timeout)
        : config_(std::move(config)), catalog_(catalog), limits_(limits), min_interval_(min_interval),
          poll_timeout_(poll_timeout) {
        pool_ = pool_options_for(config_.conninfo, 1);
        if (pool_.connect_timeout > poll_timeout_)
            pool_.connect_timeout = std::chrono::duration_cast<decltype(pool_.connect_timeout)>(poll_timeout_);
    }

    const std::string& name() const { return config_.name; }

    std::string scrape(std::stop_token stop) {
        std::lock_guard lock(mutex_);
        ++report_.scrapes;
        const auto now = Clock::now();
        if (!last_poll_ || now - *last_poll_ >= min_interval_) poll(std::move(stop));
        return render_target(report_);
    }

    TargetCounters counters() {
        std::lock_guard lock(mutex_);
        return {config_.name, report_.polls, report_.poll_errors, report_.scrapes};
    }

private:
    void poll(std::stop_token stop) {
        const auto start = Clock::now();
        last_poll_ = start;
        ++report_.polls;
        try {
            const Context ctx{stop, start + poll_timeout_};
            if (!session_) {
                const Context connect_ctx{stop, start + pool_.connect_timeout};
                session_.emplace(monitor::connect_session(config_.conninfo, connect_ctx, {}, pool_.keepalive));
            }
            const monitor::Snapshot snapshot = monitor::poll(*session_, ctx);
            holds_.update(snapshot);
            holds_.take_finished();
            waits_.update(snapshot);
            waits_.take_finished();
            last_server_now_ = snapshot.server_now;
            report_.series = summarize(snapshot, catalog_, holds_, waits_, limits_);
            report_.up = true;
            report_.in_recovery = snapshot.in_recovery;
            report_.poll_seconds = snapshot.latency_ms / 1000.0;
            if (!last_error_.empty()) std::cerr << "pglock: exporter: target " << config_.name << ": up again" << std::endl;
            last_error_.clear();
        } catch (const Error& e) {
            report_.up = false;
            report_.series.reset();
            report_.poll_seconds = std::chrono::duration<double>(Clock::now() - start).count();
            ++report_.poll_errors;
            // The holds and waits we knew of may have ended while nobody could look.
            if (last_server_now_ > 0) {
                holds_.close_all(last_server_now_);
                holds_.take_finished();
                waits_.close_all(last_server_now_);
                waits_.take_finished();
            }
            if (session_ && !session_->ok()) session_.reset();
            // Once per change of complaint, not once per scrape.
            const std::string message = display_line(redact_secrets(e.what(), config_.conninfo));
            if (message != last_error_)
                std::cerr << "pglock: exporter: target " << config_.name << ": poll failed: " << message << std::endl;
            last_error_ = message;
        }
    }

    const ExporterTarget config_;
    const Catalog& catalog_;
    const SeriesLimits limits_;
    const std::chrono::nanoseconds min_interval_, poll_timeout_;
    PoolOptions pool_;

    std::mutex mutex_;
    std::optional<Session> session_;
    monitor::HoldTracker holds_{0};  // finished holds are not reported: keep none
    monitor::WaitTracker waits_{0};
    double last_server_now_ = 0;
    std::optional<Clock::time_point> last_poll_;
    TargetReport report_;
    std::string last_error_;
};

constexpr const char* exposition_type = "text/plain; version=0.0.4; charset=utf-8";

class Exporter {
public:
    Exporter(std::vector<std::unique_ptr<Target>> targets, bool fleet, std::stop_token stop)
        : targets_(std::move(targets)), fleet_(fleet), stop_(std::move(stop)) {}

    int handle(mg_connection* conn) {
        const mg_request_info* request = mg_get_request_info(conn);
        const std::string uri = request->local_uri ? request->local_uri : "";
        const std::string method = request->request_method ? request->request_method : "";
        if (method != "GET" && method != "HEAD") return error(conn, 405, "only GET\n");
        try {
            if (uri == "/metrics") {
                if (!fleet_) return ok(conn, exposition_type, targets_.front()->scrape(stop_));
                std::vector<TargetCounters> counters;
                for (const auto& t : targets_) counters.push_back(t->counters());
                return ok(conn, exposition_type, render_exporter(counters));
            }
            if (uri == "/probe") return probe(conn, request->query_string);
            if (uri == "/")
                return ok(conn, "text/plain; charset=utf-8",
                          fleet_ ? "pglock exporter: /probe?target=NAME (a target of the --config file), "
                                   "/metrics (the exporter's own counters)\n"
                                 : "pglock exporter: /metrics\n");
            return error(conn, 404, "not found: try /metrics" + std::string(fleet_ ? " or /probe?target=NAME" : "") + "\n");
        } catch (const std::exception& e) {
            return error(conn, 500, std::string("pglock exporter: ") + display_line(e.what()) + "\n");
        }
    }

private:
    int probe(mg_connection* conn, const char* query) {
        if (!fleet_) return error(conn, 404, "/probe needs --config FILE (its targets); this exporter serves /metrics\n");
        const std::string q = query ? query : "";
        char value[256];
        const int n = q.empty() ? -1 : mg_get_var(q.data(), q.size(), "target", value, sizeof value);
        if (n < 0 || value[0] == '\0') return error(conn, 400, "Target parameter is missing (/probe?target=NAME)\n");
        for (const auto& t : targets_) {
            if (t->name() == value) return ok(conn, exposition_type, t->scrape(stop_));
        }
        return error(conn, 400, "Unknown target \"" + display_line(value) + "\": not in the --config file\n");
    }

    static int ok(mg_connection* conn, const char* type, const std::string& body) {
        mg_send_http_ok(conn, type, static_cast<long long>(body.size()));
        mg_write(conn, body.data(), body.size());
        return 200;
    }
    static int error(mg_connection* conn, int status, const std::string& body) {
        mg_send_http_error(conn, status, "%s", body.c_str());
        return status;
    }

    std::vector<std::unique_ptr<Target>> targets_;
    const bool fleet_;
    const std::stop_token stop_;
};

// civetweb's context: started listening, stopped (its worker threads joined) on destruction.
class HttpServer {
public:
    HttpServer(const std::string& listen, Exporter& exporter) {
        mg_init_library(0);
        const char* options[] = {"listening_ports", listen.c_str(), "num_threads", "4", "request_timeout_ms", "30000",
                                 nullptr};
        mg_callbacks callbacks{};
        ctx_ = mg_start(&callbacks, nullptr, options);
        if (!ctx_) {
            mg_exit_library();
            throw std::runtime_error("cannot listen on " + listen + " (address in use or not local?)");
        }
        mg_set_request_handler(
            ctx_, "/", [](mg_connection* conn, void* self) { return static_cast<Exporter*>(self)->handle(conn); },
            &exporter);
    }
    ~HttpServer() {
        mg_stop(ctx_);
        mg_exit_library();
    }
    HttpServer(const HttpServer&) = delete;
    HttpServer& operator=(const HttpServer&) = delete;

    int port() const {
        mg_server_port ports[4]{};
        const int n = mg_get_server_ports(ctx_, 4, ports);
        return n > 0 ? ports[0].port : 0;
    }

private:
    mg_context* ctx_ = nullptr;
};

int run_exporter(const ExporterOptions& options, const GlobalOptions& global) {
    SignalStop signals;  // before civetweb's threads: they inherit the blocked signals

    const auto host = split_listen_address(options.listen, "--listen").first;
    if (!options.config.empty() && !global.dsn.empty())
        throw UsageError("exporter: --dsn and --config exclude each other (put the server in the config file)");
    const auto min_interval = duration_in(options.min_interval, "--min-interval", 250ms, 10min);
    const auto poll_timeout = duration_in(options.poll_timeout, "--poll-timeout", 100ms, 60s);
    if (options.limits.max_names > 100000 || options.limits.max_unknown_keys > 100000)
        throw UsageError("exporter: --max-names and --max-unknown-keys must be at most 100000");

    std::vector<ExporterTarget> configured;
    const bool fleet = !options.config.empty();
    if (fleet) {
        const auto on_signal = signals.exit_on_signal("reading the config " + options.config);
        configured = load_exporter_config(options.config);
    } else {
        if (auto why = conninfo_error(global.dsn); why && !global.dsn.empty())
            throw UsageError("invalid --dsn: " + one_line(*why));
        configured.push_back({"dsn", global.dsn});
    }
    Catalog catalog;
    if (!options.catalog.empty()) {
        const auto on_signal = signals.exit_on_signal("reading the catalog " + options.catalog);
        catalog = load_catalog(options.catalog);
    }
    for (const std::string& line : catalog_warnings(catalog, options.catalog)) std::cerr << line << '\n';

    std::vector<std::unique_ptr<Target>> targets;
    for (ExporterTarget& t : configured)
        targets.push_back(std::make_unique<Target>(std::move(t), catalog, options.limits, min_interval, poll_timeout));
    Exporter exporter(std::move(targets), fleet, signals.token());
    HttpServer server(options.listen, exporter);

    const std::string where = "http://" + host + ":" + std::to_string(server.port());
    say(std::cout, "pglock: exporter: serving " + where + (fleet ? "/probe?target=NAME" : "/metrics"));

    wait_for_stop(signals.token());
    return exit_ok;  // SIGTERM/SIGINT is how a service stops
}

}  // namespace

void register_exporter(CLI::App& app, const GlobalOptions& global, VerbRun& run) {
    auto options = std::make_shared<ExporterOptions>();
    auto* cmd = app.add_subcommand(
        "exporter", "Serve the database's advisory locks, by name, as Prometheus metrics on /metrics (--dsn) or "
                    "for many servers on /probe?target=NAME (--config); docs/exporter.md lists the metrics.");
    cmd->add_option("--listen", options->listen, "HOST:PORT to serve on (port 0: any free port)")
        ->type_name("HOST:PORT")
        ->required();
    cmd->add_option("--config", options->config,
                    "targets, one `NAME = CONNINFO` (or `NAME = SERVICE`) a line; no passwords in it")
        ->type_name("FILE");
    cmd->add_option("--catalog", options->catalog,
                    "names for known keys: a text file (one name per line) or a lockscope SQLite catalog")
        ->type_name("FILE");
    cmd->add_option("--min-interval", options->min_interval,
                    "answer from the last poll while it is younger than this (default 5s, 250ms..10m)")
        ->type_name("DURATION");
    cmd->add_option("--poll-timeout", options->poll_timeout,
                    "give up connecting or polling after this; the scrape then says pglock_up 0 (default 5s)")
        ->type_name("DURATION");
    cmd->add_option("--max-names", options->limits.max_names,
                    "named locks with a series of their own per server; more fold into name=\"(other)\" (default 1000)")
        ->type_name("N");
    cmd->add_option("--max-unknown-keys", options->limits.max_unknown_keys,
                    "unknown locks labelled with their key per server; more fold into name=\"(unknown)\" (default 20)")
        ->type_name("N");
    cmd->callback([options, &global, &run] { run = [options, &global] { return run_exporter(*options, global); }; });
}

}  // namespace pglock::cli
