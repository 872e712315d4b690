#include "pglock/lock_tree.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <utility>

namespace pglock::monitor {
namespace {

// What one waiting session waits for and on whom.
struct WaitInfo {
    std::string lock;
    std::string locktype, mode;
    std::optional<LockId> advisory;
    bool shared = false;
    bool queued = false;
    std::optional<double> wait_start;
    std::vector<int> parents;  // sorted, no repeats, never the session itself
};

bool conflicts(bool waiter_shared, bool holder_shared) { return !(waiter_shared && holder_shared); }

std::vector<int> hard_blockers(const LockEntry& lock, const Waiter& w) {
    std::vector<int> out;
    for (const Holder& h : lock.holders)
        if (h.pid != w.pid && conflicts(w.shared, h.shared)) out.push_back(h.pid);
    return out;
}

void add_sorted(std::vector<int>& into, int pid) {
    const auto at = std::lower_bound(into.begin(), into.end(), pid);
    if (at == into.end() || *at != pid) into.insert(at, pid);
}

// Every waiting session of the snapshot, advisory waits first (a pid waits for one lock at a time,
// so an advisory wait wins over the same pid's row in other_waits, which the poll leaves out).
std::map<int, WaitInfo> waits_of(const Snapshot& snapshot, const EdgeNamer* namer) {
    std::map<int, WaitInfo> waits;
    for (const LockEntry& lock : snapshot.locks) {
        const std::string name = namer ? (*namer)(lock) : std::string();
        for (const Waiter& w : lock.waiters) {
            WaitInfo info;
            info.lock = name;
            info.locktype = "advisory";
            info.mode = w.shared ? "shared" : "exclusive";
            info.advisory = id_of(lock);
            info.shared = w.shared;
            info.wait_start = w.wait_start;
            for (int pid : hard_blockers(lock, w)) add_sorted(info.parents, pid);
            if (info.parents.empty()) {
                // Soft-blocked only: behind waiters queued ahead of it (pg_blocking_pids names
                // them). It is counted under what blocks them, not under them.
                info.queued = true;
                for (const Waiter& ahead : lock.waiters) {
                    if (ahead.pid == w.pid ||
                        std::find(w.blocked_by.begin(), w.blocked_by.end(), ahead.pid) == w.blocked_by.end())
                        continue;
                    for (int pid : hard_blockers(lock, ahead))
                        if (pid != w.pid) add_sorted(info.parents, pid);
                }
            }
            waits.emplace(w.pid, std::move(info));
        }
    }
    for (const OtherWait& o : snapshot.other_waits) {
        if (waits.contains(o.pid)) continue;
        WaitInfo info;
        info.lock = o.description;
        info.locktype = o.locktype;
        info.mode = o.mode;
        info.wait_start = o.wait_start;
        for (int pid : o.blocked_by)
            if (pid != o.pid) add_sorted(info.parents, pid);
        waits.emplace(o.pid, std::move(info));
    }
    return waits;
}

struct Graph {
    std::map<int, WaitInfo> waits;
    std::map<int, std::vector<int>> children;  // blocker -> the sessions it blocks

    std::vector<int> children_of(int pid) const {
        const auto it = children.find(pid);
        return it == children.end() ? std::vector<int>{} : it->second;
    }
};

Graph graph_of(const Snapshot& snapshot, const EdgeNamer* namer) {
    Graph g;
    g.waits = waits_of(snapshot, namer);
    for (const auto& [pid, info] : g.waits)
        for (int parent : info.parents) g.children[parent].push_back(pid);
    // Oldest wait first under every blocker (no waitstart: last, by pid).
    for (auto& [parent, kids] : g.children) {
        std::sort(kids.begin(), kids.end(), [&](int a, int b) {
            const auto& wa = g.waits.at(a).wait_start;
            const auto& wb = g.waits.at(b).wait_start;
            if (wa.has_value() != wb.has_value()) return wa.has_value();
            if (wa && *wa != *wb) return *wa < *wb;
            return a < b;
        });
    }
    return g;
}

// Depth first from `pid`; `seen` is this tree's: a session shown twice is shown the second time
// without its subtree, which also ends every cycle.
TreeNode node_of(const Graph& g, int pid, std::set<int>& seen) {
    TreeNode node;
    node.pid = pid;
    if (const auto it = g.waits.find(pid); it != g.waits.end()) {
        node.lock = it->second.lock;
        node.locktype = it->second.locktype;
        node.mode = it->second.mode;
        node.advisory = it->second.advisory;
        node.shared = it->second.shared;
        node.queued = it->second.queued;
        node.wait_start = it->second.wait_start;
    }
    if (!seen.insert(pid).second) {
        node.repeated = true;
        return node;
    }
    for (int child : g.children_of(pid)) node.children.push_back(node_of(g, child, seen));
    return node;
}

RootBlocker root_of(const Graph& g, int pid, bool cycle, std::set<int>& covered) {
    RootBlocker root;
    root.pid = pid;
    root.cycle = cycle;
    std::set<int> seen{pid};
    std::map<std::string, std::size_t> via_count;
    for (int child : g.children_of(pid)) {
        root.children.push_back(node_of(g, child, seen));
        ++via_count[g.waits.at(child).lock];
    }
    std::size_t best = 0;
    for (int child : g.children_of(pid)) {  // the most frequent lock; ties: the oldest waiter's
        const std::string& lock = g.waits.at(child).lock;
        if (via_count[lock] > best) {
            best = via_count[lock];
            root.via = lock;
        }
    }
    root.blocked_directly = g.children_of(pid).size();
    for (int p : seen) {
        covered.insert(p);
        if (p == pid) continue;
        ++root.blocked_total;
        const auto& ws = g.waits.at(p).wait_start;
        if (ws && (!root.oldest_wait_start || *ws < *root.oldest_wait_start)) root.oldest_wait_start = ws;
    }
    return root;
}

}  // namespace

std::string default_lock_name(const LockEntry& lock) {
    if (lock.form == KeyForm::int_pair)
        return "pair " + std::to_string(lock.pair_first) + "," + std::to_string(lock.pair_second);
    if (lock.holder_name && lock.holder_name->verified) return lock.holder_name->name;
    return "key " + std::to_string(lock.key);
}

std::vector<int> blockers_of(const Snapshot& snapshot, int pid) {
    const auto waits = waits_of(snapshot, nullptr);
    const auto it = waits.find(pid);
    return it == waits.end() ? std::vector<int>{} : it->second.parents;
}

std::vector<RootBlocker> lock_tree(const Snapshot& snapshot, const EdgeNamer& namer) {
    const Graph g = graph_of(snapshot, &namer);
    std::vector<RootBlocker> roots;
    std::set<int> covered;
    for (const auto& [pid, kids] : g.children)
        if (!g.waits.contains(pid)) roots.push_back(root_of(g, pid, false, covered));
    // What no root reaches blocks in a cycle, or waits behind one: walk up from it (first blocker
    // each time) until a session repeats, and root the cycle at its lowest pid.
    for (const auto& [pid, kids] : g.children) {
        if (covered.contains(pid)) continue;
        std::vector<int> path;
        int at = pid;
        bool closed = false;
        for (;;) {
            path.push_back(at);
            const auto w = g.waits.find(at);
            if (w == g.waits.end() || w->second.parents.empty()) break;
            at = w->second.parents.front();
            if (std::find(path.begin(), path.end(), at) != path.end()) {
                closed = true;
                break;
            }
        }
        if (covered.contains(at)) continue;
        if (!closed) {
            // Waits, but on no session the snapshot shows (its blocker just left): the top of
            // what can be seen.
            roots.push_back(root_of(g, at, false, covered));
            continue;
        }
        const int lowest = *std::min_element(std::find(path.begin(), path.end(), at), path.end());
        roots.push_back(root_of(g, lowest, true, covered));
    }
    std::stable_sort(roots.begin(), roots.end(), [](const RootBlocker& a, const RootBlocker& b) {
        if (a.blocked_total != b.blocked_total) return a.blocked_total > b.blocked_total;
        if (a.oldest_wait_start.has_value() != b.oldest_wait_start.has_value()) return a.oldest_wait_start.has_value();
        if (a.oldest_wait_start && *a.oldest_wait_start != *b.oldest_wait_start)
            return *a.oldest_wait_start < *b.oldest_wait_start;
        return a.pid < b.pid;
    });
    return roots;
}

}  // namespace pglock::monitor
