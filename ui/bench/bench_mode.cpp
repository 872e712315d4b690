#include "bench/bench_mode.hpp"

#include <QAbstractItemModel>
#include <QApplication>
#include <QFile>
#include <QTreeView>

#include <algorithm>
#include <cstdio>
#include <ctime>

#include "widgets/main_window.hpp"

namespace lockscope {

namespace {
double quantile(std::vector<double> v, double q) {
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    const auto i = static_cast<std::size_t>(q * static_cast<double>(v.size() - 1) + 0.5);
    return v[std::min(i, v.size() - 1)];
}
double maxOf(const std::vector<double>& v) { return v.empty() ? 0.0 : *std::max_element(v.begin(), v.end()); }
double threadCpuMs() {
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) / 1e6;
}
}  // namespace

BenchMode::BenchMode(MainWindow& window, Options options, QObject* parent)
    : QObject(parent), window_(window), options_(options) {
    // A precise timer: a coarse one may fire up to 5% late by design, which is not a stall.
    probe_.setTimerType(Qt::PreciseTimer);
    probe_.setInterval(options_.probeInterval);
    connect(&probe_, &QTimer::timeout, this, &BenchMode::onProbe);
    end_.setSingleShot(true);
    connect(&end_, &QTimer::timeout, this, &BenchMode::finish);
    connect(&window_.poller(), &Poller::resultReady, this, &BenchMode::onPoll);
}

long BenchMode::rssKiB() {
    QFile f(QStringLiteral("/proc/self/status"));
    if (!f.open(QIODevice::ReadOnly)) return -1;
    for (const QByteArray& line : f.readAll().split('\n'))
        if (line.startsWith("VmRSS:")) return line.mid(6).trimmed().split(' ').first().toLong();
    return -1;
}

void BenchMode::start() {
    window_.poller().setBenchmarkInterval(options_.pollInterval);
    rssStart_ = rssKiB();
    clock_.start();
    lastProbeNs_ = clock_.nsecsElapsed();
    lastProbeCpuMs_ = threadCpuMs();
    probe_.start();
    end_.start(options_.duration);
}

void BenchMode::onProbe() {
    const qint64 now = clock_.nsecsElapsed();
    const double late = static_cast<double>(now - lastProbeNs_) / 1e6 - static_cast<double>(options_.probeInterval.count());
    lastProbeNs_ = now;
    const double cpu = threadCpuMs();
    const double busy = cpu - lastProbeCpuMs_;
    lastProbeCpuMs_ = cpu;
    (polls_ <= 1 ? firstLoadStalls_ : stalls_).push_back(std::max(0.0, late));
    (polls_ <= 1 ? firstLoadBusy_ : busy_).push_back(busy);
}

void BenchMode::onPoll(const PollResultPtr& result) {
    if (!result || !result->snapshot) return;
    ++polls_;
    if (polls_ == 1) {
        firstPollAtMs_ = static_cast<double>(clock_.elapsed());
        rssFirstPoll_ = rssKiB();
    }
    if (options_.rssEvery > 0 && polls_ % options_.rssEvery == 0) {
        rssAt_.emplace_back(polls_, rssKiB());
        // Progress as it happens: a long run may be cut short, its numbers so far still count.
        std::fprintf(stderr, "lockscope bench: %llu polls after %.0f s, RSS %ld KiB\n", static_cast<unsigned long long>(polls_),
                     static_cast<double>(clock_.elapsed()) / 1000.0, rssAt_.back().second);
    }
    // Queued: finish() quits the app, which must not happen inside the poller's signal.
    if (options_.maxPolls > 0 && polls_ == options_.maxPolls) QMetaObject::invokeMethod(this, &BenchMode::finish, Qt::QueuedConnection);
    lockRows_ = result->snapshot->locks.size();
    waiterRows_ = 0;
    for (const auto& lock : result->snapshot->locks) waiterRows_ += lock.waiters.size();
}

void BenchMode::finish() {
    if (!probe_.isActive()) return;  // already finished (the duration and the poll count both ended it)
    probe_.stop();
    end_.stop();
    const double seconds = static_cast<double>(clock_.elapsed()) / 1000.0;
    const int shown = window_.locksView().model() ? window_.locksView().model()->rowCount() : 0;
    std::printf("lockscope bench: %.1f s, %llu polls (%.1f/s, interval %lld ms), %zu locks + %zu waiters in the last poll, "
                "%d lock rows shown\n",
                seconds, static_cast<unsigned long long>(polls_), static_cast<double>(polls_) / seconds,
                static_cast<long long>(options_.pollInterval.count()), lockRows_, waiterRows_, shown);
    std::printf("event-loop stall (probe every %lld ms): after the first poll max %.1f ms, p99 %.1f ms, p50 %.1f ms over %zu ticks\n",
                static_cast<long long>(options_.probeInterval.count()), maxOf(stalls_), quantile(stalls_, 0.99),
                quantile(stalls_, 0.5), stalls_.size());
    std::printf("GUI-thread CPU between two ticks (the app's own share of a stall): max %.1f ms, p99 %.1f ms\n", maxOf(busy_),
                quantile(busy_, 0.99));
    std::printf("first poll (all rows loaded at once) after %.0f ms; up to then: stall max %.1f ms, GUI-thread CPU max %.1f ms\n",
                firstPollAtMs_, maxOf(firstLoadStalls_), maxOf(firstLoadBusy_));
    std::printf("RSS: %ld KiB at start, %ld KiB after the first poll, %ld KiB at the end\n", rssStart_, rssFirstPoll_, rssKiB());
    if (!rssAt_.empty()) {
        std::printf("RSS by polls:");
        for (const auto& [polls, kib] : rssAt_) std::printf(" %llu:%ld", static_cast<unsigned long long>(polls), kib);
        std::printf(" (KiB)\n");
    }
    std::fflush(stdout);
    QApplication::exit(polls_ > 0 ? 0 : 1);
}

}  // namespace lockscope
