#include "models/lock_summary.hpp"

#include <algorithm>
#include <limits>
#include <set>
#include <string_view>

#include "poller/poll_result.hpp"

namespace lockscope {

using pglock::monitor::Backend;
using pglock::monitor::LockEntry;

LockSummary summarize(const PollResult& result, const SummaryThresholds& thresholds) {
    if (result.summary && result.summary->thresholds == thresholds) return result.summary->summary;
    if (!result.snapshot) return {};
    return summarize(*result.snapshot, result.held_since, thresholds);
}

void storeSummary(PollResult& result, const SummaryThresholds& thresholds) {
    LockSummary summary = result.snapshot ? summarize(*result.snapshot, result.held_since, thresholds) : LockSummary{};
    result.summary = PollResult::Summary{thresholds, std::move(summary)};
}

LockSummary summarize(const pglock::monitor::Snapshot& snap,
                      const std::map<std::pair<pglock::monitor::LockId, int>, double>& heldSince,
                      const SummaryThresholds& thresholds) {
    LockSummary out;
    const double now = snap.server_now;
    std::set<int> waiting, idleHolders;
    // The hold start times are a map by (lock, pid) and the monitor's locks come sorted by lock:
    // one walk along both instead of a tree lookup per holder (at 50,000 locks the lookups were
    // most of this function, which runs on the GUI thread for every poll).
    auto since = heldSince.begin();
    const auto sinceEnd = heldSince.end();
    std::optional<pglock::monitor::LockId> previous;
    for (const LockEntry& e : snap.locks) {
        const auto id = pglock::monitor::id_of(e);
        if (previous && id < *previous) since = heldSince.lower_bound({id, std::numeric_limits<int>::min()});  // unsorted input
        previous = id;
        while (since != sinceEnd && since->first.first < id) ++since;
        if (!e.holders.empty()) ++out.locksHeld;
        std::optional<double> oldest;
        for (auto it = since; it != sinceEnd && it->first.first == id; ++it) {
            const int pid = it->first.second;
            if (std::none_of(e.holders.begin(), e.holders.end(), [pid](const auto& h) { return h.pid == pid; })) continue;
            if (!oldest || it->second < *oldest) oldest = it->second;
        }
        for (const auto& h : e.holders) {
            const auto b = snap.backends.find(h.pid);
            if (b == snap.backends.end()) continue;
            const Backend& be = b->second;
            if (std::string_view(be.state).starts_with("idle in transaction") && be.state_change &&
                now - *be.state_change > thresholds.idleInTransaction)
                idleHolders.insert(h.pid);
        }
        if (oldest && now - *oldest >= thresholds.longHold) ++out.longHolds;
        if (oldest) out.longestHold = std::max(out.longestHold.value_or(0.0), std::max(0.0, now - *oldest));
        for (const auto& w : e.waiters) {
            waiting.insert(w.pid);
            if (const auto pinned = pglock::monitor::xmin_pinned_seconds(w, now)) {
                if (*pinned >= thresholds.xminPin) ++out.xminPins;
                out.longestXminPin = std::max(out.longestXminPin.value_or(0.0), *pinned);
            }
            if (!w.wait_start) continue;
            const double seconds = std::max(0.0, now - *w.wait_start);
            if (seconds >= thresholds.longWait) ++out.longWaits;
            if (!out.longestWait || seconds > out.longestWait->seconds) out.longestWait = LockSummary::Wait{id, w.pid, seconds};
        }
    }
    out.sessionsWaiting = static_cast<int>(waiting.size());
    out.idleInTransactionHolders = static_cast<int>(idleHolders.size());
    return out;
}

}  // namespace lockscope
