#include "pglock/claims.hpp"

#include <set>
#include <tuple>

namespace pglock::claims {

std::string_view kind_string(Kind kind) noexcept { return kind == Kind::ghost ? "ghost" : "leak"; }

void Join::poll(const monitor::Snapshot& snapshot, double now) {
    have_snapshot_ = true;
    held_.clear();
    backend_start_.clear();
    for (const auto& lock : snapshot.locks) {
        if (lock.form != monitor::KeyForm::bigint) continue;  // claims are bigint keys only
        const std::string name = lock.holder_name && lock.holder_name->verified ? lock.holder_name->name : std::string();
        for (const auto& holder : lock.holders) held_[{lock.key, holder.pid}] = name;
    }
    for (const auto& [pid, backend] : snapshot.backends) backend_start_[pid] = backend.backend_start;
    for (auto& [name, endpoint] : endpoints_) update(name, endpoint, Event::poll, now);
}

void Join::scrape(const std::string& endpoint, std::vector<exposition::HeldClaim> claims, double now) {
    auto& entry = endpoints_[endpoint];
    entry.claims = std::move(claims);
    if (have_snapshot_) update(endpoint, entry, Event::scrape, now);
}

void Join::forget(const std::string& endpoint) { endpoints_.erase(endpoint); }

void Join::update(const std::string& name, Endpoint& endpoint, Event event, double now) {
    // The endpoint's backends: what it claims now, and what it claimed before while the same
    // backend still shows in the snapshot.
    std::erase_if(endpoint.known_backends, [&](const auto& known) {
        const auto it = backend_start_.find(known.first);
        return it == backend_start_.end() || it->second != known.second;
    });
    std::set<int> backends;
    std::set<std::pair<std::int64_t, int>> claimed;
    std::map<std::int64_t, std::string> names;
    for (const auto& claim : endpoint.claims) {
        backends.insert(claim.pid);
        claimed.insert({claim.key, claim.pid});
        names.emplace(claim.key, claim.name);
        // Only a backend the snapshot shows is remembered: a claimed pid that holds nothing is a
        // ghost, and its number may come back as another backend.
        const auto it = backend_start_.find(claim.pid);
        if (it != backend_start_.end() && it->second) endpoint.known_backends[claim.pid] = *it->second;
    }
    for (const auto& known : endpoint.known_backends) backends.insert(known.first);

    std::map<std::tuple<Kind, std::int64_t, int>, Disagreement> now_open;
    auto add = [&](Kind kind, std::int64_t key, int pid, std::string lock_name) {
        const auto id = std::make_tuple(kind, key, pid);
        Disagreement d;
        if (const auto it = endpoint.open.find(id); it != endpoint.open.end()) {
            d = it->second;
        } else {
            d = Disagreement{kind, name, pid, key, std::move(lock_name), now, 0, 0};
        }
        (event == Event::poll ? d.polls : d.scrapes) += 1;
        now_open.emplace(id, std::move(d));
    };
    for (const auto& claim : endpoint.claims) {
        if (!held_.contains({claim.key, claim.pid})) add(Kind::ghost, claim.key, claim.pid, claim.name);
    }
    for (const auto& [key_pid, holder_name] : held_) {
        if (!backends.contains(key_pid.second) || claimed.contains(key_pid)) continue;
        const auto named = names.find(key_pid.first);
        add(Kind::leak, key_pid.first, key_pid.second, named != names.end() ? named->second : holder_name);
    }
    endpoint.open = std::move(now_open);
}

std::vector<Disagreement> Join::candidates() const {
    std::vector<Disagreement> out;
    for (const auto& [name, endpoint] : endpoints_) {
        for (const auto& [id, d] : endpoint.open) out.push_back(d);
    }
    return out;
}

std::vector<Disagreement> Join::confirmed() const {
    std::vector<Disagreement> out = candidates();
    std::erase_if(out, [](const Disagreement& d) { return !d.confirmed(); });
    return out;
}

}  // namespace pglock::claims
