#include "pglock/backend_impact.hpp"

#include <algorithm>
#include <charconv>
#include <cstdlib>

#include "pglock/key.hpp"
#include "pglock/resolve.hpp"

namespace pglock::monitor {

namespace {

std::optional<double> opt_double(const Result& r, int row, int col) {
    if (r.is_null(row, col)) return std::nullopt;
    return std::strtod(std::string(r.get(row, col)).c_str(), nullptr);
}

// pg_blocking_pids() only of sessions waiting on a lock: it takes the lock manager's partition
// locks, and nobody else can be blocked.
// pg_catalog's names only, and epochs as numeric: see poll_query() in monitor.cpp.
constexpr const char* kSessionSql =
    "SELECT extract(epoch FROM pg_catalog.clock_timestamp())::pg_catalog.numeric, a.state, a.application_name,"
    " pg_catalog.host(a.client_addr), a.client_hostname, a.query,"
    " extract(epoch FROM a.backend_start)::pg_catalog.numeric, extract(epoch FROM a.xact_start)::pg_catalog.numeric,"
    " a.backend_xid IS NOT NULL,"
    " (SELECT pg_catalog.array_agg(w.pid ORDER BY w.pid) FROM pg_catalog.pg_stat_activity w"
    "   WHERE w.wait_event_type OPERATOR(pg_catalog.=) 'Lock'"
    "   AND a.pid OPERATOR(pg_catalog.=) ANY (pg_catalog.pg_blocking_pids(w.pid)))::pg_catalog.text"
    " FROM pg_catalog.pg_stat_activity a WHERE a.pid OPERATOR(pg_catalog.=) $1";

// The relation's name as regclass prints it, but through pg_catalog's functions: regclass's text
// form qualifies by the session's search_path, which the database owner sets.
constexpr const char* kLocksSql =
    "SELECT l.locktype, l.mode, l.granted, l.objsubid::integer, l.classid::bigint, l.objid::bigint,"
    " (SELECT pg_catalog.quote_ident(n.nspname) OPERATOR(pg_catalog.||) '.'"
    " OPERATOR(pg_catalog.||) pg_catalog.quote_ident(r.relname)"
    " FROM pg_catalog.pg_class r JOIN pg_catalog.pg_namespace n ON n.oid OPERATOR(pg_catalog.=) r.relnamespace"
    " WHERE r.oid OPERATOR(pg_catalog.=) l.relation),"
    " l.transactionid::pg_catalog.text, l.virtualxid"
    " FROM pg_catalog.pg_locks l WHERE l.pid OPERATOR(pg_catalog.=) $1"
    " ORDER BY NOT l.granted, l.locktype OPERATOR(pg_catalog.<>) 'advisory', l.locktype, l.classid, l.objid,"
    " l.relation, l.mode";

std::vector<int> parse_pids(std::string_view text) {  // "{12,34}"
    std::vector<int> out;
    const char* p = text.data();
    const char* end = p + text.size();
    while (p < end) {
        if (*p >= '0' && *p <= '9') {
            int v = 0;
            const auto [next, ec] = std::from_chars(p, end, v);
            if (ec == std::errc{}) out.push_back(v);
            p = next;
        } else {
            ++p;
        }
    }
    return out;
}

}  // namespace

BackendImpact backend_impact(Session& session, int pid, const Context& ctx) {
    BackendImpact out;
    out.pid = pid;
    Result a = session.exec(kSessionSql, {pid}, ctx);
    if (a.rows() == 0) return out;
    out.found = true;
    out.server_now = opt_double(a, 0, 0).value_or(0);
    out.state = a.get(0, 1);
    out.application_name = a.get(0, 2);
    out.client_addr = a.get(0, 3);
    out.client_hostname = a.get(0, 4);
    out.query = a.get(0, 5);
    out.backend_start = opt_double(a, 0, 6);
    out.xact_start = opt_double(a, 0, 7);
    out.wrote = a.get_bool(0, 8);
    out.waiting_pids = parse_pids(a.get(0, 9));

    Result l = session.exec(kLocksSql, {pid}, ctx);
    for (int row = 0; row < l.rows(); ++row) {
        HeldLock h;
        h.locktype = l.get(row, 0);
        h.mode = l.get(row, 1);
        h.granted = l.get_bool(row, 2);
        if (h.locktype == "advisory") {
            const LockTag tag{static_cast<std::uint32_t>(l.get_int64(row, 4)), static_cast<std::uint32_t>(l.get_int64(row, 5))};
            if (l.get(row, 3) == "2") {
                h.object = "advisory pair " + int4_pair_text(static_cast<std::int32_t>(tag.classid), static_cast<std::int32_t>(tag.objid));
            } else {
                h.advisory_key = key_of(tag);
                h.object = "advisory key " + std::to_string(*h.advisory_key);
            }
        } else if (!l.is_null(row, 6)) {
            h.object = h.locktype + " " + std::string(l.get(row, 6));
        } else if (!l.is_null(row, 7)) {
            h.object = h.locktype + " " + std::string(l.get(row, 7));
        } else if (!l.is_null(row, 8)) {
            h.object = h.locktype + " " + std::string(l.get(row, 8));
        } else {
            h.object = h.locktype;
        }
        out.locks.push_back(std::move(h));
    }
    return out;
}

}  // namespace pglock::monitor
