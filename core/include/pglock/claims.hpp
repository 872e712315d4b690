// What applications believe they hold against what the server holds: the join of the
// applications' lock_held_info series (scraped from their /metrics endpoints) with the monitor's
// snapshots. Qt-free; shared by lockscope and `pglock status --metrics-url`.
//
// - ghost: the endpoint claims a lock on a backend that does not hold it (the lock was lost and
//   the process has not noticed, e.g. its lost-lock watcher could not look yet).
// - leak: a backend of that endpoint holds a key the endpoint does not claim (a level taken
//   behind a guard's back, a session given back to a pool still holding a lock).
//
// Which backends are the endpoint's: every pid it claims now, and every pid it claimed before
// whose backend the snapshots still show with the same backend_start (a session that went back
// to the pool holding a lock keeps its pid, and is shown because it holds one). A pid is
// forgotten once no snapshot shows it (it holds no advisory lock any more) or shows another
// backend_start (the pid was reused). Nothing else can tell the endpoint's sessions apart:
// application_name is the holder's to set, and client addresses are shared behind poolers.
//
// Polls and scrapes are not taken at the same instant, so a lock taken or released between the
// two looks like a disagreement for a moment. One is reported only once two polls and one scrape
// have shown it (the event that first showed it counts as its kind; in any order), and it is
// dropped by the first poll or scrape that no longer shows it. So a scrape taken before a release
// cannot confirm a ghost by itself: a later scrape must still claim the lock.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "pglock/exposition.hpp"
#include "pglock/monitor.hpp"

namespace pglock::claims {

enum class Kind { ghost, leak };
std::string_view kind_string(Kind kind) noexcept;  // "ghost", "leak"

struct Disagreement {
    Kind kind = Kind::ghost;
    std::string endpoint;
    int pid = 0;
    std::int64_t key = 0;
    std::string name;     // the claim's name (ghost); for a leak a name the endpoint or the holder gives the key, else ""
    double since = 0;     // `now` of the poll or scrape that first showed it
    int polls = 0;        // polls and scrapes that showed it since
    int scrapes = 0;
    bool confirmed() const noexcept { return polls >= 2 && scrapes >= 1; }
};

class Join {
public:
    // A poll's snapshot, at time `now` (any clock, the same for every call: `since` is on it).
    void poll(const monitor::Snapshot& snapshot, double now);
    // A successful scrape of `endpoint` (e.g. its URL): its lock_held_info claims.
    void scrape(const std::string& endpoint, std::vector<exposition::HeldClaim> claims, double now);
    // The endpoint's claims are unknown (scrape failed) or no longer wanted: its disagreements go.
    void forget(const std::string& endpoint);

    // Disagreements seen by two polls and one scrape, by endpoint, kind, key, pid.
    std::vector<Disagreement> confirmed() const;
    // Every disagreement the last events showed, confirmed or not.
    std::vector<Disagreement> candidates() const;

private:
    struct Endpoint {
        std::vector<exposition::HeldClaim> claims;
        std::map<int, double> known_backends;  // pid -> backend_start of a backend it claimed before
        std::map<std::tuple<Kind, std::int64_t, int>, Disagreement> open;
    };
    enum class Event { poll, scrape };
    void update(const std::string& name, Endpoint& endpoint, Event event, double now);

    bool have_snapshot_ = false;
    std::map<std::pair<std::int64_t, int>, std::string> held_;  // (key, pid) granted bigint locks -> holder's name ("" unknown)
    std::map<int, std::optional<double>> backend_start_;        // every pid of the snapshot
    std::map<std::string, Endpoint> endpoints_;
};

}  // namespace pglock::claims
