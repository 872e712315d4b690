// Holders that are probably orphaned: the lock is held by a session nobody is using any more, or
// by a pooled server backend whose client has moved on. None of this is proof; each flag carries
// the evidence an operator needs to decide. Fed by successive monitor snapshots (some evidence,
// like one backend serving several applications, only shows over time), and by the claims join
// (pglock/claims.hpp: a confirmed leak). Qt-free; used by lockscope's locks view and by
// `pglock status`.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "pglock/claims.hpp"
#include "pglock/monitor.hpp"

namespace pglock::monitor {

enum class OrphanSign {
    idle_holder,     // idle, not in a transaction, for longer than the threshold, while others wait
    pooler_client,   // the session's client says it is a connection pooler
    pooled_backend,  // the same backend (pid + backend_start) seen with several application names
                     // (this library's "pglock:NAME" tokens left out: they come and go with its locks)
    unclaimed,       // a backend of an application that publishes this library's metrics holds a key
                     // the application does not claim (a confirmed leak of the claims join)
};
// "idle_holder", "pooler_client", "pooled_backend", "unclaimed"
std::string_view sign_name(OrphanSign sign) noexcept;
// The signs that say a pooler stands between the holder and its client (pooler_client,
// pooled_backend); the others say the lock may be forgotten.
constexpr bool pooler_sign(OrphanSign sign) noexcept {
    return sign == OrphanSign::pooler_client || sign == OrphanSign::pooled_backend;
}

struct OrphanEvidence {
    OrphanSign sign;
    std::string text;  // for people: "idle (not in a transaction) for 2m 5s while 1 session waits"
    // The one lock it is about (unclaimed: the bigint key the application does not claim); none:
    // the whole backend, every lock it holds.
    std::optional<std::int64_t> key{};
};

// Whether `evidence` speaks of `lock` (one of its holder's locks): the backend-wide signs speak
// of all of them, an `unclaimed` one of its key only, not of the locks the application claims.
bool about_lock(const OrphanEvidence& evidence, const LockEntry& lock) noexcept;

// Why `backend` looks like a pooler's server connection, from what pg_stat_activity shows of it:
// a pooler's name in application_name or client_hostname (PgBouncer, Pgpool-II, Odyssey, PgCat,
// Supavisor, RDS Proxy), or DISCARD ALL (PgBouncer's server_reset_query) as its last statement.
// Empty when nothing says so.
std::string pooler_hint(const Backend& backend);

// Adds to `flags` an `unclaimed` evidence for the holder of each confirmed leak in `found`
// (claims::Join::confirmed()); ghosts are left out: a ghost's pid holds nothing. `now` is on the
// join's clock (Disagreement::since), for "for 2m 5s". Front ends whose orphan watch and claims
// join run apart (lockscope: the poll thread and the GUI thread) merge with this.
void add_unclaimed(std::map<int, std::vector<OrphanEvidence>>& flags, const std::vector<claims::Disagreement>& found,
                   double now);

struct OrphanOptions {
    double idle_seconds = 30;  // idle longer than this while others wait
    // Application names remembered per backend: past this, the oldest are dropped (the flag needs
    // only two).
    std::size_t max_names_per_backend = 8;
};

class OrphanWatch {
public:
    explicit OrphanWatch(OrphanOptions options = {}) : options_(options) {}

    // Takes the next snapshot; what it remembers of backends no longer in it is forgotten, so
    // memory is bounded by the server's backends.
    void update(const Snapshot& snapshot);
    // After update(): the claims join's confirmed leaks as `unclaimed` evidence (add_unclaimed).
    void add_unclaimed(const std::vector<claims::Disagreement>& found, double now) {
        monitor::add_unclaimed(flags_, found, now);
    }
    // Evidence per holder pid, as of the last update (holders with none are absent).
    const std::map<int, std::vector<OrphanEvidence>>& flags() const noexcept { return flags_; }
    const std::vector<OrphanEvidence>* evidence(int pid) const;
    // Whether the backend looks pooled (either pooler sign), by what was seen so far.
    bool pooled(int pid) const;
    // Every application name this backend was seen with, oldest first.
    std::vector<std::string> names_seen(int pid) const;

private:
    OrphanOptions options_;
    struct Seen {
        std::optional<double> backend_start;
        std::vector<std::string> names;  // distinct, oldest first
    };
    std::map<int, Seen> seen_;
    std::map<int, std::vector<OrphanEvidence>> flags_;
};

}  // namespace pglock::monitor
