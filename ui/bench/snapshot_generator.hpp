// Realistic monitor snapshots for the client-side benchmarks: N advisory locks held by M sessions
// (keys of real names, so half of them can be catalogued), W sessions waiting on some of them, and
// between consecutive snapshots a little churn: some locks change holder or mode, some are
// released and others taken. No server: the point is to time what the app does with a poll.
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "pglock/monitor.hpp"

namespace lockscope::bench {

struct GeneratorConfig {
    int locks = 10000;
    int sessions = 100;     // holder sessions (the locks are spread over them)
    int waiters = 200;      // waiting sessions, one lock each
    double changeFraction = 0.01;  // locks whose holder or mode changes per snapshot
    double churnFraction = 0.01;   // locks released per snapshot, as many new ones taken
    double pollSeconds = 1.0;      // server clock step between snapshots
};

class SnapshotGenerator {
public:
    explicit SnapshotGenerator(GeneratorConfig config, std::uint64_t seed = 42);

    // The next snapshot (the first one has no churn).
    pglock::monitor::Snapshot next();
    // The name of the i-th lock ever created ("bench.lock.<i>"): what a catalog would list.
    static std::string nameOf(std::int64_t serial);

private:
    struct Lock {
        std::int64_t serial = 0;
        std::int64_t key = 0;
        int holder = 0;  // pid
        bool shared = false;
    };
    Lock makeLock();
    void churn();

    GeneratorConfig config_;
    std::mt19937_64 rng_;
    std::vector<Lock> locks_;
    std::vector<std::size_t> waitOn_;  // per waiting session: index into locks_
    std::int64_t nextSerial_ = 0;
    double now_ = 1.7e9;
    bool first_ = true;
};

}  // namespace lockscope::bench
