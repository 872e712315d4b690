#include "pglock/orphan.hpp"

#include <algorithm>
#include <cctype>

#include "pglock/duration_text.hpp"

namespace pglock::monitor {

namespace {

std::string lower(std::string_view s) {
    std::string out(s);
    for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return out;
}

// Names poolers go by, as they show in application_name (PgBouncer's application_name_add_host,
// Pgpool-II's and Odyssey's defaults, an operator's convention) or in a pooler host's name.
constexpr std::string_view kPoolerWords[] = {"pgbouncer", "pgpool", "odyssey", "pgcat", "supavisor", "rds-proxy", "rdsproxy"};

std::string pooler_word_in(std::string_view text) {
    const std::string l = lower(text);
    for (const std::string_view w : kPoolerWords)
        if (l.find(w) != std::string::npos) return std::string(w);
    return {};
}

// The application a session names, without this library's "pglock:NAME" tokens: a holder adds
// them while it holds a lock (pglock/holder_identity.hpp) and cuts its application's part to fit,
// which is still the same client, not another one on a pooled backend.
std::string base_application(std::string_view app) {
    std::string out;
    std::size_t i = 0;
    while (i < app.size()) {
        const std::size_t end = std::min(app.find(' ', i), app.size());
        const std::string_view token = app.substr(i, end - i);
        if (!token.empty() && !token.starts_with("pglock:")) out += (out.empty() ? "" : " ") + std::string(token);
        i = end + 1;
    }
    return out;
}

bool same_client(const std::string& a, const std::string& b) { return a.starts_with(b) || b.starts_with(a); }

std::string waiters_text(std::size_t n) {
    return std::to_string(n) + (n == 1 ? " session waits" : " sessions wait");
}

}  // namespace

std::string_view sign_name(OrphanSign sign) noexcept {
    switch (sign) {
    case OrphanSign::idle_holder: return "idle_holder";
    case OrphanSign::pooler_client: return "pooler_client";
    case OrphanSign::pooled_backend: return "pooled_backend";
    case OrphanSign::unclaimed: return "unclaimed";
    }
    return "";
}

std::string pooler_hint(const Backend& b) {
    if (const std::string w = pooler_word_in(b.application_name); !w.empty())
        return "its application_name \"" + b.application_name + "\" names a connection pooler (" + w + ")";
    if (const std::string w = pooler_word_in(b.client_hostname); !w.empty())
        return "its client host \"" + b.client_hostname + "\" names a connection pooler (" + w + ")";
    std::string q = lower(b.query);
    while (!q.empty() && (q.back() == ';' || std::isspace(static_cast<unsigned char>(q.back())))) q.pop_back();
    if (b.state == "idle" && q == "discard all")
        return "its last statement was DISCARD ALL, the reset query PgBouncer runs when a client lets the connection go";
    return {};
}

void OrphanWatch::update(const Snapshot& snapshot) {
    flags_.clear();
    // Waiters per holder pid, over every lock it holds: a holder nobody waits for harms no one.
    std::map<int, std::set<int>> waiting_on;
    for (const LockEntry& lock : snapshot.locks)
        for (const Holder& h : lock.holders)
            for (const Waiter& w : lock.waiters) waiting_on[h.pid].insert(w.pid);

    std::map<int, Seen> next;
    for (const auto& [pid, b] : snapshot.backends) {
        Seen s;
        if (auto it = seen_.find(pid); it != seen_.end() && it->second.backend_start == b.backend_start) s = std::move(it->second);
        s.backend_start = b.backend_start;
        const std::string app = base_application(b.application_name);
        if (!app.empty() && std::none_of(s.names.begin(), s.names.end(), [&](const std::string& n) { return same_client(n, app); })) {
            s.names.push_back(app);
            if (s.names.size() > options_.max_names_per_backend) s.names.erase(s.names.begin());
        }
        next.emplace(pid, std::move(s));
    }
    seen_ = std::move(next);

    std::set<int> holders;
    for (const LockEntry& lock : snapshot.locks)
        for (const Holder& h : lock.holders) holders.insert(h.pid);
    for (const int pid : holders) {
        const auto b = snapshot.backends.find(pid);
        if (b == snapshot.backends.end()) continue;
        const Backend& backend = b->second;
        std::vector<OrphanEvidence> found;
        const auto waiters = waiting_on.find(pid);
        const std::size_t n_waiting = waiters == waiting_on.end() ? 0 : waiters->second.size();
        if (backend.state == "idle" && backend.state_change && n_waiting > 0) {
            const double idle = snapshot.server_now - *backend.state_change;
            if (idle > options_.idle_seconds)
                found.push_back({OrphanSign::idle_holder, "idle (not in a transaction) for " + duration_text(idle) +
                                                              " while " + waiters_text(n_waiting) + " on its locks"});
        }
        if (std::string hint = pooler_hint(backend); !hint.empty())
            found.push_back({OrphanSign::pooler_client, "a pooled connection: " + hint});
        if (const auto s = seen_.find(pid); s != seen_.end() && s->second.names.size() > 1) {
            std::string names;
            for (const auto& n : s->second.names) names += (names.empty() ? "\"" : ", \"") + n + "\"";
            found.push_back({OrphanSign::pooled_backend,
                             "one backend (same pid and start) served several applications: " + names +
                                 "; a pooler hands it to other clients while the lock stays"});
        }
        if (!found.empty()) flags_.emplace(pid, std::move(found));
    }
}

bool about_lock(const OrphanEvidence& evidence, const LockEntry& lock) noexcept {
    return !evidence.key || (lock.form == KeyForm::bigint && lock.key == *evidence.key);
}

void add_unclaimed(std::map<int, std::vector<OrphanEvidence>>& flags, const std::vector<claims::Disagreement>& found,
                   double now) {
    for (const claims::Disagreement& d : found) {
        if (d.kind != claims::Kind::leak || !d.confirmed()) continue;
        const std::string lock = std::to_string(d.key) + (d.name.empty() ? "" : " (" + d.name + ")");
        flags[d.pid].push_back({OrphanSign::unclaimed, "its application (" + d.endpoint + ") does not claim key " + lock +
                                                           ", which this backend holds (for " +
                                                           duration_text(now - d.since) + ")",
                                d.key});
    }
}

const std::vector<OrphanEvidence>* OrphanWatch::evidence(int pid) const {
    const auto it = flags_.find(pid);
    return it == flags_.end() ? nullptr : &it->second;
}

bool OrphanWatch::pooled(int pid) const {
    if (const auto s = seen_.find(pid); s != seen_.end() && s->second.names.size() > 1) return true;
    if (const auto* e = evidence(pid))
        for (const auto& x : *e)
            if (pooler_sign(x.sign)) return true;
    return false;
}

std::vector<std::string> OrphanWatch::names_seen(int pid) const {
    const auto s = seen_.find(pid);
    return s == seen_.end() ? std::vector<std::string>{} : s->second.names;
}

}  // namespace pglock::monitor
