// The Prometheus text exposition of `pglock exporter`, written with prometheus-cpp's serializer.
// Metric names and labels are documented in docs/exporter.md; keep the two in step.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "exporter_series.hpp"

namespace pglock::cli {

// One target's state as a page gives it.
struct TargetReport {
    bool up = false;
    double poll_seconds = 0;             // the poll's round trip (or how long the failed attempt took)
    std::uint64_t polls = 0;             // polls of this target since the exporter started
    std::uint64_t poll_errors = 0;
    std::uint64_t scrapes = 0;           // requests answered for it, from the cache or not
};

// A target's page is the two put together: the part that changes with every request (up, the
// poll's duration, the counters), and the part that changes only with a poll (the lock series,
// when up), which the exporter renders once per poll and shares between the answers.
std::string render_target_head(const TargetReport& report);
std::string render_target_series(const ServerSeries& series, bool in_recovery);

// /metrics of an exporter started with --config: its own counters per target (the label is the
// target's name from the config file: as many series as targets).
struct TargetCounters {
    std::string target;
    std::uint64_t polls = 0, poll_errors = 0, scrapes = 0;
};
std::string render_exporter(const std::vector<TargetCounters>& targets);

}  // namespace pglock::cli
