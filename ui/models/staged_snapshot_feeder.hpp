// Feeds poll snapshots to a LocksModel so that no event-loop turn inserts more than a few
// thousand lock rows: the first poll of 10,000 locks (or a reconnect's) would otherwise be one
// ~65 ms block of model inserts, proxy sorting and view updates on the GUI thread.
//
// A snapshot that adds at most maxAddedPerTurn() locks to the model is applied at once, as
// before. A bigger one is applied in steps, one per turn of a zero-interval timer: each step is
// the locks the model already shows plus the next maxAddedPerTurn() it lacks, in the snapshot's
// (sorted) order; the last step applies the snapshot itself. A step is a copy of those lock
// entries and of the backends they name (the model's rows point into it, so it must be a real
// Snapshot). The
// model's own merge does the work of each step, so selection, expansion and scroll survive.
// A new snapshot arriving while staging replaces the target: staging continues toward it, no
// result is dropped and none is applied in one big step. The model's reset (LocksModel::clear(),
// on disconnect) cancels staging.
#pragma once

#include <QObject>
#include <QTimer>

#include <memory>

#include "pglock/monitor.hpp"
#include "poller/poll_result.hpp"

namespace lockscope {

class LocksModel;

class StagedSnapshotFeeder : public QObject {
    Q_OBJECT

public:
    static constexpr int defaultMaxAddedPerTurn = 2000;

    explicit StagedSnapshotFeeder(LocksModel* model, QObject* parent = nullptr);

    // Applies `snapshot` to the model now, or starts (or retargets) staging toward it.
    void feed(std::shared_ptr<const pglock::monitor::Snapshot> snapshot);
    // The same for a poll result's snapshot; the model also takes the hold start times the result
    // carries (LocksModel::setHoldStarts). Every staged step is a part of this snapshot, so those
    // times hold for each step as well.
    void feedResult(const PollResultPtr& result);
    // Drops the target without applying it (the model is about to be cleared).
    void cancel();

    bool staging() const { return target_ != nullptr; }
    // The snapshot the model is being brought to (null when not staging).
    std::shared_ptr<const pglock::monitor::Snapshot> target() const { return target_; }
    void setMaxAddedPerTurn(int n) { maxAdded_ = n > 0 ? n : 1; }
    int maxAddedPerTurn() const { return maxAdded_; }

signals:
    // The model has the whole target snapshot (emitted after staging only, not for direct applies).
    void caughtUp();

private:
    void step();

    LocksModel* model_;
    std::shared_ptr<const pglock::monitor::Snapshot> target_;
    QTimer timer_;
    int maxAdded_ = defaultMaxAddedPerTurn;
    bool staged_ = false;  // some partial step was applied since the last complete snapshot
};

}  // namespace lockscope
