// What one poll hands to the GUI thread: the snapshot, when each visible hold started, and the
// holds and waits that ended with it. Immutable once emitted, shared by pointer (no copies per receiver).
#pragma once

#include <QMetaType>

#include <map>
#include <memory>
#include <optional>
#include <vector>

#include "models/lock_summary.hpp"
#include "pglock/context_locks.hpp"
#include "pglock/lock_tree.hpp"
#include "pglock/monitor.hpp"
#include "pglock/orphan.hpp"

namespace lockscope {

struct PollResult {
    std::shared_ptr<const pglock::monitor::Snapshot> snapshot;
    // (lock, pid) -> server epoch seconds when the hold was first seen.
    std::map<std::pair<pglock::monitor::LockId, int>, double> held_since;
    std::vector<pglock::monitor::Hold> finished;  // holds that ended since the previous poll
    std::vector<pglock::monitor::Wait> finished_waits;  // waits that ended since the previous poll
    quint64 generation = 0;                       // which connection produced it
    // Locks other libraries derive from this database and its schemas (read once a minute, so
    // consecutive results usually share one object).
    std::shared_ptr<const pglock::monitor::ContextLocks> context_locks;
    // Each holder's orphan evidence (pid -> evidence), from this and the earlier snapshots.
    std::map<int, std::vector<pglock::monitor::OrphanEvidence>> orphans;
    // The lock tree of the snapshot (pglock/lock_tree.hpp), built on the poll thread; advisory
    // edges carry default names, which the views replace with the app's (lock_naming.hpp).
    std::vector<pglock::monitor::RootBlocker> roots;
    // The summary strip's and the fleet row's numbers, computed on the poll thread with the
    // thresholds the session had set then (Poller::setSummaryThresholds); summarize() returns it
    // when asked with the same thresholds. Absent when no thresholds were set.
    struct Summary {
        SummaryThresholds thresholds;
        LockSummary summary;
    };
    std::optional<Summary> summary;

    std::optional<double> heldSince(const pglock::monitor::LockId& lock, int pid) const {
        if (auto it = held_since.find({lock, pid}); it != held_since.end()) return it->second;
        return std::nullopt;
    }
};

using PollResultPtr = std::shared_ptr<const PollResult>;

enum class PollState {
    stopped,       // no connection asked for
    connecting,    // first attempt under way
    connected,     // polling
    disconnected,  // lost or refused: retrying with backoff
};

}  // namespace lockscope

Q_DECLARE_METATYPE(lockscope::PollResultPtr)
Q_DECLARE_METATYPE(lockscope::PollState)
