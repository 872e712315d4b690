// What the summary strip above the locks view says, computed from one poll's result (the same
// snapshot and hold starts the locks model shows), at the server's clock of that poll. No widgets:
// the strip only writes it out.
#pragma once

#include <optional>

#include "pglock/monitor.hpp"
#include "poller/poll_result.hpp"

namespace lockscope {

struct SummaryThresholds {
    double longWait = 5.0;            // seconds: a wait this long is highlighted
    double longHold = 60.0;           // seconds: a hold this long is highlighted
    double idleInTransaction = 30.0;  // seconds: a holder idle in transaction this long is counted
    double xminPin = 10.0;            // seconds: a waiter whose snapshot pins xmin this long is counted
};

struct LockSummary {
    int locksHeld = 0;        // locks with at least one holder
    int sessionsWaiting = 0;  // distinct sessions waiting for an advisory lock
    struct Wait {
        pglock::monitor::LockId lock;
        int pid = 0;
        double seconds = 0;
    };
    std::optional<Wait> longestWait;  // needs wait_start (PostgreSQL 14+)
    int longWaits = 0;                // waits at or over SummaryThresholds::longWait
    int longHolds = 0;                // locks held at or over SummaryThresholds::longHold (oldest holder)
    int idleInTransactionHolders = 0; // distinct holders idle in transaction over the threshold
    int xminPins = 0;                 // waiters pinning the xmin horizon over the threshold
    // Whatever the thresholds: the oldest hold (of a lock's oldest holder) and the oldest xmin
    // pin of a waiter, in seconds; nullopt when there is none (the fleet view ranks by them).
    std::optional<double> longestHold;
    std::optional<double> longestXminPin;
};

LockSummary summarize(const PollResult& result, const SummaryThresholds& thresholds);

}  // namespace lockscope
