// Plain data shared by the scraper, its models and whoever draws scraped histograms.
#pragma once

#include <QDateTime>
#include <QString>
#include <QUrl>

#include <cstdint>
#include <memory>
#include <vector>

#include "pglock/exposition.hpp"

namespace lockscope {

// How one /metrics endpoint is doing, as the operator should see it.
struct EndpointStatus {
    enum class State { pending, ok, error };

    QUrl url;
    State state = State::pending;
    QString error;          // why the last scrape failed; empty unless state == error
    QDateTime lastSuccess;  // invalid before the first good scrape
    QDateTime lastAttempt;
    qsizetype samples = 0;  // samples on the last good page (all metrics, not only ours)
    qsizetype locks = 0;    // lock names on the last good page
    qint64 bytes = 0;       // size of the last good page
    qint64 durationMs = 0;  // fetch + parse of the last good scrape
};

// The last good page of one endpoint, parsed. steadyMs is a monotonic clock reading (ms) taken
// when the response was complete: rates divide by differences of it, never of wall-clock time.
struct EndpointScrape {
    std::shared_ptr<const pglock::exposition::LockScrape> data;
    std::int64_t steadyMs = 0;
};

// A lock name's hold-duration histogram, its cumulative bucket counts summed over all endpoints.
// upper_bounds ascend and end with +Inf when the applications export it (prometheus-cpp does).
struct ScrapedHistogram {
    std::vector<double> upper_bounds;
    std::vector<double> cumulative;  // same size as upper_bounds
    double sum = 0;
    double count = 0;
};

}  // namespace lockscope
