// The worker side of Poller: lives on the poll thread, owns the monitor session and the hold and
// wait trackers. Every blocking libpq call it makes can be cut short through its stop source, which
// the GUI thread may trigger at any time.
#pragma once

#include <QObject>
#include <QString>
#include <QTimer>

#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <optional>
#include <stop_token>

#include "pglock/context_locks.hpp"
#include "pglock/monitor.hpp"
#include "pglock/orphan.hpp"
#include "pglock/session.hpp"
#include "models/lock_summary.hpp"
#include "poller/poll_result.hpp"

namespace lockscope {

class PollWorker : public QObject {
    Q_OBJECT
public:
    PollWorker();

    // Thread-safe: cancels a connect or query in progress, so that a new start() or the
    // thread's end never waits for a slow or unreachable server.
    void interrupt() noexcept;
    // Thread-safe: the GUI thread took a result. Until it has taken the previous one the worker
    // does not poll again, so a GUI thread slower than the poll interval gets fewer results
    // instead of an ever longer queue of snapshots (memory and latency both bounded).
    void delivered() noexcept { undelivered_.fetch_sub(1, std::memory_order_relaxed); }

public slots:
    void begin(quint64 generation, const QString& conninfo, const QString& password);
    void end();
    void setInterval(qint64 ms);
    void setPaused(bool paused);
    // The next poll (or reconnect attempt) now instead of after the interval; nothing while paused.
    void pollNow();
    // Each result from the next poll on carries its summary with these thresholds.
    void setSummaryThresholds(const lockscope::SummaryThresholds& thresholds);

signals:
    void result(lockscope::PollResultPtr result);
    void state(quint64 generation, lockscope::PollState state, const QString& message);

private:
    void tick();
    bool ensureConnected();
    void lose(const QString& why);
    void schedule(std::chrono::milliseconds delay);
    pglock::Context context(std::chrono::milliseconds timeout) const;
    bool interrupted() const;

    std::atomic<int> undelivered_{0};  // results emitted and not yet taken by the GUI thread
    QTimer timer_{this};  // a child, so moveToThread() takes it along
    mutable std::mutex stop_mutex_;  // guards stop_: interrupt() comes from the GUI thread
    std::stop_source stop_;
    std::optional<pglock::Session> session_;
    pglock::monitor::ContextLockCache context_cache_;  // the database's schemas, read once a minute
    pglock::monitor::OrphanWatch orphans_;
    pglock::monitor::HoldTracker tracker_;
    pglock::monitor::WaitTracker wait_tracker_;
    std::string conninfo_;
    pglock::Session::Overrides overrides_;  // the password, in memory only
    quint64 generation_ = 0;
    bool active_ = false;
    bool paused_ = false;
    std::chrono::milliseconds interval_{1000};
    std::chrono::milliseconds backoff_{0};
    double last_server_now_ = 0;
    std::optional<SummaryThresholds> summary_thresholds_;
};

}  // namespace lockscope
