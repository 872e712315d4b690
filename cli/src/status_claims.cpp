#include "status_claims.hpp"

#include <cmath>
#include <cstdio>
#include <exception>

#include "http_get.hpp"
#include "pglock/duration_text.hpp"
#include "pglock/exposition.hpp"
#include "pglock/text.hpp"
#include "pglock_cli/text.hpp"

namespace pglock::cli {

namespace {

std::string seconds(double v) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.3f", std::isfinite(v) ? v : 0.0);
    return buf;
}

std::vector<const claims::Disagreement*> of(const ClaimsReport& report, const std::string& url, claims::Kind kind) {
    std::vector<const claims::Disagreement*> out;
    for (const auto& d : report.found) {
        if (d.endpoint == url && d.kind == kind) out.push_back(&d);
    }
    return out;
}

}  // namespace

std::vector<EndpointReport> scrape_endpoints(const std::vector<std::string>& urls, claims::Join& join, double now) {
    std::vector<EndpointReport> out;
    for (const auto& url : urls) {
        EndpointReport r{url, {}, 0, 0};
        try {
            const auto parsed = exposition::parse_lock_metrics(http_get(parse_http_url(url)));
            if (parsed.error) throw std::runtime_error("not a metrics page: " + parsed.error->describe());
            r.claimed = parsed.scrape.held.size();
            for (const auto& [name, series] : parsed.scrape.locks) r.lost += series.lost;
            join.scrape(url, parsed.scrape.held, now);
        } catch (const std::exception& e) {
            r.error = e.what();
            join.forget(url);
        }
        out.push_back(std::move(r));
    }
    return out;
}

std::string render_claims_json(const ClaimsReport& report) {
    std::string out = "\"app_metrics\":[";
    for (std::size_t i = 0; i < report.endpoints.size(); ++i) {
        const auto& e = report.endpoints[i];
        if (i) out += ',';
        out += "{\"url\":" + json_quote(e.url);
        out += ",\"error\":" + (e.error.empty() ? std::string("null") : json_quote(e.error));
        out += ",\"claimed\":" + std::to_string(e.claimed) + ",\"lost_total\":" + seconds(e.lost);
        for (const auto kind : {claims::Kind::ghost, claims::Kind::leak}) {
            out += ",\"" + std::string(claims::kind_string(kind)) + "s\":[";
            bool first = true;
            for (const auto* d : of(report, e.url, kind)) {
                if (!first) out += ',';
                first = false;
                out += "{\"key\":" + std::to_string(d->key) + ",\"pid\":" + std::to_string(d->pid);
                out += ",\"name\":" + (d->name.empty() ? std::string("null") : json_quote(d->name));
                out += ",\"since_s\":" + seconds(report.now - d->since) + "}";
            }
            out += ']';
        }
        out += '}';
    }
    return out + "]";
}

std::string render_lock_claims_json(const ClaimsReport& report, std::int64_t key) {
    std::string out = "[";
    for (const auto& d : report.found) {
        if (d.key != key) continue;
        if (out.size() > 1) out += ',';
        out += "{\"kind\":\"" + std::string(claims::kind_string(d.kind)) + "\",\"url\":" + json_quote(d.endpoint) +
               ",\"pid\":" + std::to_string(d.pid) + ",\"since_s\":" + seconds(report.now - d.since) + "}";
    }
    return out + "]";
}

std::string render_claims_text(const ClaimsReport& report) {
    // The key=value style of the status lines.
    const auto field = [](std::string_view value) { return kv_value(value); };
    std::string out;
    for (const auto& e : report.endpoints) {
        out += "app url=" + field(e.url);
        if (!e.error.empty()) {
            out += " scrape_failed=" + field(one_line(e.error)) + "\n";
            continue;
        }
        const auto ghosts = of(report, e.url, claims::Kind::ghost);
        const auto leaks = of(report, e.url, claims::Kind::leak);
        out += " claimed=" + std::to_string(e.claimed) + " ghosts=" + std::to_string(ghosts.size()) +
               " leaks=" + std::to_string(leaks.size()) + "\n";
        for (const auto kind : {claims::Kind::ghost, claims::Kind::leak}) {
            for (const auto* d : kind == claims::Kind::ghost ? ghosts : leaks) {
                out += "  " + std::string(claims::kind_string(kind)) + " key=" + std::to_string(d->key) +
                       " name=" + (d->name.empty() ? std::string("unknown") : field(d->name)) +
                       " pid=" + std::to_string(d->pid) + " for=" + duration_text(report.now - d->since) + "\n";
            }
        }
    }
    return out;
}

}  // namespace pglock::cli
