// One server of `pglock exporter`: its monitoring session, its hold/wait trackers, the last
// answer, and a thread of its own that polls when a scrape asks. Scrapes never wait for a poll
// on the HTTP side: they are answered from the last poll while it is younger than
// --min-interval, else when the poll ends, and at the latest at --poll-timeout with pglock_up 0,
// whatever the server (or its DNS, or a cancel request that does not get through) does. Every
// scrape that comes while a poll runs gets that poll's answer, so replicas scraping together
// cause one poll, not several; and targets never wait for each other.
#pragma once

#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <stop_token>
#include <string>
#include <thread>
#include <vector>

#include "catalog_file.hpp"
#include "exporter_config.hpp"
#include "exporter_render.hpp"
#include "exporter_series.hpp"
#include "http_server.hpp"
#include "pglock/monitor.hpp"
#include "pglock/pool.hpp"
#include "pglock/session.hpp"

namespace pglock::cli {

inline constexpr const char* exposition_type = "text/plain; version=0.0.4; charset=utf-8";

class Target {
public:
    Target(ExporterTarget config, const Catalog& catalog, const SeriesLimits& limits,
           std::chrono::nanoseconds min_interval, std::chrono::nanoseconds poll_timeout);
    ~Target();  // stops the thread, cancelling a poll that runs
    Target(const Target&) = delete;
    Target& operator=(const Target&) = delete;

    const std::string& name() const { return config_.name; }

    // On the HTTP loop's thread; never blocks on the server.
    void scrape(const std::shared_ptr<HttpAnswer>& answer);
    TargetCounters counters() const;

private:
    void run(std::stop_token stop);
    void poll(std::stop_token stop);
    void forget_what_was_held();
    HttpResponse page_locked() const;  // under mutex_
    HttpResponse timed_out_page(Clock::time_point asked);

    const ExporterTarget config_;
    const Catalog& catalog_;
    const SeriesLimits limits_;
    const std::chrono::nanoseconds min_interval_, poll_timeout_;
    PoolOptions pool_;

    // The thread's own.
    std::optional<Session> session_;
    monitor::HoldTracker holds_{0};  // finished holds are not reported: keep none
    monitor::WaitTracker waits_{0};
    double last_server_now_ = 0;
    std::string last_error_;

    mutable std::mutex mutex_;
    std::condition_variable_any poll_asked_;
    bool polling_ = false;                          // asked for or running
    std::optional<Clock::time_point> last_poll_;    // when the last poll began
    TargetReport report_;
    std::shared_ptr<const std::string> series_;     // the last poll's lock series, rendered (null: down)
    std::vector<std::shared_ptr<HttpAnswer>> waiting_;  // for the poll that runs
    std::jthread thread_;  // last: started once the rest is set
};

}  // namespace pglock::cli
