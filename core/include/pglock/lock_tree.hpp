// The lock tree: who blocks whom, to the root. From one monitor snapshot (its advisory locks and
// the other waits of the sessions on their chains), the trees rooted at each root blocker — a
// session that blocks others and waits on nothing — with the lock named on every edge, counts per
// root, and the roots ranked by impact. Qt-free; shared by `pglock status` and lockscope.
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "pglock/monitor.hpp"

namespace pglock::monitor {

// A session in a tree: it waits for `lock`, which its parent holds (or, when `queued`, which the
// sessions ahead of it in the queue wait for; see blockers_of()).
struct TreeNode {
    int pid = 0;
    std::string lock;                 // what it waits for: the caller's name of an advisory key, or a description
    std::string locktype;             // pg_locks.locktype: "advisory", "transactionid", "tuple", "relation", ...
    std::string mode;                 // advisory: "shared" or "exclusive"; others: pg_locks.mode ("ShareLock", ...)
    std::optional<LockId> advisory;   // set when it waits for an advisory lock
    bool shared = false;              // advisory: asks in shared mode
    bool queued = false;              // advisory: no granted holder conflicts; it waits behind earlier waiters
    std::optional<double> wait_start; // epoch seconds (PostgreSQL 14+)
    // Shown before in this tree (it has a second blocker, or closes a cycle): its subtree is where
    // it was shown first, so it has no children here.
    bool repeated = false;
    std::vector<TreeNode> children;   // the sessions it blocks, oldest wait first
};

struct RootBlocker {
    int pid = 0;
    // Every session of this tree waits on another: a deadlock the server has not broken yet (it
    // does after deadlock_timeout). The tree is rooted at the cycle's lowest pid.
    bool cycle = false;
    std::size_t blocked_directly = 0;  // distinct sessions waiting on the root itself
    std::size_t blocked_total = 0;     // distinct sessions below it, at any depth
    std::optional<double> oldest_wait_start;
    std::string via;                   // the lock most of its direct children wait for
    std::vector<TreeNode> children;
};

// How the caller names an advisory lock on an edge (a catalog, a key scheme, ...).
using EdgeNamer = std::function<std::string(const LockEntry&)>;

// The holder's verified application_name, else "key N" (or "pair a,b" for the int4 form).
std::string default_lock_name(const LockEntry& lock);

// The sessions `pid` waits on, as the tree counts them. An advisory waiter is blocked only by the
// *granted* holders of its key whose mode conflicts with its own (shared and shared do not),
// never by another waiter, although pg_blocking_pids() also names the waiters queued ahead of it
// (soft blocks: PostgreSQL grants in queue order). A waiter no granted holder conflicts with waits
// only behind such queued waiters: it is `queued` and counted under their blockers, whose release
// lets the queue move. For other lock types pg_blocking_pids() is taken as the server gives it.
std::vector<int> blockers_of(const Snapshot& snapshot, int pid);

// The trees of every root blocker, highest impact first (most sessions blocked in total, then the
// oldest wait, then pid). A cycle is reported once, as a root with `cycle` set; no walk loops.
std::vector<RootBlocker> lock_tree(const Snapshot& snapshot, const EdgeNamer& namer = default_lock_name);

}  // namespace pglock::monitor
