// `status --metrics-url URL`: the applications' own view (lock_held_info, scraped from their
// /metrics pages) joined with the poll: ghosts and leaks per endpoint (pglock/claims.hpp).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "pglock/claims.hpp"

namespace pglock::cli {

struct EndpointReport {
    std::string url;
    std::string error;       // why the last scrape failed; empty when it worked
    std::size_t claimed = 0; // lock_held_info series on the page
    double lost = 0;         // lock_lost_total, summed over names
};

struct ClaimsReport {
    std::vector<EndpointReport> endpoints;
    std::vector<claims::Disagreement> found;  // confirmed ones only
    double now = 0;                           // the join's clock at the render: since_s = now - since
};

// Scrapes each URL (one bounded HTTP GET each) and feeds the claims to `join` at `now`. A failed
// scrape makes the join forget the endpoint (its claims are unknown) and is reported, not thrown.
std::vector<EndpointReport> scrape_endpoints(const std::vector<std::string>& urls, claims::Join& join, double now);

// `"app_metrics":[...]`, a member for status --json (fields in docs/cli.md).
std::string render_claims_json(const ClaimsReport& report);
// The ghosts and leaks on one key, a lock object's "claims" member for status --json:
// `[{"kind":"ghost"|"leak","url":...,"pid":...,"since_s":...}]`.
std::string render_lock_claims_json(const ClaimsReport& report, std::int64_t key);
// Lines for the text status, each ending in '\n'.
std::string render_claims_text(const ClaimsReport& report);

}  // namespace pglock::cli
