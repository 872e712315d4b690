// What the summary strip above the locks view says, computed from one poll's result (the same
// snapshot and hold starts the locks model shows), at the server's clock of that poll. No widgets:
// the strip only writes it out.
#pragma once

#include <map>
#include <optional>
#include <utility>

#include "pglock/monitor.hpp"

namespace lockscope {

struct PollResult;

struct SummaryThresholds {
    double longWait = 5.0;            // seconds: a wait this long is highlighted
    double longHold = 60.0;           // seconds: a hold this long is highlighted
    double idleInTransaction = 30.0;  // seconds: a holder idle in transaction this long is counted
    double xminPin = 10.0;            // seconds: a waiter whose snapshot pins xmin this long is counted
    friend bool operator==(const SummaryThresholds&, const SummaryThresholds&) = default;
};

struct LockSummary {
    int locksHeld = 0;        // locks with at least one holder
    int sessionsWaiting = 0;  // distinct sessions waiting for an advisory lock
    struct Wait {
        pglock::monitor::LockId lock;
        int pid = 0;
        double seconds = 0;
        friend bool operator==(const Wait&, const Wait&) = default;
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
    friend bool operator==(const LockSummary&, const LockSummary&) = default;
};

// The poll thread computes the summary of each result with the thresholds the session gave it
// (PollResult::summary): that one is returned when `thresholds` are the same, so a result costs
// the GUI thread no walk over its locks however many views show its summary. Other thresholds
// (changed since the poll) compute it here.
LockSummary summarize(const PollResult& result, const SummaryThresholds& thresholds);
// Stores the summary of `result` for `thresholds` in it (PollResult::summary): the poll
// thread's part, before the result goes out.
void storeSummary(PollResult& result, const SummaryThresholds& thresholds);
// The walk itself: the snapshot and the hold start times of one result.
LockSummary summarize(const pglock::monitor::Snapshot& snapshot,
                      const std::map<std::pair<pglock::monitor::LockId, int>, double>& heldSince,
                      const SummaryThresholds& thresholds);

}  // namespace lockscope
