// lockscope --bench-seconds S: the app's benchmark mode. It drives a server session (the one the
// window shows, or one without a window): the session connects as usual, its poller runs at a
// benchmark interval (default 5 ms, far below what the GUI offers), and a probe timer on the GUI
// thread measures how late each of its ticks fires: the longest time the event loop was not free.
// At the end it prints polls done, rows in the locks model, the max and p99 stall, and RSS, then
// quits the app. Everything done per poll (merge, charts, history, and the window's repaint when
// one shows the session) runs as it would for an operator; nothing is skipped.
#pragma once

#include <QElapsedTimer>
#include <QObject>
#include <QTimer>

#include <chrono>
#include <utility>
#include <vector>

#include "poller/poll_result.hpp"

namespace lockscope {

class ServerSession;

// Probe ticks' delays in fixed buckets of 0.1 ms up to 2 s, the exact max beside them: memory
// stays constant however long the run (a list of every tick grew ~16 bytes per tick, which a
// 100,000-poll run showed as RSS creeping by ~0.4 MB per 10,000 polls).
class DelayHistogram {
public:
    DelayHistogram();
    void add(double ms);
    std::size_t count() const { return count_; }
    double max() const { return max_; }
    double quantile(double q) const;  // the bucket's upper bound, 0.1 ms resolution

private:
    static constexpr double kBucketMs = 0.1;
    std::vector<quint32> buckets_;  // the last one also takes everything beyond 2 s
    std::size_t count_ = 0;
    double max_ = 0;
};

class BenchMode : public QObject {
    Q_OBJECT
public:
    struct Options {
        std::chrono::milliseconds duration{30000};
        std::chrono::milliseconds pollInterval{5};
        std::chrono::milliseconds probeInterval{5};
        quint64 maxPolls = 0;  // also stop after this many polls (0: only the duration counts)
        quint64 rssEvery = 10000;  // note the RSS every this many polls (memory must stay flat)
    };

    BenchMode(ServerSession& session, Options options, QObject* parent = nullptr);
    // Starts the probe and the clock; the session must already be connecting.
    void start();

    // The resident set size of this process, in KiB (-1 when /proc cannot tell).
    static long rssKiB();
    static int threadCount();  // this process's threads (one poller thread per server, among others)
    // The bytes malloc has handed out and not got back, in KiB: beside RSS it tells growth of
    // the app's data from heap fragmentation.
    static long heapInUseKiB();

private:
    void onProbe();
    void onPoll(const PollResultPtr& result);
    void finish();

    ServerSession& session_;
    Options options_;
    QTimer probe_;
    QTimer end_;
    QElapsedTimer clock_;
    qint64 lastProbeNs_ = 0;
    // Stalls (ms late) of the probe ticks during and after the first load: from the start until
    // the first poll's result has reached every model (the locks view stages a big one in over
    // several event-loop turns, then the charts take it in a turn of their own); later polls
    // merge what changed.
    DelayHistogram firstLoadStalls_, stalls_;
    // The GUI thread's own CPU time between consecutive ticks: on a loaded machine a tick is also
    // late while other processes have the CPU, which is no work of the app's; this part is.
    DelayHistogram firstLoadBusy_, busy_;
    double lastProbeCpuMs_ = 0;
    quint64 polls_ = 0;
    std::size_t lockRows_ = 0, waiterRows_ = 0;
    long rssStart_ = -1, rssFirstLoad_ = -1;
    struct MemoryAt {
        quint64 polls = 0;
        long rssKiB = 0, heapKiB = 0;
    };
    std::vector<MemoryAt> rssAt_;
    double firstPollAtMs_ = -1;
    double firstLoadDoneAtMs_ = -1;  // the first probe tick that found the first load done
};

}  // namespace lockscope
