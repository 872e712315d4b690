// A mutable picture of a server's advisory locks for the locks model and proxy tests: World
// turns it into the monitor::Snapshot a poll would return.
#pragma once

#include <algorithm>
#include <map>
#include <memory>
#include <set>
#include <vector>

#include <QtGlobal>

#include "pglock/key.hpp"
#include "pglock/monitor.hpp"

namespace locks_test {

using namespace pglock::monitor;

constexpr double kT0 = 1'700'000'000.0;  // server_now of the first poll

// A mutable picture of the server; make() turns it into the Snapshot a poll would return.
struct World {
    std::vector<LockEntry> locks;
    std::map<int, Backend> backends;
    double now = kT0;
    bool reversed = false;  // hand the locks over in reverse order (the model must not care)

    LockEntry& add(std::int64_t key, std::vector<int> holders, std::vector<int> waiters = {}) {
        LockEntry e;
        e.key = key;
        e.tag = pglock::tag_of(key);
        e.pair_first = static_cast<std::int32_t>(e.tag.classid);
        e.pair_second = static_cast<std::int32_t>(e.tag.objid);
        for (int h : holders) e.holders.push_back({h, false});
        for (int w : waiters) e.waiters.push_back({w, false, now - 10, holders});
        locks.push_back(std::move(e));
        return locks.back();
    }
    LockEntry& addPair(std::int32_t a, std::int32_t b, int holder) {
        LockEntry e;
        e.form = KeyForm::int_pair;
        e.tag = {static_cast<std::uint32_t>(a), static_cast<std::uint32_t>(b)};
        e.key = pglock::key_of(e.tag);
        e.pair_first = a;
        e.pair_second = b;
        e.holders.push_back({holder, false});
        locks.push_back(std::move(e));
        return locks.back();
    }
    LockEntry& lock(std::int64_t key) {
        auto it = std::find_if(locks.begin(), locks.end(), [&](const LockEntry& e) { return e.key == key && e.form == KeyForm::bigint; });
        if (it == locks.end()) qFatal("no lock %lld in the test world", static_cast<long long>(key));
        return *it;
    }
    void remove(std::int64_t key) {
        std::erase_if(locks, [&](const LockEntry& e) { return e.key == key && e.form == KeyForm::bigint; });
    }
    // Waiters already there keep their wait_start and blocked_by, as on a real server.
    void setWaiters(std::int64_t key, std::vector<int> pids) {
        LockEntry& e = lock(key);
        std::vector<int> blockers;
        for (const auto& h : e.holders) blockers.push_back(h.pid);
        std::vector<Waiter> next;
        for (int w : pids) {
            auto it = std::find_if(e.waiters.begin(), e.waiters.end(), [w](const Waiter& x) { return x.pid == w; });
            next.push_back(it != e.waiters.end() ? *it : Waiter{w, false, now - 10, blockers});
        }
        e.waiters = std::move(next);
    }
    // Sessions default to an idle "svc" client of user alice over the unix socket.
    Backend& backend(int pid) {
        Backend& b = backends[pid];
        if (b.pid == 0) {
            b.pid = pid;
            b.state = "idle";
            b.application_name = "svc";
            b.usename = "alice";
            b.query = "SELECT pg_advisory_lock($1)";
            b.state_change = now - 60;
        }
        return b;
    }
    std::shared_ptr<const Snapshot> make() {
        Snapshot s;
        s.server_version = 150000;
        s.server_now = now;
        s.locks = locks;
        std::sort(s.locks.begin(), s.locks.end(), [](const LockEntry& a, const LockEntry& b) { return id_of(a) < id_of(b); });
        if (reversed) std::reverse(s.locks.begin(), s.locks.end());
        // As the monitor does: the sessions named by a lock, no others.
        std::set<int> named;
        for (const auto& e : s.locks) {
            for (const auto& h : e.holders) named.insert(h.pid);
            for (const auto& w : e.waiters) named.insert(w.pid);
        }
        for (int pid : named) s.backends.emplace(pid, backend(pid));
        return std::make_shared<const Snapshot>(std::move(s));
    }
};

}  // namespace locks_test
