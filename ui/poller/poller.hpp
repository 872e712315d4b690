// Polls the server for advisory locks on a worker thread that owns its own libpq session.
// The GUI thread only ever receives finished results through queued signals: connecting,
// querying and backing off never block it. A lost connection turns into a "disconnected —
// retrying" state with exponential backoff, and the poller recovers by itself.
#pragma once

#include <QObject>
#include <QString>
#include <QThread>

#include <atomic>
#include <chrono>
#include <memory>

#include "poller/poll_result.hpp"

namespace lockscope {

class PollWorker;

class Poller : public QObject {
    Q_OBJECT
public:
    static constexpr std::chrono::milliseconds kMinInterval{250};
    static constexpr std::chrono::milliseconds kMaxInterval{60000};
    static constexpr std::chrono::milliseconds kDefaultInterval{1000};

    explicit Poller(QObject* parent = nullptr);
    ~Poller() override;  // cancels what the worker is doing and joins it

    // Starts polling `conninfo` (a conninfo string, URI or service= line; a password in memory
    // only may be passed in `password`, never stored). Results of any earlier connection are
    // dropped from here on.
    void start(const QString& conninfo, const QString& password = {});
    void stop();
    void setInterval(std::chrono::milliseconds interval);  // clamped to [250 ms, 60 s]
    // The benchmark mode only (lockscope --bench-seconds): polls as fast as 1 ms apart, to load
    // the GUI thread far more than an operator's setting can. Clamped to [1 ms, 60 s].
    void setBenchmarkInterval(std::chrono::milliseconds interval);
    std::chrono::milliseconds interval() const noexcept { return interval_; }
    // Lets go of a result on the poll thread: the last reference to a 10,000-lock snapshot frees
    // tens of thousands of allocations, which is work the GUI thread need not do.
    void releaseOffThread(PollResultPtr result);
    void setPaused(bool paused);
    // Polls at once instead of after the interval (F5); nothing while paused or not connecting.
    void pollNow();
    // The thresholds each result's summary is computed with, on the poll thread (PollResult::summary),
    // from the next poll on; without them results carry no summary.
    void setSummaryThresholds(const SummaryThresholds& thresholds);
    bool paused() const noexcept { return paused_; }
    PollState state() const noexcept { return state_; }
    quint64 generation() const noexcept { return generation_; }

signals:
    void resultReady(lockscope::PollResultPtr result);
    void stateChanged(lockscope::PollState state, const QString& message);

private:
    void onWorkerResult(const lockscope::PollResultPtr& result);
    void onWorkerState(quint64 generation, lockscope::PollState state, const QString& message);

    QThread thread_;
    PollWorker* worker_ = nullptr;  // lives on thread_, deleted when it finishes
    std::chrono::milliseconds interval_ = kDefaultInterval;
    bool paused_ = false;
    PollState state_ = PollState::stopped;
    quint64 generation_ = 0;
};

}  // namespace lockscope
