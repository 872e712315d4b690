#include "status_render.hpp"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <optional>
#include <string_view>

#include "pglock/duration_text.hpp"
#include "pglock_cli/duration.hpp"
#include "pglock_cli/text.hpp"

namespace pglock::cli {

namespace {

using monitor::KeyForm;
using monitor::LockEntry;
using monitor::Snapshot;

std::string number(double v, int decimals = 3) {
    if (!std::isfinite(v)) return "null";
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
    return buf;
}

// The catalog's name for a lock; never for an int4 pair, whose tag is not a name's key.
const std::string* name_of(const LockEntry& lock, const StatusContext& context) {
    if (lock.form != KeyForm::bigint || !context.catalog) return nullptr;
    return context.catalog->find(lock.key);
}

// A lock some library derives from this database (a migration lock, pg-boss's), when the catalog
// does not name the key: computed, so as certain as a catalog name.
const monitor::ContextLock* context_lock_of(const LockEntry& lock, const StatusContext& context) {
    if (lock.form != KeyForm::bigint || !context.context_locks || name_of(lock, context)) return nullptr;
    return context.context_locks->find(lock.key);
}

// The name a holder's application_name gives a key neither the catalog nor the context names:
// verified ones only (a cut name is a prefix, reported apart).
const std::string* holder_name_of(const LockEntry& lock, const StatusContext& context) {
    if (name_of(lock, context) || context_lock_of(lock, context) || !lock.holder_name || !lock.holder_name->verified)
        return nullptr;
    return &lock.holder_name->name;
}
const std::string* holder_prefix_of(const LockEntry& lock, const StatusContext& context) {
    if (name_of(lock, context) || context_lock_of(lock, context) || !lock.holder_name || lock.holder_name->verified)
        return nullptr;
    return &lock.holder_name->name;
}

// The holder's orphan evidence that speaks of this lock (monitor::about_lock).
std::vector<const monitor::OrphanEvidence*> orphan_evidence(const LockEntry& lock, int pid, const StatusContext& context) {
    std::vector<const monitor::OrphanEvidence*> out;
    if (const auto* all = context.orphans ? context.orphans->evidence(pid) : nullptr)
        for (const auto& e : *all)
            if (monitor::about_lock(e, lock)) out.push_back(&e);
    return out;
}

// Seconds since the tracker first saw the hold; nullopt when this snapshot is the first to show
// it (or there is no tracker): how long it was held before is unknown.
std::optional<double> held_for(const LockEntry& lock, int pid, const Snapshot& snapshot, const StatusContext& context) {
    if (!context.tracker) return std::nullopt;
    const auto since = context.tracker->held_since(monitor::id_of(lock), pid);
    if (!since || *since >= snapshot.server_now) return std::nullopt;
    return snapshot.server_now - *since;
}

std::optional<double> waiting_for(const monitor::Waiter& w, const Snapshot& snapshot) {
    if (!w.wait_start) return std::nullopt;
    return std::max(0.0, snapshot.server_now - *w.wait_start);
}

const char* mode_of(bool shared) { return shared ? "shared" : "exclusive"; }

const monitor::Backend* backend_of(const Snapshot& snapshot, int pid) {
    const auto it = snapshot.backends.find(pid);
    return it == snapshot.backends.end() ? nullptr : &it->second;
}

// ---- text ------------------------------------------------------------------------------------

// A value in a key=value line (pglock_cli/text.hpp: JSON-quoted unless plain printable text).
std::string field(std::string_view value) { return kv_value(value); }

std::string seconds_text(std::optional<double> s) {
    if (!s) return "-";
    return duration_text(std::chrono::nanoseconds(static_cast<std::int64_t>(*s * 1e9)));
}

std::string utc_time(double epoch) {
    const auto secs = static_cast<std::time_t>(std::floor(epoch));
    std::tm tm{};
    gmtime_r(&secs, &tm);
    char buf[64];
    std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S", &tm);
    return std::string(buf) + "Z";
}

std::string plural(std::size_t n, const char* one, const char* many) {
    return std::to_string(n) + " " + (n == 1 ? one : many);
}

// ---- json ------------------------------------------------------------------------------------

std::string json_string_or_null(std::string_view s) { return s.empty() ? "null" : json_quote(s); }

std::string json_opt(std::optional<double> v) { return v ? number(*v) : "null"; }

// ---- the lock tree ---------------------------------------------------------------------------

// An advisory lock on a tree's edge: its name as the lock lines give it (catalog, then context),
// else the holder's verified name or its key.
monitor::EdgeNamer namer_for(const StatusContext& context) {
    return [&context](const LockEntry& lock) {
        if (const std::string* name = name_of(lock, context)) return *name;
        if (const monitor::ContextLock* derived = context_lock_of(lock, context)) return derived->label;
        return monitor::default_lock_name(lock);
    };
}

std::optional<double> since(std::optional<double> start, const Snapshot& snapshot) {
    if (!start) return std::nullopt;
    return std::max(0.0, snapshot.server_now - *start);
}

// "PID 4711 (billing-worker) blocks 23 sessions via billing:invoice-run, 9m": the line that names
// the worst root, or "" when no session blocks another.
std::string worst_root_line(const Snapshot& snapshot, const std::vector<monitor::RootBlocker>& roots) {
    if (roots.empty()) return {};
    const monitor::RootBlocker& r = roots.front();
    const monitor::Backend* b = backend_of(snapshot, r.pid);
    std::string out = "worst root: PID " + std::to_string(r.pid);
    // Prose, not key=value: the server's text (an application_name, a table's name in a lock's
    // description) is shown by the display rule, unquoted.
    if (b && !b->application_name.empty()) out += " (" + display_text(b->application_name) + ")";
    out += " blocks " + plural(r.blocked_total, "session", "sessions");
    if (!r.via.empty()) out += " via " + display_text(r.via);
    if (const auto oldest = since(r.oldest_wait_start, snapshot)) out += ", " + seconds_text(oldest);
    if (r.cycle) out += " (a cycle: a deadlock in progress)";
    return out + "\n";
}

void tree_text(const monitor::TreeNode& n, const Snapshot& snapshot, int depth, std::string& out) {
    const monitor::Backend* b = backend_of(snapshot, n.pid);
    out += std::string(static_cast<std::size_t>(depth) * 2, ' ') + "pid=" + std::to_string(n.pid);
    out += " app=" + field(b ? b->application_name : std::string());
    out += " waiting=" + seconds_text(since(n.wait_start, snapshot));
    out += " for=" + field(n.lock) + " mode=" + field(n.mode);
    if (n.queued) out += " queued";
    if (n.repeated) out += " (shown above)";
    out += "\n";
    for (const auto& c : n.children) tree_text(c, snapshot, depth + 1, out);
}

std::string tree_json(const monitor::TreeNode& n, const Snapshot& snapshot) {
    const monitor::Backend* b = backend_of(snapshot, n.pid);
    std::string out = "{\"pid\":" + std::to_string(n.pid);
    out += ",\"application_name\":" + json_quote(b ? b->application_name : std::string());
    out += ",\"state\":" + json_string_or_null(b ? b->state : std::string());
    out += ",\"lock\":" + json_quote(n.lock) + ",\"locktype\":" + json_quote(n.locktype) +
           ",\"mode\":" + json_quote(n.mode);
    out += ",\"key\":" + (n.advisory && n.advisory->form == KeyForm::bigint ? std::to_string(key_of(n.advisory->tag))
                                                                           : std::string("null"));
    out += ",\"queued\":" + std::string(n.queued ? "true" : "false");
    out += ",\"repeated\":" + std::string(n.repeated ? "true" : "false");
    out += ",\"wait_start\":" + json_opt(n.wait_start) + ",\"waiting_s\":" + json_opt(since(n.wait_start, snapshot));
    out += ",\"blocks\":[";
    for (std::size_t i = 0; i < n.children.size(); ++i) out += (i ? "," : "") + tree_json(n.children[i], snapshot);
    return out + "]}";
}

std::string roots_json(const Snapshot& snapshot, const std::vector<monitor::RootBlocker>& roots) {
    std::string out = "[";
    for (std::size_t i = 0; i < roots.size(); ++i) {
        const monitor::RootBlocker& r = roots[i];
        const monitor::Backend* b = backend_of(snapshot, r.pid);
        if (i) out += ',';
        out += "{\"pid\":" + std::to_string(r.pid) + ",\"cycle\":" + (r.cycle ? "true" : "false");
        out += ",\"application_name\":" + json_quote(b ? b->application_name : std::string());
        out += ",\"state\":" + json_string_or_null(b ? b->state : std::string());
        out += ",\"blocked_directly\":" + std::to_string(r.blocked_directly);
        out += ",\"blocked_total\":" + std::to_string(r.blocked_total);
        out += ",\"oldest_wait_start\":" + json_opt(r.oldest_wait_start);
        out += ",\"oldest_waiting_s\":" + json_opt(since(r.oldest_wait_start, snapshot));
        out += ",\"via\":" + json_string_or_null(r.via) + ",\"blocks\":[";
        for (std::size_t j = 0; j < r.children.size(); ++j) out += (j ? "," : "") + tree_json(r.children[j], snapshot);
        out += "]}";
    }
    return out + "]";
}

}  // namespace

std::string format_server_version(int version) {
    if (version <= 0) return "unknown";
    if (version >= 100000) return std::to_string(version / 10000) + "." + std::to_string(version % 10000);
    return std::to_string(version / 10000) + "." + std::to_string(version / 100 % 100) + "." +
           std::to_string(version % 100);
}

namespace {

std::string header_text(const Snapshot& snapshot, const std::vector<monitor::RootBlocker>& roots) {
    std::size_t holders = 0, waiters = 0;
    for (const auto& lock : snapshot.locks) {
        holders += lock.holders.size();
        waiters += lock.waiters.size();
    }
    std::string out = "PostgreSQL " + format_server_version(snapshot.server_version) +
                      (snapshot.in_recovery ? " standby" : " primary") + " | " +
                      plural(snapshot.locks.size(), "advisory lock", "advisory locks") + ", " +
                      plural(holders, "holder", "holders") + ", " + plural(waiters, "waiter", "waiters") +
                      " | poll " + number(snapshot.latency_ms, 1) + " ms | " + utc_time(snapshot.server_now) + "\n";
    if (snapshot.in_recovery)
        out += "WARNING: the server is a standby in recovery: advisory locks taken there are local to it and "
               "protect nothing\n";
    if (snapshot.locks.empty()) out += "(no advisory locks held or awaited in this database)\n";
    out += worst_root_line(snapshot, roots);
    return out;
}

}  // namespace

void render_tree_text(std::string& out, const Snapshot& snapshot, const StatusContext& context) {
    const auto roots = monitor::lock_tree(snapshot, namer_for(context));
    out += header_text(snapshot, roots);
    if (roots.empty()) out += "(no session blocks another)\n";
    for (const auto& r : roots) {
        const monitor::Backend* b = backend_of(snapshot, r.pid);
        out += "root pid=" + std::to_string(r.pid) + " app=" + field(b ? b->application_name : std::string());
        out += " state=" + field(b ? b->state : std::string());
        out += " blocks=" + std::to_string(r.blocked_total) + " directly=" + std::to_string(r.blocked_directly);
        out += " oldest=" + seconds_text(since(r.oldest_wait_start, snapshot));
        out += " via=" + (r.via.empty() ? std::string("-") : field(r.via));
        if (r.cycle) out += " cycle";
        out += "\n";
        for (const auto& c : r.children) tree_text(c, snapshot, 1, out);
    }
}

void render_status_text(std::string& out, const Snapshot& snapshot, const StatusContext& context) {
    out += header_text(snapshot, monitor::lock_tree(snapshot, namer_for(context)));
    for (const auto& lock : snapshot.locks) {
        const std::string* name = name_of(lock, context);
        if (lock.form == KeyForm::bigint) {
            // Not in the catalog: the holder's application_name may name it (from=holder, checked
            // against the key), or give the start of a name cut to fit (holder_prefix=..., not
            // checked: the name stays unknown).
            const monitor::ContextLock* derived = context_lock_of(lock, context);
            const std::string* from_holder = holder_name_of(lock, context);
            const std::string* prefix = holder_prefix_of(lock, context);
            out += "key=" + std::to_string(lock.key) + " name=" +
                   (name              ? field(*name)
                    : derived         ? field(derived->label) + " from=context scheme=" + derived->scheme
                    : from_holder     ? field(*from_holder) + " from=holder"
                                      : std::string("unknown"));
            if (prefix) out += " holder_prefix=" + field(*prefix + "\u2026");
            out += " form=bigint classid=" + std::to_string(lock.tag.classid) + " objid=" + std::to_string(lock.tag.objid);
        } else {
            out += "pair=" + std::to_string(lock.pair_first) + "," + std::to_string(lock.pair_second) +
                   " name=unknown form=int-pair classid=" + std::to_string(lock.tag.classid) +
                   " objid=" + std::to_string(lock.tag.objid);
        }
        out += "\n";
        for (const auto& h : lock.holders) {
            const monitor::Backend* b = backend_of(snapshot, h.pid);
            out += "  holder pid=" + std::to_string(h.pid) + " mode=" + mode_of(h.shared);
            out += " state=" + field(b ? b->state : std::string());
            out += " app=" + field(b ? b->application_name : std::string());
            out += " user=" + field(b ? b->usename : std::string());
            out += " client=" + (b && !b->client_addr.empty() ? field(b->client_addr) : std::string("local"));
            if (b && !b->client_hostname.empty()) out += " host=" + field(b->client_hostname);
            const auto evidence = orphan_evidence(lock, h.pid, context);
            if (!evidence.empty()) {
                out += " orphan?=";
                for (std::size_t i = 0; i < evidence.size(); ++i) out += (i ? "," : "") + std::string(monitor::sign_name(evidence[i]->sign));
            }
            out += " held=" + seconds_text(held_for(lock, h.pid, snapshot, context)) + "\n";
            for (const auto* e : evidence) out += "    evidence: " + display_text(e->text) + "\n";
        }
        for (const auto& w : lock.waiters) {
            const monitor::Backend* b = backend_of(snapshot, w.pid);
            out += "  waiter pid=" + std::to_string(w.pid) + " mode=" + mode_of(w.shared);
            out += " app=" + field(b ? b->application_name : std::string());
            out += " waiting=" + seconds_text(waiting_for(w, snapshot));
            out += " pins_xmin=" + seconds_text(monitor::xmin_pinned_seconds(w, snapshot.server_now));
            out += " blocked_by=";
            if (w.blocked_by.empty()) out += "-";
            for (std::size_t i = 0; i < w.blocked_by.size(); ++i)
                out += (i ? "," : "") + std::to_string(w.blocked_by[i]);
            out += "\n";
        }
    }
    if (context.claims) out += render_claims_text(*context.claims);
}

void render_status_json(std::string& out, const Snapshot& snapshot, const StatusContext& context) {
    out += "{\"server_version\":" + std::to_string(snapshot.server_version) +
           ",\"in_recovery\":" + (snapshot.in_recovery ? "true" : "false") +
           ",\"host\":" + json_quote(snapshot.host) + ",\"port\":" + std::to_string(snapshot.port) +
           ",\"server_now\":" + number(snapshot.server_now) +
           ",\"latency_ms\":" + number(snapshot.latency_ms) + ",\"locks\":[";
    bool first_lock = true;
    for (const auto& lock : snapshot.locks) {
        if (!first_lock) out += ',';
        first_lock = false;
        const bool bigint = lock.form == KeyForm::bigint;
        out += "{\"form\":";
        out += bigint ? "\"bigint\"" : "\"int_pair\"";
        out += ",\"key\":" + (bigint ? std::to_string(lock.key) : std::string("null"));
        out += ",\"classid\":" + std::to_string(lock.tag.classid) + ",\"objid\":" + std::to_string(lock.tag.objid);
        if (!bigint) out += ",\"pair\":[" + std::to_string(lock.pair_first) + "," + std::to_string(lock.pair_second) + "]";
        const std::string* catalog_name = name_of(lock, context);
        const monitor::ContextLock* derived = context_lock_of(lock, context);
        const std::string* from_holder = holder_name_of(lock, context);
        const std::string* name = catalog_name ? catalog_name : derived ? &derived->label : from_holder;
        out += ",\"name\":" + (name ? json_quote(*name) : std::string("null"));
        if (name && !is_valid_utf8(*name)) out += ",\"name_hex\":\"" + hex_bytes(*name) + "\"";
        out += ",\"name_source\":";
        out += catalog_name ? "\"catalog\"" : derived ? "\"context\"" : from_holder ? "\"holder\"" : "null";
        if (derived) out += ",\"name_scheme\":" + json_quote(derived->scheme);
        if (const std::string* prefix = holder_prefix_of(lock, context)) out += ",\"holder_name_prefix\":" + json_quote(*prefix);
        out += ",\"holders\":[";
        for (std::size_t i = 0; i < lock.holders.size(); ++i) {
            const auto& h = lock.holders[i];
            const monitor::Backend* b = backend_of(snapshot, h.pid);
            if (i) out += ',';
            out += "{\"pid\":" + std::to_string(h.pid) + ",\"mode\":\"" + mode_of(h.shared) + "\"";
            out += ",\"state\":" + json_string_or_null(b ? b->state : std::string());
            out += ",\"application_name\":" + json_quote(b ? b->application_name : std::string());
            out += ",\"usename\":" + json_string_or_null(b ? b->usename : std::string());
            out += ",\"client_addr\":" + json_string_or_null(b ? b->client_addr : std::string());
            out += ",\"client_hostname\":" + json_string_or_null(b ? b->client_hostname : std::string());
            out += ",\"held_for_s\":" + json_opt(held_for(lock, h.pid, snapshot, context));
            out += ",\"orphan_evidence\":[";
            const auto evidence = orphan_evidence(lock, h.pid, context);
            for (std::size_t j = 0; j < evidence.size(); ++j)
                out += std::string(j ? "," : "") + "{\"sign\":\"" + std::string(monitor::sign_name(evidence[j]->sign)) +
                       "\",\"evidence\":" + json_quote(evidence[j]->text) + "}";
            out += "]}";
        }
        out += "]";
        if (context.claims && bigint) out += ",\"claims\":" + render_lock_claims_json(*context.claims, lock.key);
        out += ",\"waiters\":[";
        for (std::size_t i = 0; i < lock.waiters.size(); ++i) {
            const auto& w = lock.waiters[i];
            if (i) out += ',';
            out += "{\"pid\":" + std::to_string(w.pid) + ",\"mode\":\"" + mode_of(w.shared) + "\"";
            out += ",\"wait_start\":" + json_opt(w.wait_start);
            out += ",\"waiting_s\":" + json_opt(waiting_for(w, snapshot));
            out += ",\"xmin_age\":" + (w.xmin_age ? std::to_string(*w.xmin_age) : std::string("null"));
            out += ",\"pins_xmin_s\":" + json_opt(monitor::xmin_pinned_seconds(w, snapshot.server_now));
            out += ",\"blocked_by\":[";
            for (std::size_t j = 0; j < w.blocked_by.size(); ++j) out += (j ? "," : "") + std::to_string(w.blocked_by[j]);
            out += "]}";
        }
        out += "]}";
    }
    out += "],\"roots\":" + roots_json(snapshot, monitor::lock_tree(snapshot, namer_for(context)));
    if (context.claims) out += "," + render_claims_json(*context.claims);
    out += "}";
}

}  // namespace pglock::cli
