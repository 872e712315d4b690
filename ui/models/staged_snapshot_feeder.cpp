#include "staged_snapshot_feeder.hpp"

#include <cstddef>
#include <utility>
#include <vector>

#include "locks_model.hpp"

namespace lockscope {

namespace mon = pglock::monitor;

namespace {

// The entries of `snap.locks` to apply in this step: every lock the model already shows (so a
// retargeted staging never drops a row only to add it back later) and the first `budget` it
// lacks, in the snapshot's order. Empty when the whole snapshot fits in the budget.
std::vector<std::size_t> stepOf(const LocksModel& model, const mon::Snapshot& snap, int budget) {
    std::vector<std::size_t> keep;
    keep.reserve(snap.locks.size());
    int added = 0;
    bool over = false;
    for (std::size_t i = 0; i < snap.locks.size(); ++i) {
        if (model.indexOfLock(mon::id_of(snap.locks[i])).isValid()) {
            keep.push_back(i);
        } else if (added < budget) {
            ++added;
            keep.push_back(i);
        } else {
            over = true;
        }
    }
    if (!over) keep.clear();
    return keep;
}

// A snapshot of the entries `keep` of `full`, with the backends they name.
std::shared_ptr<const mon::Snapshot> partOf(const mon::Snapshot& full, const std::vector<std::size_t>& keep) {
    auto part = std::make_shared<mon::Snapshot>();
    part->server_version = full.server_version;
    part->in_recovery = full.in_recovery;
    part->server_now = full.server_now;
    part->latency_ms = full.latency_ms;
    part->locks.reserve(keep.size());
    for (std::size_t i : keep) part->locks.push_back(full.locks[i]);
    const auto take = [&](int pid) {
        if (part->backends.contains(pid)) return;
        const auto it = full.backends.find(pid);
        if (it != full.backends.end()) part->backends.emplace(pid, it->second);
    };
    for (const auto& lock : part->locks) {
        for (const auto& h : lock.holders) take(h.pid);
        for (const auto& w : lock.waiters) {
            take(w.pid);
            for (int pid : w.blocked_by) take(pid);
        }
    }
    return part;
}

}  // namespace

StagedSnapshotFeeder::StagedSnapshotFeeder(LocksModel* model, QObject* parent) : QObject(parent), model_(model) {
    timer_.setSingleShot(true);
    timer_.setInterval(0);  // timers and input get their turn between two steps
    connect(&timer_, &QTimer::timeout, this, &StagedSnapshotFeeder::step);
    connect(model_, &QAbstractItemModel::modelAboutToBeReset, this, &StagedSnapshotFeeder::cancel);
}

void StagedSnapshotFeeder::feed(std::shared_ptr<const mon::Snapshot> snapshot) {
    if (!snapshot) {  // an empty snapshot adds nothing
        cancel();
        model_->applySnapshot(nullptr);
        return;
    }
    target_ = std::move(snapshot);
    step();
}

void StagedSnapshotFeeder::feedResult(const PollResultPtr& result) {
    model_->setHoldStarts(result);
    feed(result ? result->snapshot : nullptr);
}

void StagedSnapshotFeeder::cancel() {
    target_.reset();
    timer_.stop();
    staged_ = false;
}

void StagedSnapshotFeeder::step() {
    if (!target_) return;
    const std::vector<std::size_t> keep = stepOf(*model_, *target_, maxAdded_);
    if (keep.empty()) {
        auto full = std::move(target_);
        timer_.stop();
        model_->applySnapshot(std::move(full));
        if (std::exchange(staged_, false)) emit caughtUp();
        return;
    }
    staged_ = true;
    model_->applySnapshot(partOf(*target_, keep));
    timer_.start();
}

}  // namespace lockscope
