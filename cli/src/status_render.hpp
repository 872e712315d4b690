// `pglock status`: a monitor snapshot as text for a terminal, or as one JSON object per poll.
#pragma once

#include <string>

#include "catalog_file.hpp"
#include "pglock/context_locks.hpp"
#include "pglock/lock_tree.hpp"
#include "pglock/monitor.hpp"
#include "status_claims.hpp"
#include "pglock/orphan.hpp"

namespace pglock::cli {

// What a rendering knows besides the snapshot. Both may be null: no catalog means every name is
// "unknown"; no tracker means no held-for.
struct StatusContext {
    const Catalog* catalog = nullptr;
    // Updated with the snapshot being rendered: held-for counts from the first snapshot that
    // showed the hold, and is unknown (null / "-") in that first snapshot itself.
    const monitor::HoldTracker* tracker = nullptr;
    // --metrics-url: the applications' claims joined with the polls (ghosts, leaks); null: none.
    const ClaimsReport* claims = nullptr;
    // Locks other libraries derive from this database and its schemas (named after the catalog,
    // before a holder's name); null: none known.
    const monitor::ContextLocks* context_locks = nullptr;
    // Updated with the snapshot being rendered: each holder's orphan evidence; null: none shown.
    const monitor::OrphanWatch* orphans = nullptr;
};

// "15.8" for 150008, "9.6.24" for 90624.
std::string format_server_version(int version);

// Each renderer appends to `out`: `pglock status --watch` keeps one buffer for all its polls, so
// that a poll of 10,000 locks (3 MB of JSON) does not grow a new string from nothing each time.

// Several lines, each ending in '\n': a header (server version, standby warning, counts, poll
// latency, server time) and per lock a line with key, name and form, then one line per holder
// and per waiter.
void render_status_text(std::string& out, const monitor::Snapshot& snapshot, const StatusContext& context);

// The header and the worst root's line as render_status_text() writes them, then each root
// blocker's tree (`pglock status --tree`), highest impact first.
void render_tree_text(std::string& out, const monitor::Snapshot& snapshot, const StatusContext& context);

// One JSON object on one line (no trailing newline); the fields are listed in docs/cli.md.
void render_status_json(std::string& out, const monitor::Snapshot& snapshot, const StatusContext& context);

}  // namespace pglock::cli
