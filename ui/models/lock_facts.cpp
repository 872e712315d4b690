#include "models/lock_facts.hpp"

#include <algorithm>
#include <iterator>

namespace lockscope::facts {

const Backend* backendOf(const Snapshot& snap, int pid) {
    const auto it = snap.backends.find(pid);
    return it == snap.backends.end() ? nullptr : &it->second;
}


// How bad a holder's state is for the lock: a session sitting idle inside a transaction keeps its
// locks (and the xmin horizon) for nothing, an idle session holding a session lock may have leaked
// it, an active one is working. Unknown states (not visible, "disabled") rank lowest.
int stateRank(std::string_view state) {
    if (state == "idle in transaction (aborted)") return 4;
    if (state == "idle in transaction") return 3;
    if (state == "idle") return 2;
    if (state == "active" || state == "fastpath function call") return 1;
    return 0;
}

std::string_view clientOf(const Backend* b) {
    if (!b || b->state.empty()) return b && !b->client_addr.empty() ? std::string_view(b->client_addr) : std::string_view();
    return b->client_addr.empty() ? std::string_view("local") : std::string_view(b->client_addr);
}

std::string_view fieldOf(const Backend* b, Field f) {
    if (!b) return {};
    switch (f) {
    case Field::application: return b->application_name;
    case Field::user: return b->usename;
    case Field::client: return clientOf(b);
    case Field::host: return b->client_hostname;
    }
    return {};
}

void distinctValues(const LockEntry& e, const Snapshot& s, Field f, std::vector<std::string_view>& out) {
    out.clear();
    for (const auto& h : e.holders) {
        const std::string_view v = fieldOf(backendOf(s, h.pid), f);
        if (!v.empty() && std::find(out.begin(), out.end(), v) == out.end()) out.push_back(v);
    }
}

bool sameDistinct(const LockEntry& a, const Snapshot& sa, const LockEntry& b, const Snapshot& sb, Field f) {
    std::vector<std::string_view> va, vb;
    distinctValues(a, sa, f, va);
    distinctValues(b, sb, f, vb);
    return va == vb;
}

std::string_view worstState(const LockEntry& e, const Snapshot& s) {
    std::string_view worst;
    int rank = -1;
    for (const auto& h : e.holders) {
        const Backend* b = backendOf(s, h.pid);
        const std::string_view state = b ? std::string_view(b->state) : std::string_view();
        if (stateRank(state) > rank) {
            rank = stateRank(state);
            worst = state;
        }
    }
    return worst;
}

LockMode modeOf(const LockEntry& e) {
    bool shared = false, exclusive = false;
    for (const auto& h : e.holders) (h.shared ? shared : exclusive) = true;
    if (shared && exclusive) return LockMode::mixed;
    if (shared) return LockMode::shared;
    return exclusive ? LockMode::exclusive : LockMode::none;
}

bool samePids(const LockEntry& a, const LockEntry& b) {
    return std::equal(a.holders.begin(), a.holders.end(), b.holders.begin(), b.holders.end(),
                      [](const auto& x, const auto& y) { return x.pid == y.pid; });
}

bool sameHolders(const LockEntry& a, const LockEntry& b) {
    return std::equal(a.holders.begin(), a.holders.end(), b.holders.begin(), b.holders.end(),
                      [](const auto& x, const auto& y) { return x.pid == y.pid && x.shared == y.shared; });
}

bool sameHolderField(const LockEntry& a, const Snapshot& sa, const LockEntry& b, const Snapshot& sb,
                     std::string Backend::*member) {
    for (std::size_t i = 0; i < a.holders.size(); ++i) {
        const Backend* x = backendOf(sa, a.holders[i].pid);
        const Backend* y = backendOf(sb, b.holders[i].pid);
        if (!x || !y) {
            if (x != y) return false;
            continue;
        }
        if (x->*member != y->*member) return false;
    }
    return true;
}

bool anyIdleInTx(const LockEntry& e, const Snapshot& s) {
    return std::any_of(e.holders.begin(), e.holders.end(), [&](const auto& h) {
        const Backend* b = backendOf(s, h.pid);
        return b && isIdleInTx(b->state);
    });
}

double idleSecondsOf(const LockEntry& e, const Snapshot& s) {
    double idle = -1;
    for (const auto& h : e.holders) {
        const Backend* b = backendOf(s, h.pid);
        if (b && isIdleInTx(b->state) && b->state_change) idle = std::max(idle, std::max(0.0, s.server_now - *b->state_change));
    }
    return idle;
}

bool sameBackendForDisplay(const Backend& a, const Backend& b) {
    return a.state == b.state && a.application_name == b.application_name &&
           a.usename == b.usename && a.client_addr == b.client_addr && a.client_hostname == b.client_hostname &&
           a.query == b.query;
}

std::vector<int> changedPids(const std::map<int, Backend>& before, const std::map<int, Backend>& after) {
    std::vector<int> out;
    auto a = before.begin();
    auto b = after.begin();
    while (a != before.end() || b != after.end()) {
        if (b == after.end() || (a != before.end() && a->first < b->first)) {
            out.push_back((a++)->first);
        } else if (a == before.end() || b->first < a->first) {
            out.push_back((b++)->first);
        } else {
            if (!sameBackendForDisplay(a->second, b->second)) out.push_back(a->first);
            ++a;
            ++b;
        }
    }
    return out;
}

}  // namespace lockscope::facts
