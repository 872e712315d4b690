// pglock exporter : named advisory locks on a Prometheus endpoint, for one server (--dsn) or a
// fleet (--config FILE, probed as /probe?target=NAME like the blackbox exporter).
//
// It polls on scrape, with the same monitor poll as lockscope and `pglock status`, and answers
// from a cache while the last poll is younger than --min-interval: however many Prometheus
// replicas scrape, a server sees at most one poll per interval. Each target polls on a thread of
// its own (exporter_target.hpp); the HTTP side is one event loop (http_server.hpp), so neither a
// slow server nor a slow client holds back anyone else. The exposition is written by
// prometheus-cpp's serializer.
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <iostream>
#include <memory>
#include <string>

#include "basic_auth.hpp"
#include "catalog_file.hpp"
#include "exporter_config.hpp"
#include "exporter_render.hpp"
#include "exporter_series.hpp"
#include "exporter_target.hpp"
#include "http_request.hpp"
#include "http_server.hpp"
#include "http_tls.hpp"
#include "metrics_server.hpp"
#include "pglock/conninfo.hpp"
#include "pglock/duration_text.hpp"
#include "pglock/sleep.hpp"
#include "pglock_cli/duration.hpp"
#include "pglock_cli/exit_codes.hpp"
#include "pglock_cli/text.hpp"
#include "signals.hpp"
#include "verbs.hpp"
#include "web_config.hpp"

namespace pglock::cli {

namespace {

using namespace std::chrono_literals;

struct ExporterOptions {
    std::string listen;
    std::string config;
    std::string catalog;
    std::string web_config;
    std::string min_interval = "5s";
    std::string poll_timeout = "5s";
    std::string header_timeout = "5s";
    std::string write_timeout = "10s";
    std::size_t max_connections = 512;
    std::size_t max_connections_per_client = 0;  // 0: 16, or 2 per target when that is more
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

HttpResponse text_page(int status, std::string body) {
    HttpResponse r;
    r.status = status;
    r.body = std::move(body);
    return r;
}

class Exporter {
public:
    Exporter(std::vector<std::unique_ptr<Target>> targets, bool fleet) : targets_(std::move(targets)), fleet_(fleet) {}

    // On the HTTP loop's thread: answers at once, or hands the answer to a target.
    void handle(const HttpRequest& request, const std::shared_ptr<HttpAnswer>& answer) {
        // HEAD says what GET would, without its body and without polling.
        const bool head = request.method == "HEAD";
        if (request.path == "/metrics") {
            if (fleet_) return answer->send(exporter_page());
            if (head) return answer->send(exposition_head());
            return targets_.front()->scrape(answer);
        }
        if (request.path == "/probe") return probe(request.query, head, answer);
        if (request.path == "/")
            return answer->send(text_page(200, fleet_ ? "pglock exporter: /probe?target=NAME (a target of the --config "
                                                        "file), /metrics (the exporter's own counters)\n"
                                                      : "pglock exporter: /metrics\n"));
        answer->send(text_page(404, "not found: try /metrics" + std::string(fleet_ ? " or /probe?target=NAME" : "") + "\n"));
    }

private:
    void probe(const std::string& query, bool head, const std::shared_ptr<HttpAnswer>& answer) {
        if (!fleet_)
            return answer->send(text_page(404, "/probe needs --config FILE (its targets); this exporter serves /metrics\n"));
        const QueryParameter target = query_parameter(query, "target");
        if (!target.error.empty()) return answer->send(text_page(400, "Bad query: " + target.error + "\n"));
        if (!target.value || target.value->empty())
            return answer->send(text_page(400, "Target parameter is missing (/probe?target=NAME)\n"));
        // Decoded whole: an encoded NUL, newline or anything else no name has is refused here,
        // never read as the end of a name.
        if (!valid_target_name(*target.value))
            return answer->send(text_page(400, "Target parameter is not a target name (1-128 letters, digits, '.', "
                                               "'_', '-')\n"));
        for (const auto& t : targets_) {
            if (t->name() != *target.value) continue;
            if (head) return answer->send(exposition_head());
            return t->scrape(answer);
        }
        answer->send(text_page(400, "Unknown target \"" + display_line(*target.value) + "\": not in the --config file\n"));
    }

    static HttpResponse exposition_head() {
        HttpResponse r;
        r.content_type = exposition_type;
        return r;
    }

    HttpResponse exporter_page() const {
        std::vector<TargetCounters> counters;
        for (const auto& t : targets_) counters.push_back(t->counters());
        HttpResponse r = exposition_head();
        r.body = render_exporter(counters);
        return r;
    }

    const std::vector<std::unique_ptr<Target>> targets_;
    const bool fleet_;
};

// Every connection the limits allow, each target's session and the process's own files must fit
// under RLIMIT_NOFILE: raise the soft limit to what is needed (up to the hard one) or say why not.
void reserve_descriptors(std::size_t connections, std::size_t targets) {
    const rlim_t needed = static_cast<rlim_t>(connections + 4 * targets + 64);
    rlimit limit{};
    if (::getrlimit(RLIMIT_NOFILE, &limit) != 0 || limit.rlim_cur >= needed) return;
    if (limit.rlim_max != RLIM_INFINITY && limit.rlim_max < needed)
        throw UsageError("exporter: --max-connections " + std::to_string(connections) + " needs " +
                         std::to_string(needed) + " file descriptors, but the limit is " +
                         std::to_string(limit.rlim_max) + " (ulimit -Hn)");
    limit.rlim_cur = needed;
    ::setrlimit(RLIMIT_NOFILE, &limit);
}

int run_exporter(const ExporterOptions& options, const GlobalOptions& global) {
    SignalStop signals;  // before any thread: they inherit the blocked signals

    const auto host = split_listen_address(options.listen, "--listen").first;
    if (!options.config.empty() && !global.dsn.empty())
        throw UsageError("exporter: --dsn and --config exclude each other (put the server in the config file)");
    const auto min_interval = duration_in(options.min_interval, "--min-interval", 250ms, 10min);
    const auto poll_timeout = duration_in(options.poll_timeout, "--poll-timeout", 100ms, 60s);
    HttpServerOptions http;
    http.header_timeout = duration_in(options.header_timeout, "--header-timeout", 100ms, 5min);
    http.write_timeout = duration_in(options.write_timeout, "--write-timeout", 100ms, 10min);
    if (options.limits.max_names > 100000 || options.limits.max_unknown_keys > 100000)
        throw UsageError("exporter: --max-names and --max-unknown-keys must be at most 100000");
    if (options.max_connections < 1 || options.max_connections > 100000)
        throw UsageError("exporter: --max-connections must be between 1 and 100000");
    if (options.max_connections_per_client > 100000)
        throw UsageError("exporter: --max-connections-per-client must be at most 100000");

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
    http.max_connections = options.max_connections;
    // A Prometheus scrapes every target of a fleet from one address, two replicas may share one.
    http.max_connections_per_client = options.max_connections_per_client
                                          ? options.max_connections_per_client
                                          : std::max<std::size_t>(16, 2 * configured.size());
    reserve_descriptors(http.max_connections, configured.size());
    if (!options.web_config.empty()) {
        WebConfig web = load_web_config(options.web_config);
        if (web.tls) http.tls = std::make_shared<TlsServer>(*web.tls, options.web_config);
        if (!web.users.empty()) http.auth = std::make_shared<BasicAuth>(std::move(web.users));
        http.headers = std::move(web.headers);
        http.rate_limit = web.rate_limit;
    }
    const std::string scheme = http.tls ? "https://" : "http://";
    Catalog catalog;
    if (!options.catalog.empty()) {
        const auto on_signal = signals.exit_on_signal("reading the catalog " + options.catalog);
        catalog = load_catalog(options.catalog);
    }
    for (const std::string& line : catalog_warnings(catalog, options.catalog)) std::cerr << line << '\n';

    std::vector<std::unique_ptr<Target>> targets;
    for (ExporterTarget& t : configured)
        targets.push_back(std::make_unique<Target>(std::move(t), catalog, options.limits, min_interval, poll_timeout));
    Exporter exporter(std::move(targets), fleet);
    HttpServer server(options.listen, std::move(http),
                      [&exporter](const HttpRequest& r, const std::shared_ptr<HttpAnswer>& a) { exporter.handle(r, a); });

    const std::string where = scheme + host + ":" + std::to_string(server.port());
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
    cmd->add_option("--web-config-file", options->web_config,
                    "TLS, client certificates and basic auth in Prometheus' web config format (YAML; as "
                    "node_exporter's --web.config.file)")
        ->type_name("FILE");
    cmd->add_option("--min-interval", options->min_interval,
                    "answer from the last poll while it is younger than this (default 5s, 250ms..10m)")
        ->type_name("DURATION");
    cmd->add_option("--poll-timeout", options->poll_timeout,
                    "answer pglock_up 0 when connecting and polling take longer than this (default 5s)")
        ->type_name("DURATION");
    cmd->add_option("--max-names", options->limits.max_names,
                    "named locks with a series of their own per server; more fold into name=\"(other)\" (default 1000)")
        ->type_name("N");
    cmd->add_option("--max-unknown-keys", options->limits.max_unknown_keys,
                    "unknown locks labelled with their key per server; more fold into name=\"(unknown)\" (default 20)")
        ->type_name("N");
    cmd->add_option("--max-connections", options->max_connections,
                    "HTTP connections open at once; more are answered 503 and closed (default 512)")
        ->type_name("N");
    cmd->add_option("--max-connections-per-client", options->max_connections_per_client,
                    "HTTP connections open at once from one client address (default 16, or 2 per target when more)")
        ->type_name("N");
    cmd->add_option("--header-timeout", options->header_timeout,
                    "a client must send its request (and finish TLS) within this, or it is disconnected (default 5s)")
        ->type_name("DURATION");
    cmd->add_option("--write-timeout", options->write_timeout,
                    "a client must read its answer within this, or it is disconnected (default 10s)")
        ->type_name("DURATION");
    cmd->callback([options, &global, &run] { run = [options, &global] { return run_exporter(*options, global); }; });
}

}  // namespace pglock::cli
