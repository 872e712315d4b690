#include "staged_snapshot_feeder.hpp"

#include <cstddef>
#include <utility>

#include "locks_model.hpp"

namespace lockscope {

namespace mon = pglock::monitor;

namespace {

// How many leading entries of `snap.locks` hold at most `budget` locks that `model` lacks.
std::size_t prefixWithin(const LocksModel& model, const mon::Snapshot& snap, int budget) {
    std::size_t n = 0;
    int added = 0;
    for (; n < snap.locks.size(); ++n) {
        if (model.indexOfLock(mon::id_of(snap.locks[n])).isValid()) continue;
        if (added == budget) break;
        ++added;
    }
    return n;
}

// A snapshot of the first `n` locks of `full`, with the backends they name.
std::shared_ptr<const mon::Snapshot> prefixOf(const mon::Snapshot& full, std::size_t n) {
    auto part = std::make_shared<mon::Snapshot>();
    part->server_version = full.server_version;
    part->in_recovery = full.in_recovery;
    part->server_now = full.server_now;
    part->latency_ms = full.latency_ms;
    part->locks.assign(full.locks.begin(), full.locks.begin() + static_cast<std::ptrdiff_t>(n));
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

void StagedSnapshotFeeder::cancel() {
    target_.reset();
    timer_.stop();
    staged_ = false;
}

void StagedSnapshotFeeder::step() {
    if (!target_) return;
    const std::size_t n = prefixWithin(*model_, *target_, maxAdded_);
    if (n == target_->locks.size()) {
        auto full = std::move(target_);
        timer_.stop();
        model_->applySnapshot(std::move(full));
        if (std::exchange(staged_, false)) emit caughtUp();
        return;
    }
    staged_ = true;
    model_->applySnapshot(prefixOf(*target_, n));
    timer_.start();
}

}  // namespace lockscope
