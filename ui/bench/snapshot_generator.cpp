#include "snapshot_generator.hpp"

#include <algorithm>

#include "pglock/key.hpp"

namespace lockscope::bench {

using pglock::monitor::Backend;
using pglock::monitor::KeyForm;
using pglock::monitor::LockEntry;
using pglock::monitor::Snapshot;

namespace {
constexpr int kFirstHolderPid = 10000;
constexpr int kFirstWaiterPid = 50000;
}  // namespace

SnapshotGenerator::SnapshotGenerator(GeneratorConfig config, std::uint64_t seed) : config_(config), rng_(seed) {
    locks_.reserve(static_cast<std::size_t>(config_.locks));
    for (int i = 0; i < config_.locks; ++i) locks_.push_back(makeLock());
    std::uniform_int_distribution<std::size_t> pick(0, locks_.size() - 1);
    for (int i = 0; i < config_.waiters && !locks_.empty(); ++i) waitOn_.push_back(pick(rng_));
}

std::string SnapshotGenerator::nameOf(std::int64_t serial) { return "bench.lock." + std::to_string(serial); }

SnapshotGenerator::Lock SnapshotGenerator::makeLock() {
    Lock lock;
    lock.serial = nextSerial_++;
    lock.key = pglock::key_of(nameOf(lock.serial));
    std::uniform_int_distribution<int> session(0, config_.sessions - 1);
    lock.holder = kFirstHolderPid + session(rng_);
    return lock;
}

void SnapshotGenerator::churn() {
    if (locks_.empty()) return;
    std::uniform_int_distribution<std::size_t> pick(0, locks_.size() - 1);
    std::uniform_int_distribution<int> session(0, config_.sessions - 1);
    const auto count = [&](double fraction) { return static_cast<int>(fraction * static_cast<double>(locks_.size()) + 0.5); };
    for (int i = count(config_.changeFraction); i-- > 0;) {
        Lock& lock = locks_[pick(rng_)];
        if (rng_() % 2) lock.holder = kFirstHolderPid + session(rng_);
        else lock.shared = !lock.shared;
    }
    // Released locks make room for new ones at the same index: waiters on them now wait on the
    // new lock (they were granted theirs, then asked for another).
    for (int i = count(config_.churnFraction); i-- > 0;) locks_[pick(rng_)] = makeLock();
    // A few waiters move on to another lock each poll.
    for (std::size_t i = 0; i < waitOn_.size(); i += 50) waitOn_[(i + static_cast<std::size_t>(rng_() % 50)) % waitOn_.size()] = pick(rng_);
}

Snapshot SnapshotGenerator::next() {
    if (!first_) churn();
    first_ = false;
    now_ += config_.pollSeconds;
    Snapshot snap;
    snap.server_version = 150010;
    snap.server_now = now_;
    snap.latency_ms = 3.0;
    snap.locks.reserve(locks_.size());
    for (std::size_t i = 0; i < locks_.size(); ++i) {
        const Lock& lock = locks_[i];
        LockEntry& e = snap.locks.emplace_back();
        e.form = KeyForm::bigint;
        e.key = lock.key;
        e.tag = pglock::tag_of(lock.key);
        e.holders.push_back({lock.holder, lock.shared});
        auto& b = snap.backends[lock.holder];
        if (b.pid == 0) {
            const int n = lock.holder - kFirstHolderPid;
            b.pid = lock.holder;
            b.state = n % 10 == 0 ? "idle in transaction" : "idle";
            b.application_name = "loadgen-" + std::to_string(n % 5);
            b.usename = "bench";
            b.client_addr = n % 2 ? "10.0.0." + std::to_string(n % 250) : "";
            b.query = "SELECT pg_advisory_lock($1)";
            b.backend_start = now_ - 3600;
            b.state_change = now_ - 60;
        }
    }
    for (std::size_t w = 0; w < waitOn_.size(); ++w) {
        LockEntry& e = snap.locks[waitOn_[w]];
        const int pid = kFirstWaiterPid + static_cast<int>(w);
        pglock::monitor::Waiter waiter;
        waiter.pid = pid;
        waiter.wait_start = now_ - 5.0 - static_cast<double>(w % 30);
        waiter.blocked_by = {e.holders.front().pid};
        e.waiters.push_back(std::move(waiter));
        auto& b = snap.backends[pid];
        b.pid = pid;
        b.state = "active";
        b.application_name = "waiter";
        b.usename = "bench";
        b.query = "SELECT pg_advisory_lock($1)";
        b.wait_event_type = "Lock";
        b.wait_event = "advisory";
    }
    // What monitor::poll() returns: locks sorted by form then signed key, holders by pid,
    // waiters oldest first.
    for (auto& e : snap.locks) {
        std::sort(e.waiters.begin(), e.waiters.end(), [](const auto& a, const auto& b) { return *a.wait_start < *b.wait_start; });
    }
    std::sort(snap.locks.begin(), snap.locks.end(), [](const LockEntry& a, const LockEntry& b) { return a.key < b.key; });
    return snap;
}

}  // namespace lockscope::bench
