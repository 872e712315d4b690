#include "bench/bench_mode.hpp"

#include <QCoreApplication>
#include <QFile>

#include <malloc.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <string>

#include "models/locks_model.hpp"
#include "session/server_session.hpp"

namespace lockscope {

DelayHistogram::DelayHistogram() : buckets_(static_cast<std::size_t>(2000.0 / kBucketMs) + 1, 0) {}

void DelayHistogram::add(double ms) {
    ms = std::max(0.0, ms);
    const auto i = std::min(static_cast<std::size_t>(std::ceil(ms / kBucketMs)), buckets_.size() - 1);
    ++buckets_[i];
    ++count_;
    max_ = std::max(max_, ms);
}

double DelayHistogram::quantile(double q) const {
    if (count_ == 0) return 0;
    const auto rank = static_cast<std::size_t>(std::ceil(q * static_cast<double>(count_)));
    std::size_t seen = 0;
    for (std::size_t i = 0; i < buckets_.size(); ++i) {
        seen += buckets_[i];
        if (seen >= std::max<std::size_t>(rank, 1)) return std::min(max_, static_cast<double>(i) * kBucketMs);
    }
    return max_;
}

namespace {
double threadCpuMs() {
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) / 1e6;
}
}  // namespace

BenchMode::BenchMode(ServerSession& session, Options options, QObject* parent)
    : QObject(parent), session_(session), options_(options) {
    // A precise timer: a coarse one may fire up to 5% late by design, which is not a stall.
    probe_.setTimerType(Qt::PreciseTimer);
    probe_.setInterval(options_.probeInterval);
    connect(&probe_, &QTimer::timeout, this, &BenchMode::onProbe);
    end_.setSingleShot(true);
    connect(&end_, &QTimer::timeout, this, &BenchMode::finish);
    connect(&session_.poller(), &Poller::resultReady, this, &BenchMode::onPoll);
}

long BenchMode::rssKiB() {
    QFile f(QStringLiteral("/proc/self/status"));
    if (!f.open(QIODevice::ReadOnly)) return -1;
    for (const QByteArray& line : f.readAll().split('\n'))
        if (line.startsWith("VmRSS:")) return line.mid(6).trimmed().split(' ').first().toLong();
    return -1;
}

int BenchMode::threadCount() {
    QFile f(QStringLiteral("/proc/self/status"));
    if (!f.open(QIODevice::ReadOnly)) return -1;
    for (const QByteArray& line : f.readAll().split('\n'))
        if (line.startsWith("Threads:")) return line.mid(8).trimmed().toInt();
    return -1;
}

long BenchMode::heapInUseKiB() {
    const struct mallinfo2 info = ::mallinfo2();
    return static_cast<long>((info.uordblks + info.hblkhd) / 1024);
}

void BenchMode::start() {
    session_.poller().setBenchmarkInterval(options_.pollInterval);
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
    // This tick's delay belongs to the turns before it: to the first load while it was not done
    // when the previous tick looked.
    const bool firstLoad = firstLoadDoneAtMs_ < 0;
    (firstLoad ? firstLoadStalls_ : stalls_).add(late);
    (firstLoad ? firstLoadBusy_ : busy_).add(busy);
    if (firstLoad && polls_ > 0 && !session_.catchingUp()) {
        firstLoadDoneAtMs_ = static_cast<double>(now) / 1e6;
        rssFirstLoad_ = rssKiB();
    }
}

void BenchMode::onPoll(const PollResultPtr& result) {
    if (!result || !result->snapshot) return;
    ++polls_;
    if (polls_ == 1) {
        firstPollAtMs_ = static_cast<double>(clock_.elapsed());
    }
    if (options_.rssEvery > 0 && polls_ % options_.rssEvery == 0) {
        rssAt_.push_back({polls_, rssKiB(), heapInUseKiB()});
        // Progress as it happens: a long run may be cut short, its numbers so far still count.
        std::fprintf(stderr, "lockscope bench: %llu polls after %.0f s, RSS %ld KiB, heap in use %ld KiB\n",
                     static_cast<unsigned long long>(polls_), static_cast<double>(clock_.elapsed()) / 1000.0,
                     rssAt_.back().rssKiB, rssAt_.back().heapKiB);
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
    const int shown = session_.locksModel().rowCount();
    std::printf("lockscope bench: %.1f s, %llu polls (%.1f/s, interval %lld ms), %zu locks + %zu waiters in the last poll, "
                "%d lock rows shown\n",
                seconds, static_cast<unsigned long long>(polls_), static_cast<double>(polls_) / seconds,
                static_cast<long long>(options_.pollInterval.count()), lockRows_, waiterRows_, shown);
    std::printf("event-loop stall (probe every %lld ms): after the first load max %.1f ms, p99 %.1f ms, p50 %.1f ms over %zu ticks\n",
                static_cast<long long>(options_.probeInterval.count()), stalls_.max(), stalls_.quantile(0.99),
                stalls_.quantile(0.5), stalls_.count());
    std::printf("GUI-thread CPU between two ticks (the app's own share of a stall): max %.1f ms, p99 %.1f ms\n", busy_.max(),
                busy_.quantile(0.99));
    // A run too short for the first load to finish says so rather than printing a time.
    const std::string done = firstLoadDoneAtMs_ < 0 ? std::string("not yet") : "after " + std::to_string(std::lround(firstLoadDoneAtMs_)) + " ms";
    std::printf("first load: first poll after %.0f ms, in every model (staged) %s; up to then: stall max %.1f ms, "
                "p99 %.1f ms, GUI-thread CPU max %.1f ms\n",
                firstPollAtMs_, done.c_str(), firstLoadStalls_.max(), firstLoadStalls_.quantile(0.99), firstLoadBusy_.max());
    std::printf("RSS: %ld KiB at start, %ld KiB after the first load, %ld KiB at the end; %d threads\n", rssStart_, rssFirstLoad_,
                rssKiB(), threadCount());
    if (!rssAt_.empty()) {
        std::printf("RSS / heap in use by polls:");
        for (const MemoryAt& m : rssAt_)
            std::printf(" %llu:%ld/%ld", static_cast<unsigned long long>(m.polls), m.rssKiB, m.heapKiB);
        std::printf(" (KiB)\n");
    }
    std::fflush(stdout);
    QCoreApplication::exit(polls_ > 0 ? 0 : 1);
}

}  // namespace lockscope
