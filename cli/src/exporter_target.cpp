#include "exporter_target.hpp"

#include <iostream>

#include "pglock/conninfo_secrets.hpp"
#include "pglock/error.hpp"
#include "pglock_cli/connection.hpp"
#include "pglock_cli/text.hpp"

namespace pglock::cli {

Target::Target(ExporterTarget config, const Catalog& catalog, const SeriesLimits& limits,
               std::chrono::nanoseconds min_interval, std::chrono::nanoseconds poll_timeout)
    : config_(std::move(config)), catalog_(catalog), limits_(limits), min_interval_(min_interval),
      poll_timeout_(poll_timeout) {
    pool_ = pool_options_for(config_.conninfo, 1);
    if (pool_.connect_timeout > poll_timeout_)
        pool_.connect_timeout = std::chrono::duration_cast<decltype(pool_.connect_timeout)>(poll_timeout_);
    thread_ = std::jthread([this](std::stop_token stop) { run(std::move(stop)); });
}

Target::~Target() {
    thread_.request_stop();
    if (thread_.joinable()) thread_.join();
}

void Target::scrape(const std::shared_ptr<HttpAnswer>& answer) {
    const auto now = Clock::now();
    std::lock_guard lock(mutex_);
    ++report_.scrapes;
    if (!polling_ && last_poll_ && now - *last_poll_ < min_interval_) return answer->send(page_locked());
    // Answers that the deadline already gave need not wait for a poll that may never end.
    std::erase_if(waiting_, [](const auto& a) { return a->answered(); });
    waiting_.push_back(answer);
    answer->fallback_at(now + poll_timeout_, [this, now] { return timed_out_page(now); });
    if (!polling_) {
        polling_ = true;
        poll_asked_.notify_one();
    }
}

TargetCounters Target::counters() const {
    std::lock_guard lock(mutex_);
    return {config_.name, report_.polls, report_.poll_errors, report_.scrapes};
}

HttpResponse Target::page_locked() const {
    HttpResponse r;
    r.content_type = exposition_type;
    r.body = render_target_head(report_);
    r.more_body = series_;
    return r;
}

HttpResponse Target::timed_out_page(Clock::time_point asked) {
    std::lock_guard lock(mutex_);
    TargetReport late = report_;
    late.up = false;
    late.poll_seconds = std::chrono::duration<double>(Clock::now() - asked).count();
    HttpResponse r;
    r.content_type = exposition_type;
    r.body = render_target_head(late);
    return r;
}

void Target::run(std::stop_token stop) {
    for (;;) {
        {
            std::unique_lock lock(mutex_);
            if (!poll_asked_.wait(lock, stop, [&] { return polling_; })) return;
        }
        poll(stop);
        std::vector<std::shared_ptr<HttpAnswer>> answers;
        HttpResponse page;
        {
            std::lock_guard lock(mutex_);
            polling_ = false;
            answers.swap(waiting_);
            page = page_locked();
        }
        for (const auto& a : answers) a->send(page);
    }
}

void Target::poll(std::stop_token stop) {
    const auto start = Clock::now();
    {
        std::lock_guard lock(mutex_);
        last_poll_ = start;
        ++report_.polls;
    }
    std::shared_ptr<const std::string> series;
    double seconds = 0;
    std::string failure;
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
        series = std::make_shared<const std::string>(
            render_target_series(summarize(snapshot, catalog_, holds_, waits_, limits_), snapshot.in_recovery));
        seconds = snapshot.latency_ms / 1000.0;
    } catch (const Error& e) {
        failure = e.what();
        if (session_ && !session_->ok()) session_.reset();
    } catch (const std::exception& e) {  // the thread must not end: the target would never answer again
        failure = e.what();
        session_.reset();
    }
    if (failure.empty()) {
        if (!last_error_.empty()) std::cerr << "pglock: exporter: target " << config_.name << ": up again" << std::endl;
        last_error_.clear();
    } else {
        seconds = std::chrono::duration<double>(Clock::now() - start).count();
        forget_what_was_held();
        // Once per change of complaint, not once per scrape.
        const std::string message = display_line(redact_secrets(failure, config_.conninfo));
        if (message != last_error_)
            std::cerr << "pglock: exporter: target " << config_.name << ": poll failed: " << message << std::endl;
        last_error_ = message;
    }
    std::lock_guard lock(mutex_);
    report_.up = failure.empty();
    report_.poll_seconds = seconds;
    if (!failure.empty()) ++report_.poll_errors;
    series_ = std::move(series);
}

// The holds and waits we knew of may have ended while nobody could look.
void Target::forget_what_was_held() {
    if (last_server_now_ <= 0) return;
    holds_.close_all(last_server_now_);
    holds_.take_finished();
    waits_.close_all(last_server_now_);
    waits_.take_finished();
}

}  // namespace pglock::cli
