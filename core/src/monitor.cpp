#include "pglock/monitor.hpp"

#include <libpq-fe.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <utility>

#include "pglock/error.hpp"
#include "pglock/holder_identity.hpp"

namespace pglock::monitor {
namespace {

// Column positions of poll_query().
enum Col {
    c_now, c_in_recovery, c_objsubid, c_mode, c_granted, c_pid, c_keys, c_blocked_by, c_waitstart,
    c_state, c_app, c_user, c_addr, c_host, c_query, c_wait_type, c_wait, c_backend_start, c_xact_start,
    c_state_change, c_xmin_age,
};

std::optional<double> opt_double(const Result& r, int row, int col) {
    if (r.is_null(row, col)) return std::nullopt;
    const std::string_view text = r.get(row, col);
    return std::strtod(std::string(text).c_str(), nullptr);
}

std::vector<int> parse_int_array(std::string_view text) {  // "{12,34}"
    std::vector<int> out;
    const char* p = text.data();
    const char* end = p + text.size();
    while (p < end) {
        if (*p >= '0' && *p <= '9') {
            int v = 0;
            auto [next, ec] = std::from_chars(p, end, v);
            if (ec == std::errc{}) out.push_back(v);
            p = next;
        } else {
            ++p;
        }
    }
    return out;
}

// "{-12,34}": the int8 array of (classid << 32 | objid) values the poll aggregates per session.
std::vector<std::int64_t> parse_int64_array(std::string_view text) {
    std::vector<std::int64_t> out;
    const char* p = text.data();
    const char* end = p + text.size();
    while (p < end) {
        if ((*p >= '0' && *p <= '9') || *p == '-') {
            std::int64_t v = 0;
            auto [next, ec] = std::from_chars(p, end, v);
            if (ec == std::errc{}) out.push_back(v);
            p = next == p ? p + 1 : next;
        } else {
            ++p;
        }
    }
    return out;
}

// The pg_stat_activity columns both statements send in the same order, from column `first` on
// (state, application_name, usename, client_addr, client_hostname, query, wait_event_type,
// wait_event, backend_start, xact_start, state_change, age(backend_xmin)).
Backend read_backend(const Result& r, int row, int first, int pid) {
    Backend b;
    b.pid = pid;
    b.state = r.get(row, first + 0);
    b.application_name = r.get(row, first + 1);
    b.usename = r.get(row, first + 2);
    b.client_addr = r.get(row, first + 3);
    b.client_hostname = r.get(row, first + 4);
    b.query = r.get(row, first + 5);
    b.wait_event_type = r.get(row, first + 6);
    b.wait_event = r.get(row, first + 7);
    b.backend_start = opt_double(r, row, first + 8);
    b.xact_start = opt_double(r, row, first + 9);
    b.state_change = opt_double(r, row, first + 10);
    if (!r.is_null(row, first + 11)) b.backend_xmin_age = r.get_int64(row, first + 11);
    return b;
}

// Column positions of chain_query().
enum ChainCol {
    cc_pid, cc_locktype, cc_mode, cc_relation, cc_page, cc_tuple, cc_xid, cc_vxid, cc_waitstart, cc_blocked_by,
    cc_backend,
};

// Sessions of the snapshot that wait on a lock which is not one of its advisory waits: an
// advisory holder (or waiter of another database's key) stuck on a row, relation or transaction.
std::vector<int> chain_seeds(const Snapshot& snap) {
    std::vector<int> advisory_waiters;
    for (const LockEntry& e : snap.locks)
        for (const Waiter& w : e.waiters) advisory_waiters.push_back(w.pid);
    std::sort(advisory_waiters.begin(), advisory_waiters.end());
    std::vector<int> seeds;
    for (const auto& [pid, b] : snap.backends)
        if (b.wait_event_type == "Lock" && !std::binary_search(advisory_waiters.begin(), advisory_waiters.end(), pid))
            seeds.push_back(pid);
    return seeds;
}

// Runs chain_query() from `seeds` and adds what it finds to the snapshot: an OtherWait per
// session waiting on something other than one of the snapshot's advisory waits, and the
// pg_stat_activity row of every session on the chain the snapshot did not have yet.
void follow_chains(Session& session, Snapshot& snap, const std::vector<int>& seeds, const Context& ctx) {
    std::string array = "{";
    for (std::size_t i = 0; i < seeds.size(); ++i) array += (i ? "," : "") + std::to_string(seeds[i]);
    array += "}";
    const Result r = session.exec(chain_query(snap.server_version), {array}, ctx);
    std::vector<int> advisory_waiters;
    for (const LockEntry& e : snap.locks)
        for (const Waiter& w : e.waiters) advisory_waiters.push_back(w.pid);
    std::sort(advisory_waiters.begin(), advisory_waiters.end());
    for (int row = 0; row < r.rows(); ++row) {
        if (r.is_null(row, cc_pid)) continue;
        const int pid = static_cast<int>(r.get_int64(row, cc_pid));
        // A pid that is gone by now has no pg_stat_activity row: nothing to say of it.
        if (!snap.backends.contains(pid) && !r.is_null(row, cc_backend + 8))
            snap.backends.emplace(pid, read_backend(r, row, cc_backend, pid));
        if (r.is_null(row, cc_locktype)) continue;  // waits on no lock: a root, or no longer waiting
        const std::string locktype(r.get(row, cc_locktype));
        if (locktype == "advisory" && std::binary_search(advisory_waiters.begin(), advisory_waiters.end(), pid))
            continue;  // the first statement has this wait, with its key
        OtherWait w;
        w.pid = pid;
        w.locktype = locktype;
        w.mode = r.get(row, cc_mode);
        w.relation = r.get(row, cc_relation);
        if (!r.is_null(row, cc_page)) w.page = r.get_int64(row, cc_page);
        if (!r.is_null(row, cc_tuple)) w.tuple = r.get_int64(row, cc_tuple);
        w.transactionid = r.get(row, cc_xid);
        w.virtualxid = r.get(row, cc_vxid);
        w.wait_start = opt_double(r, row, cc_waitstart);
        if (!r.is_null(row, cc_blocked_by)) w.blocked_by = parse_int_array(r.get(row, cc_blocked_by));
        w.description = describe_other_wait(w);
        snap.other_waits.push_back(std::move(w));
    }
}

}  // namespace

// Every function, operator, relation and type below is pg_catalog's by name: a monitor reads
// databases whose owners may create objects in any other schema of the search_path, and an
// unqualified name would run their code as the operator (docs/security.md). Epochs come as
// numeric: its text does not depend on extra_float_digits, which a database owner may set.
std::string poll_query(int server_version) {
    const bool has_waitstart = server_version >= 140000;
    // One statement per poll, one row per (session, form, mode, granted) with the locks' keys in
    // an array: at 10k locks over 1,500 sessions that is 1,500 rows instead of 10,500, and each
    // session's pg_stat_activity columns (its query text among them) are sent about once instead
    // of once per lock. The rows per lock cost the server more than reading pg_locks and
    // pg_stat_activity together did (scripts/bench-scale measures it).
    // pg_blocking_pids() only for waiting rows: it takes the lock manager's partition locks, and
    // granted rows do not need it. A session waits for one lock at a time, so a waiting row has
    // one key. (classid << 32 | objid) is the bigint key; for the int4-pair form it only carries
    // the two halves. The outer join keeps one row with the server's clock even when no advisory
    // lock exists. pg_is_in_recovery() is asked here, not taken from the session: a standby
    // promoted under a poller's open session reports in_hot_standby only after the session's next
    // statement, so a value read before the poll was one poll late (and cached for good on
    // servers before 14). The clock is clock_timestamp() of the output rows, which are formed only after
    // pg_locks was read (the aggregate reads all of it first): no waitstart or hold in the snapshot
    // is later than server_now. statement_timestamp() is earlier than the read and made waits that
    // began during the poll look as if they started in the future.
    return std::string(
               "SELECT extract(epoch FROM pg_catalog.clock_timestamp())::pg_catalog.numeric,"
               " pg_catalog.pg_is_in_recovery(), x.*"
               " FROM (SELECT 1) AS one LEFT JOIN ("
               "SELECT l.objsubid::integer, l.mode, l.granted, l.pid, l.keys::pg_catalog.text,"
               " CASE WHEN l.granted THEN NULL ELSE pg_catalog.pg_blocking_pids(l.pid)::pg_catalog.text END,") +
           " extract(epoch FROM l.wait_from)::pg_catalog.numeric,"
           " a.state, a.application_name, a.usename::pg_catalog.text, pg_catalog.host(a.client_addr),"
           " a.client_hostname, a.query, a.wait_event_type, a.wait_event,"
           " extract(epoch FROM a.backend_start)::pg_catalog.numeric,"
           " extract(epoch FROM a.xact_start)::pg_catalog.numeric,"
           " extract(epoch FROM a.state_change)::pg_catalog.numeric, pg_catalog.age(a.backend_xmin)::bigint"
           " FROM (SELECT k.pid, k.objsubid, k.mode, k.granted,"
           " pg_catalog.array_agg((k.classid::bigint OPERATOR(pg_catalog.<<) 32)"
           " OPERATOR(pg_catalog.|) k.objid::bigint) AS keys," +
           (has_waitstart ? " pg_catalog.min(k.waitstart) AS wait_from" : " NULL::pg_catalog.timestamptz AS wait_from") +
           " FROM pg_catalog.pg_locks k WHERE k.locktype OPERATOR(pg_catalog.=) 'advisory'"
           " AND k.database OPERATOR(pg_catalog.=) (SELECT d.oid FROM pg_catalog.pg_database d"
           " WHERE d.datname OPERATOR(pg_catalog.=) pg_catalog.current_database())"
           " GROUP BY k.pid, k.objsubid, k.mode, k.granted) AS l"
           " LEFT JOIN pg_catalog.pg_stat_activity a ON a.pid OPERATOR(pg_catalog.=) l.pid"
           ") AS x ON true";
}

std::string chain_query(int server_version) {
    const bool has_waitstart = server_version >= 140000;
    // The recursion follows pg_blocking_pids() only from sessions waiting on a lock
    // (wait_event_type 'Lock'): it takes the lock manager's partition locks, so never for the
    // root or for a session busy on something else. UNION (not UNION ALL) keeps a pid once, so a
    // cycle (a deadlock the detector has not broken yet) ends instead of looping. pg_locks is read
    // once, for the ungranted rows of the chain's pids only (a backend waits for one lock at a
    // time; DISTINCT ON keeps one row should a parallel group show more).
    return std::string(
               "WITH RECURSIVE chain(pid) AS ("
               "SELECT pg_catalog.unnest($1::integer[])"
               " UNION "
               "SELECT b.pid FROM chain c JOIN pg_catalog.pg_stat_activity s ON s.pid OPERATOR(pg_catalog.=) c.pid"
               " AND s.wait_event_type OPERATOR(pg_catalog.=) 'Lock',"
               " LATERAL pg_catalog.unnest(pg_catalog.pg_blocking_pids(c.pid)) AS b(pid)"
               "), waits AS MATERIALIZED ("
               "SELECT DISTINCT ON (l.pid) l.pid, l.locktype, l.mode, l.relation, l.page, l.tuple,"
               " l.transactionid::pg_catalog.text AS xid, l.virtualxid,") +
           (has_waitstart ? " l.waitstart" : " NULL::pg_catalog.timestamptz AS waitstart") +
           " FROM pg_catalog.pg_locks l WHERE NOT l.granted"
           " AND l.pid OPERATOR(pg_catalog.=) ANY (SELECT chain.pid FROM chain) ORDER BY l.pid"
           ") SELECT c.pid, w.locktype, w.mode,"
           " (SELECT pg_catalog.quote_ident(n.nspname) OPERATOR(pg_catalog.||) '.'"
           " OPERATOR(pg_catalog.||) pg_catalog.quote_ident(r.relname)"
           " FROM pg_catalog.pg_class r JOIN pg_catalog.pg_namespace n ON n.oid OPERATOR(pg_catalog.=) r.relnamespace"
           " WHERE r.oid OPERATOR(pg_catalog.=) w.relation),"
           " w.page::bigint, w.tuple::bigint, w.xid, w.virtualxid, extract(epoch FROM w.waitstart)::pg_catalog.numeric,"
           " CASE WHEN a.wait_event_type OPERATOR(pg_catalog.=) 'Lock'"
           " THEN pg_catalog.pg_blocking_pids(c.pid)::pg_catalog.text END,"
           " a.state, a.application_name, a.usename::pg_catalog.text, pg_catalog.host(a.client_addr),"
           " a.client_hostname, a.query, a.wait_event_type, a.wait_event,"
           " extract(epoch FROM a.backend_start)::pg_catalog.numeric,"
           " extract(epoch FROM a.xact_start)::pg_catalog.numeric,"
           " extract(epoch FROM a.state_change)::pg_catalog.numeric, pg_catalog.age(a.backend_xmin)::bigint"
           " FROM chain c LEFT JOIN waits w ON w.pid OPERATOR(pg_catalog.=) c.pid"
           " LEFT JOIN pg_catalog.pg_stat_activity a ON a.pid OPERATOR(pg_catalog.=) c.pid"
           " ORDER BY c.pid";
}

std::string describe_other_wait(const OtherWait& w) {
    const std::string rel = w.relation.empty() ? std::string("an unknown relation") : w.relation;
    if (w.locktype == "tuple" && w.page && w.tuple)
        return "row (" + std::to_string(*w.page) + "," + std::to_string(*w.tuple) + ") of " + rel;
    if (w.locktype == "transactionid") return "transaction " + w.transactionid;
    if (w.locktype == "virtualxid") return "virtual transaction " + w.virtualxid;
    if (w.locktype == "relation") return "relation " + rel;
    if (w.locktype == "extend") return "extension of " + rel;
    if (w.locktype == "page" && w.page) return "page " + std::to_string(*w.page) + " of " + rel;
    if (w.locktype.empty()) return "a lock";
    return w.locktype + (w.relation.empty() ? std::string() : " on " + w.relation);
}

std::string_view backend_signal_sql(BackendSignal signal) noexcept {
    return signal == BackendSignal::cancel_query ? "SELECT pg_catalog.pg_cancel_backend($1)"
                                                 : "SELECT pg_catalog.pg_terminate_backend($1)";
}

bool signal_backend(Session& session, int pid, BackendSignal signal, const Context& ctx) {
    return session.exec(backend_signal_sql(signal), {pid}, ctx).get_bool(0, 0);
}

namespace {

// The client_encoding every text of a poll converts to without an error: the database's own for
// SQL_ASCII (no conversion, the bytes as stored, which the display rule escapes where they are
// not UTF-8; asking for UTF8 there makes the server refuse any byte that is not), else UTF8
// (every encoding the server has converts to it). A database owner may set another default,
// and a conversion to it fails the whole poll on one character it lacks. A client_encoding the
// connection string sets itself is the operator's choice and stays.
std::string monitor_encoding(Session& session) {
    PGconn* conn = session.native_handle();
    if (PQconninfoOption* opts = PQconninfo(conn)) {
        bool explicit_encoding = false;
        for (PQconninfoOption* o = opts; o->keyword; ++o)
            if (std::strcmp(o->keyword, "client_encoding") == 0 && o->val && *o->val) explicit_encoding = true;
        PQconninfoFree(opts);
        if (explicit_encoding) return {};
    }
    const char* server = PQparameterStatus(conn, "server_encoding");
    return server && std::strcmp(server, "SQL_ASCII") == 0 ? "SQL_ASCII" : "UTF8";
}

}  // namespace

void prepare_session(Session& session, std::chrono::milliseconds lock_timeout, const Context& ctx) {
    const std::string ms = std::to_string(lock_timeout.count()) + "ms";
    const std::string encoding = monitor_encoding(session);
    session.exec("SELECT pg_catalog.set_config('lock_timeout', $1, false), "
                 "CASE WHEN $2 OPERATOR(pg_catalog.<>) '' THEN pg_catalog.set_config('client_encoding', $2, false) END",
                 {ms, encoding}, ctx);
}

Session connect_session(const std::string& conninfo, const Context& ctx, const Session::Overrides& overrides,
                        const Keepalive& keepalive) {
    Session session = Session::connect(conninfo, ctx, overrides, keepalive);
    prepare_session(session, default_monitor_lock_timeout, ctx);
    return session;
}

Snapshot poll(Session& session, const Context& ctx) {
    Snapshot snap;
    snap.server_version = PQserverVersion(session.native_handle());
    if (const char* host = PQhost(session.native_handle())) snap.host = host;
    if (const char* port = PQport(session.native_handle())) {
        const std::string_view text(port);
        std::from_chars(text.data(), text.data() + text.size(), snap.port);  // leaves 0 when not a number
    }
    const auto t0 = std::chrono::steady_clock::now();
    Result r = session.exec(poll_query(snap.server_version), {}, ctx);
    snap.latency_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();

    std::map<LockId, LockEntry> locks;
    for (int row = 0; row < r.rows(); ++row) {
        if (row == 0) {
            snap.server_now = opt_double(r, row, c_now).value_or(0);
            snap.in_recovery = r.get_bool(row, c_in_recovery);
        }
        if (r.is_null(row, c_pid)) continue;  // no locks, or a prepared transaction's lock (pid NULL)
        const KeyForm form = r.get(row, c_objsubid) == "2" ? KeyForm::int_pair : KeyForm::bigint;
        const int pid = static_cast<int>(r.get_int64(row, c_pid));
        const bool shared = r.get(row, c_mode) == "ShareLock";
        const bool granted = r.get_bool(row, c_granted);
        std::optional<double> wait_start;
        std::vector<int> blocked_by;
        if (!granted) {
            wait_start = opt_double(r, row, c_waitstart);
            blocked_by = parse_int_array(r.get(row, c_blocked_by));
        }
        for (const std::int64_t bits : parse_int64_array(r.get(row, c_keys))) {
            LockEntry probe;
            probe.form = form;
            probe.tag = tag_of(bits);
            auto [it, inserted] = locks.try_emplace(id_of(probe), std::move(probe));
            LockEntry& entry = it->second;
            if (inserted) {
                entry.key = key_of(entry.tag);
                entry.pair_first = static_cast<std::int32_t>(entry.tag.classid);
                entry.pair_second = static_cast<std::int32_t>(entry.tag.objid);
            }
            if (granted) {
                entry.holders.push_back({pid, shared});
            } else {
                Waiter& w = entry.waiters.emplace_back();
                w.pid = pid;
                w.shared = shared;
                w.wait_start = wait_start;
                w.blocked_by = blocked_by;
            }
        }
        // A session with locks in more than one mode has more than one row: the first one says it.
        if (!snap.backends.contains(pid)) snap.backends.emplace(pid, read_backend(r, row, c_state, pid));
    }
    snap.locks.reserve(locks.size());
    for (auto& [id, entry] : locks) {
        for (Waiter& w : entry.waiters) {
            if (auto b = snap.backends.find(w.pid); b != snap.backends.end() && b->second.backend_xmin_age) {
                w.xmin_age = b->second.backend_xmin_age;
                w.xmin_since = b->second.xact_start;
            }
        }
        std::sort(entry.holders.begin(), entry.holders.end(), [](const Holder& a, const Holder& b) { return a.pid < b.pid; });
        std::stable_sort(entry.waiters.begin(), entry.waiters.end(), [](const Waiter& a, const Waiter& b) {
            return a.wait_start.value_or(0) < b.wait_start.value_or(0);
        });
        snap.locks.push_back(std::move(entry));
    }
    // The map orders by the unsigned pg_locks tag, which puts negative keys after positive ones;
    // the documented order is by form, then by the signed key (int4 pairs: by the pair).
    std::sort(snap.locks.begin(), snap.locks.end(), [](const LockEntry& a, const LockEntry& b) {
        if (a.form != b.form) return a.form < b.form;
        if (a.form == KeyForm::int_pair)
            return std::pair(a.pair_first, a.pair_second) < std::pair(b.pair_first, b.pair_second);
        return a.key < b.key;
    });
    name_from_holders(snap);
    // Only when some session of the poll waits on another kind of lock: the common poll stays one
    // statement. Timed with the first, as one poll.
    if (const std::vector<int> seeds = chain_seeds(snap); !seeds.empty()) {
        follow_chains(session, snap, seeds, ctx);
        snap.latency_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    }
    return snap;
}

void name_from_holders(Snapshot& snapshot) {
    // Each holder's mentions, parsed once per pid (one session may hold many keys).
    std::map<int, std::vector<holder_identity::Mention>> mentions;
    const auto mentions_of = [&](int pid) -> const std::vector<holder_identity::Mention>& {
        auto [it, inserted] = mentions.try_emplace(pid);
        if (inserted) {
            if (auto b = snapshot.backends.find(pid); b != snapshot.backends.end())
                it->second = holder_identity::mentions(b->second.application_name);
        }
        return it->second;
    };
    for (LockEntry& entry : snapshot.locks) {
        entry.holder_name.reset();
        if (entry.form != KeyForm::bigint) continue;
        std::optional<HolderName> prefix;
        for (const Holder& h : entry.holders) {
            for (const auto& m : mentions_of(h.pid)) {
                if (m.complete && key_of(m.name) == entry.key) {
                    entry.holder_name = HolderName{m.name, true, h.pid};
                    break;
                }
                if (!m.complete && !prefix) prefix = HolderName{m.name, false, h.pid};
            }
            if (entry.holder_name) break;
        }
        if (!entry.holder_name) entry.holder_name = std::move(prefix);
    }
}

namespace {

const Holder* holder_in(const Snapshot& snapshot, const LockId& lock, int pid) {
    for (const LockEntry& e : snapshot.locks) {
        if (!(id_of(e) == lock)) continue;
        for (const Holder& h : e.holders)
            if (h.pid == pid) return &h;
        return nullptr;
    }
    return nullptr;
}

const Waiter* waiter_in(const Snapshot& snapshot, const LockId& lock, int pid) {
    for (const LockEntry& e : snapshot.locks) {
        if (!(id_of(e) == lock)) continue;
        for (const Waiter& w : e.waiters)
            if (w.pid == pid) return &w;
        return nullptr;
    }
    return nullptr;
}

std::optional<double> backend_start_of(const Snapshot& snapshot, int pid) {
    const auto b = snapshot.backends.find(pid);
    return b == snapshot.backends.end() ? std::nullopt : b->second.backend_start;
}

}  // namespace

void HoldTracker::suspend(double last_seen, double max_gap) {
    if (!suspended_at_) suspended_at_ = last_seen;
    max_gap_ = max_gap;
}

void HoldTracker::resume(const Snapshot& snapshot) {
    const double last_seen = *std::exchange(suspended_at_, std::nullopt);
    const double gap = std::max(0.0, snapshot.server_now - last_seen);
    for (auto it = open_.begin(); it != open_.end();) {
        Hold& hold = it->second;
        const Holder* h = holder_in(snapshot, hold.lock, hold.pid);
        // Same pid, same session (backend_start tells a pid reused after a restart apart), same
        // mode: the hold went on while nobody looked.
        const bool same = gap <= max_gap_ && h && h->shared == hold.shared && hold.backend_start &&
                          backend_start_of(snapshot, hold.pid) == hold.backend_start;
        if (same) {
            hold.unseen += gap;
            ++it;
            continue;
        }
        hold.end = last_seen;
        finished_.push_back(std::move(hold));
        it = open_.erase(it);
    }
}

std::size_t HoldTracker::update(const Snapshot& snapshot) {
    const std::size_t finished_before = finished_.size();
    if (suspended_at_) resume(snapshot);
    const std::size_t ended_in_gap = finished_.size() - finished_before;
    std::map<std::pair<LockId, int>, Hold> next;
    for (const LockEntry& lock : snapshot.locks) {
        for (const Holder& h : lock.holders) {
            const auto k = std::make_pair(id_of(lock), h.pid);
            if (auto it = open_.find(k); it != open_.end()) {
                next.emplace(k, std::move(it->second));
                open_.erase(it);
                continue;
            }
            Hold hold;
            hold.lock = id_of(lock);
            hold.key = lock.key;
            hold.pid = h.pid;
            hold.shared = h.shared;
            hold.start = snapshot.server_now;
            if (auto b = snapshot.backends.find(h.pid); b != snapshot.backends.end()) {
                hold.application_name = b->second.application_name;
                hold.usename = b->second.usename;
                hold.backend_start = b->second.backend_start;
            }
            next.emplace(k, std::move(hold));
        }
    }
    const std::size_t ended = open_.size() + ended_in_gap;
    for (auto& [k, hold] : open_) {
        hold.end = snapshot.server_now;
        finished_.push_back(std::move(hold));
    }
    open_ = std::move(next);
    trim_finished();
    return ended;
}

void HoldTracker::trim_finished() {
    if (finished_.size() > max_finished_) {
        finished_.erase(finished_.begin(), finished_.begin() + static_cast<std::ptrdiff_t>(finished_.size() - max_finished_));
    }
}

std::vector<Hold> HoldTracker::take_finished() { return std::exchange(finished_, {}); }

std::optional<double> HoldTracker::held_since(const LockId& lock, int pid) const {
    if (auto it = open_.find({lock, pid}); it != open_.end()) return it->second.start;
    return std::nullopt;
}

void HoldTracker::close_all(double when) {
    suspended_at_.reset();
    for (auto& [k, hold] : open_) {
        hold.end = when;
        finished_.push_back(std::move(hold));
    }
    open_.clear();
    trim_finished();
}

namespace {

void merge_pids(std::vector<int>& into, const std::vector<int>& more) {
    for (int pid : more) {
        const auto at = std::lower_bound(into.begin(), into.end(), pid);
        if (at == into.end() || *at != pid) into.insert(at, pid);
    }
}

Wait new_wait(const Snapshot& snapshot, const LockEntry& lock, const Waiter& w) {
    Wait wait;
    wait.lock = id_of(lock);
    wait.key = lock.key;
    wait.pid = w.pid;
    wait.shared = w.shared;
    wait.start = w.wait_start.value_or(snapshot.server_now);
    wait.start_from_server = w.wait_start.has_value();
    merge_pids(wait.blocked_by, w.blocked_by);
    if (auto b = snapshot.backends.find(w.pid); b != snapshot.backends.end()) {
        wait.application_name = b->second.application_name;
        wait.usename = b->second.usename;
    }
    return wait;
}

}  // namespace

void WaitTracker::suspend(double last_seen, double max_gap) {
    if (!suspended_at_) suspended_at_ = last_seen;
    max_gap_ = max_gap;
}

void WaitTracker::resume(const Snapshot& snapshot) {
    const double last_seen = *std::exchange(suspended_at_, std::nullopt);
    const double gap = std::max(0.0, snapshot.server_now - last_seen);
    for (auto it = open_.begin(); it != open_.end();) {
        const Wait& wait = it->second;
        const Waiter* w = waiter_in(snapshot, wait.lock, wait.pid);
        if (gap <= max_gap_ && w && w->shared == wait.shared && wait.start_from_server && w->wait_start &&
            *w->wait_start == wait.start) {
            ++it;
            continue;
        }
        finish(std::move(it->second), last_seen);
        it = open_.erase(it);
    }
}

std::size_t WaitTracker::update(const Snapshot& snapshot) {
    const std::size_t finished_before = finished_.size();
    if (suspended_at_) resume(snapshot);
    std::size_t ended = finished_.size() - finished_before;  // those that did not come back after a gap
    std::map<std::pair<LockId, int>, Wait> next;
    for (const LockEntry& lock : snapshot.locks) {
        for (const Waiter& w : lock.waiters) {
            const auto k = std::make_pair(id_of(lock), w.pid);
            auto it = open_.find(k);
            if (it == open_.end()) {
                next.emplace(k, new_wait(snapshot, lock, w));
                continue;
            }
            Wait wait = std::move(it->second);
            open_.erase(it);
            if (w.wait_start) {
                if (wait.start_from_server && *w.wait_start > wait.start) {
                    // A later waitstart on the same (lock, pid): the old wait was granted or
                    // canceled and a new one began between two polls. The old one ended no later
                    // than the new one started.
                    finish(std::move(wait), *w.wait_start);
                    ++ended;
                    next.emplace(k, new_wait(snapshot, lock, w));
                    continue;
                }
                if (!wait.start_from_server) {
                    // waitstart is NULL for a moment after a wait begins; the server's value,
                    // once shown, is the truth.
                    wait.start = std::min(wait.start, *w.wait_start);
                    wait.start_from_server = true;
                }
            }
            merge_pids(wait.blocked_by, w.blocked_by);
            next.emplace(k, std::move(wait));
        }
    }
    for (auto& [k, wait] : open_) {
        finish(std::move(wait), snapshot.server_now);
        ++ended;
    }
    open_ = std::move(next);
    // Keep the documented order (oldest end first) when a restarted wait ended before others.
    std::stable_sort(finished_.begin() + static_cast<std::ptrdiff_t>(std::min(finished_before, finished_.size())),
                     finished_.end(), [](const Wait& a, const Wait& b) { return a.end < b.end; });
    trim_finished();
    return ended;
}

void WaitTracker::finish(Wait wait, double when) {
    wait.end = std::max(when, wait.start);  // never a negative duration, whatever the clocks said
    finished_.push_back(std::move(wait));
}

void WaitTracker::trim_finished() {
    if (finished_.size() > max_finished_) {
        finished_.erase(finished_.begin(), finished_.begin() + static_cast<std::ptrdiff_t>(finished_.size() - max_finished_));
    }
}

std::vector<Wait> WaitTracker::take_finished() { return std::exchange(finished_, {}); }

void WaitTracker::close_all(double when) {
    suspended_at_.reset();
    for (auto& [k, wait] : open_) finish(std::move(wait), when);
    open_.clear();
    trim_finished();
}

}  // namespace pglock::monitor
