#include "poller/poll_worker.hpp"

#include <algorithm>

#include "models/server_text.hpp"
#include "pglock/conninfo.hpp"
#include "pglock/conninfo_secrets.hpp"
#include "pglock/error.hpp"

namespace lockscope {
namespace {
constexpr std::chrono::milliseconds kFirstBackoff{500};
constexpr std::chrono::milliseconds kMaxBackoff{10000};
constexpr std::chrono::milliseconds kConnectTimeout{10000};
// A hold seen by the same session on both sides of a reconnect this short is one hold: the
// monitor's own session was killed or cut, not the holder's. Longer, the lock may have been let
// go and taken again unseen, so the hold ends where it was last seen.
constexpr double kMaxUnseenGapSeconds = 30.0;
}  // namespace

PollWorker::PollWorker() {
    timer_.setSingleShot(true);
    connect(&timer_, &QTimer::timeout, this, &PollWorker::tick);
}

void PollWorker::interrupt() noexcept {
    std::lock_guard lock(stop_mutex_);
    stop_.request_stop();
}

void PollWorker::begin(quint64 generation, const QString& conninfo, const QString& password) {
    end();
    {
        std::lock_guard lock(stop_mutex_);
        stop_ = std::stop_source();  // the interrupt that preceded this begin is spent
    }
    generation_ = generation;
    conninfo_ = conninfo.toStdString();
    overrides_.clear();
    if (!password.isEmpty()) overrides_.emplace_back("password", password.toStdString());
    // Operators see in pg_stat_activity which session is this app's monitor (an application_name
    // in the connection string wins).
    overrides_.emplace_back("fallback_application_name", "lockscope (monitor)");
    backoff_ = std::chrono::milliseconds(0);
    // A string libpq refuses to parse (sslmode=bogus, a bad port) can never connect: say so once
    // and stop, instead of retrying the same error forever. conninfo_error masks any password.
    if (const auto why = pglock::conninfo_error(conninfo_)) {
        end();
        emit state(generation_, PollState::disconnected,
                   QStringLiteral("invalid connection string: %1 (not retried)").arg(QString::fromStdString(*why)));
        return;
    }
    active_ = true;
    emit state(generation_, PollState::connecting, QStringLiteral("connecting…"));
    schedule(std::chrono::milliseconds(0));
}

void PollWorker::end() {
    active_ = false;
    timer_.stop();
    session_.reset();
    tracker_ = pglock::monitor::HoldTracker();
    wait_tracker_ = pglock::monitor::WaitTracker();
    orphans_ = pglock::monitor::OrphanWatch();
    // Forget the password as soon as this connection is over.
    for (auto& [key, value] : overrides_) std::fill(value.begin(), value.end(), '\0');
    overrides_.clear();
}

void PollWorker::setInterval(qint64 ms) { interval_ = std::chrono::milliseconds(ms); }

void PollWorker::setPaused(bool paused) {
    paused_ = paused;
    if (!paused_ && active_ && !timer_.isActive()) schedule(std::chrono::milliseconds(0));
}

void PollWorker::pollNow() {
    // A poll in progress runs on this thread, so here the worker is between polls: waiting for its timer.
    if (active_ && !paused_ && timer_.isActive()) schedule(std::chrono::milliseconds(0));
}

void PollWorker::setSummaryThresholds(const SummaryThresholds& thresholds) { summary_thresholds_ = thresholds; }

pglock::Context PollWorker::context(std::chrono::milliseconds timeout) const {
    std::lock_guard lock(stop_mutex_);
    return pglock::Context{stop_.get_token(), pglock::Clock::now() + timeout};
}

bool PollWorker::interrupted() const {
    std::lock_guard lock(stop_mutex_);
    return stop_.stop_requested();
}

void PollWorker::schedule(std::chrono::milliseconds delay) {
    if (active_) timer_.start(delay);
}

bool PollWorker::ensureConnected() {
    if (session_ && session_->ok()) return true;
    session_.reset();
    // Keepalives: between polls the session is idle, and a silently cut network would otherwise
    // only show at the next poll's deadline; with them the kernel ends the socket by itself.
    // A poll gives up on a busy catalog lock (and reports it) instead of queueing behind it.
    session_.emplace(pglock::monitor::connect_session(conninfo_, context(kConnectTimeout), overrides_, pglock::Keepalive{}));
    context_cache_.invalidate();  // a reconnect may reach another server (a failover)
    backoff_ = std::chrono::milliseconds(0);
    emit state(generation_, PollState::connected, QStringLiteral("connected"));
    return true;
}

void PollWorker::lose(const QString& why) {
    session_.reset();
    // Holds and waits seen before the outage: the first poll after it tells which went on (same
    // session, same mode, a short gap) and which ended, at the last time they were seen.
    if (last_server_now_ > 0) {
        tracker_.suspend(last_server_now_, kMaxUnseenGapSeconds);
        wait_tracker_.suspend(last_server_now_, kMaxUnseenGapSeconds);
    }
    backoff_ = backoff_.count() == 0 ? kFirstBackoff : std::min(backoff_ * 2, kMaxBackoff);
    const QString message = QStringLiteral("%1 — retrying in %2 s")
                                .arg(why)
                                .arg(static_cast<double>(backoff_.count()) / 1000.0, 0, 'f', 1);
    emit state(generation_, PollState::disconnected, message);
    schedule(backoff_);
}

void PollWorker::tick() {
    if (!active_ || interrupted()) return;
    if (paused_) return;  // setPaused(false) schedules the next poll
    if (undelivered_.load(std::memory_order_relaxed) > 0) {
        // The GUI thread is still busy with the previous result: look again in a moment.
        schedule(std::clamp(interval_, std::chrono::milliseconds(1), std::chrono::milliseconds(50)));
        return;
    }
    try {
        ensureConnected();
        // A poll may take long on a struggling server, but never longer than a few intervals.
        const auto timeout = std::max(std::chrono::milliseconds(5000), interval_ * 3);
        auto context_locks = context_cache_.get(*session_, context(timeout));
        auto snapshot = std::make_shared<pglock::monitor::Snapshot>(pglock::monitor::poll(*session_, context(timeout)));
        tracker_.update(*snapshot);
        wait_tracker_.update(*snapshot);
        orphans_.update(*snapshot);
        last_server_now_ = snapshot->server_now;
        auto out = std::make_shared<PollResult>();
        for (const auto& [key, hold] : tracker_.open()) out->held_since.emplace(key, hold.start);
        out->finished = tracker_.take_finished();
        out->finished_waits = wait_tracker_.take_finished();
        out->roots = pglock::monitor::lock_tree(*snapshot);  // here, not on the GUI thread
        out->snapshot = std::move(snapshot);
        out->generation = generation_;
        out->context_locks = std::move(context_locks);
        out->orphans = orphans_.flags();
        // The summary strip and the fleet row read this instead of walking 50,000 locks on the GUI
        // thread (twice, once for each).
        if (summary_thresholds_) storeSummary(*out, *summary_thresholds_);
        undelivered_.fetch_add(1, std::memory_order_relaxed);
        emit result(out);
        schedule(interval_);
    } catch (const pglock::Error& e) {
        if (interrupted()) return;
        // The server's words, made one line by the display rule here, where they are still bytes
        // (a QString of them would have lost those that are not UTF-8); redacted first, since
        // redact_secrets looks for a secret as typed.
        const QString what = serverMessage(pglock::redact_secrets(e.detail(), conninfo_));
        if (e.code() == pglock::Errc::query_failed && session_ && session_->ok()) {
            // The server answered with an error (e.g. permissions): keep the session, say so.
            emit state(generation_, PollState::connected, QStringLiteral("poll failed: %1").arg(what));
            schedule(std::max(interval_, kFirstBackoff));
            return;
        }
        lose(what);
    } catch (const std::exception& e) {
        lose(serverMessage(pglock::redact_secrets(e.what(), conninfo_)));
    }
}

}  // namespace lockscope
