// The longest time the event loop went without running a 5 ms timer: what a user would feel
// as a frozen window. On a loaded machine (or under a sanitizer) that wall time also counts other
// processes' turns on the CPU, so the GUI thread's own CPU time between two ticks is kept too:
// work done on the GUI thread shows there, whatever the load.
#pragma once

#include <QElapsedTimer>
#include <QTimer>

#include <algorithm>
#include <ctime>

// A GUI-thread budget is set for an optimised build. Sanitizer instrumentation makes the same work
// two to three times slower (ASan's shadow checks on every access), and the sanitizer presets are
// there to find memory and data-race errors, not to time: they get three times the budget.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define PGLOCK_TEST_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define PGLOCK_TEST_SANITIZED 1
#endif
#endif

constexpr double stallBudgetMs(double optimisedMs) {
#ifdef PGLOCK_TEST_SANITIZED
    return optimisedMs * 3;
#else
    return optimisedMs;
#endif
}

class StallProbe {
public:
    StallProbe() {
        timer_.setInterval(5);
        timer_.setTimerType(Qt::PreciseTimer);
        lastCpuMs_ = threadCpuMs();
        QObject::connect(&timer_, &QTimer::timeout, [this] {
            maxGapMs_ = std::max(maxGapMs_, since_.restart());
            const double cpu = threadCpuMs();
            maxBusyMs_ = std::max(maxBusyMs_, cpu - lastCpuMs_);
            lastCpuMs_ = cpu;
        });
        since_.start();
        timer_.start();
    }
    qint64 maxGapMs() const { return maxGapMs_; }
    double maxBusyMs() const { return maxBusyMs_; }  // the GUI thread's own CPU between two ticks
    void reset() {
        maxGapMs_ = 0;
        maxBusyMs_ = 0;
        since_.restart();
        lastCpuMs_ = threadCpuMs();
    }
    // The calling thread's CPU time so far: for work timed around a call rather than per tick.
    static double threadCpuMs() {
        timespec ts{};
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
        return double(ts.tv_sec) * 1e3 + double(ts.tv_nsec) / 1e6;
    }

private:
    QTimer timer_;
    QElapsedTimer since_;
    qint64 maxGapMs_ = 0;
    double lastCpuMs_ = 0;
    double maxBusyMs_ = 0;
};
