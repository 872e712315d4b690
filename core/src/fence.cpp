#include "pglock/fence.hpp"

#include "pglock/error.hpp"
#include "pglock/key.hpp"
#include "pglock/sqlstate.hpp"
#include "session_ops.hpp"

namespace pglock::fence {

namespace {

// What search_path finds as pglock_fence, and what the catalog says of it and of us. One
// statement; pg_catalog's names only (docs/security.md).
struct Found {
    std::string table;     // quoted and schema-qualified
    char relkind = 'r';
    std::string owner;
    bool owner_is_superuser = false;
    bool row_security = false;
    std::string me;
    bool me_is_superuser = false;
};

std::optional<Found> find(Session& session, const Context& ctx) {
    const Result r = session.exec(
        "SELECT pg_catalog.quote_ident(n.nspname) OPERATOR(pg_catalog.||) '.' OPERATOR(pg_catalog.||) "
        "pg_catalog.quote_ident(c.relname), c.relkind::pg_catalog.text, o.rolname::pg_catalog.text, o.rolsuper, "
        "c.relrowsecurity, u.rolname::pg_catalog.text, u.rolsuper "
        "FROM pg_catalog.pg_class c "
        "JOIN pg_catalog.pg_namespace n ON n.oid OPERATOR(pg_catalog.=) c.relnamespace "
        "JOIN pg_catalog.pg_roles o ON o.oid OPERATOR(pg_catalog.=) c.relowner "
        "JOIN pg_catalog.pg_roles u ON u.rolname OPERATOR(pg_catalog.=) CURRENT_USER "
        "WHERE c.oid OPERATOR(pg_catalog.=) pg_catalog.to_regclass('pglock_fence')",
        {}, ctx);
    detail::SessionOps::took_no_advisory_lock(session);
    if (r.rows() == 0) return std::nullopt;
    Found f;
    f.table = r.get(0, 0);
    f.relkind = r.get(0, 1).empty() ? '?' : r.get(0, 1)[0];
    f.owner = r.get(0, 2);
    f.owner_is_superuser = r.get_bool(0, 3);
    f.row_security = r.get_bool(0, 4);
    f.me = r.get(0, 5);
    f.me_is_superuser = r.get_bool(0, 6);
    return f;
}

// Why taking a fenced lock must not write to `f`, or "" when it may. The table's owner decides
// what runs when a row is written (triggers, rules, defaults, index expressions, row security
// policies), and it runs with the writer's rights: a superuser writing to a table a role without
// those rights owns would run that role's code as superuser.
std::string refusal_for_writing(const Found& f) {
    if (f.relkind != 'r') {
        return f.table + " is not a plain table (relkind '" + std::string(1, f.relkind) +
               "'): a view or a foreign or partitioned table runs other code when written to";
    }
    if (f.me_is_superuser && !f.owner_is_superuser) {
        return f.table + " is owned by " + f.owner + ", who is not a superuser, and this session is " + f.me +
               ", a superuser: writing to it would run whatever its owner attached to it (triggers, defaults, index "
               "expressions) with superuser rights. Take fenced locks as " + f.owner +
               ", or have a superuser own the table (ALTER TABLE " + f.table + " OWNER TO ...)";
    }
    return {};
}

// Why reading `f` could run its owner's code as this session, or "".
std::string refusal_for_reading(const Found& f) {
    if (f.relkind != 'r') {
        return f.table + " is not a plain table (relkind '" + std::string(1, f.relkind) +
               "'): reading a view runs its owner's functions as the reader";
    }
    if (f.row_security && !f.me_is_superuser && f.owner != f.me) {
        return f.table + " has row-level security, whose policies, owned by " + f.owner +
               ", would run as this session";
    }
    return {};
}

Error not_found(Errc code) {
    return Error(code,
                 "the table pglock_fence is not found through search_path: create it once per database with "
                 "`pglock fence init` (or pglock::fence::init)",
                 std::string(sqlstate::undefined_table));
}

}  // namespace

std::string bytea_hex(std::string_view name) {
    static constexpr char digits[] = "0123456789abcdef";
    std::string out = "\\x";
    out.reserve(2 + 2 * name.size());
    for (const char c : name) {
        const auto byte = static_cast<unsigned char>(c);
        out += digits[byte >> 4];
        out += digits[byte & 0xf];
    }
    return out;
}

InitResult init(Session& session, const Context& ctx) {
    InitResult result;
    if (auto found = find(session, ctx)) {
        result.table = found->table;
        result.refusal = refusal_for_writing(*found);
        return result;
    }
    // IF NOT EXISTS: another init may race this one. A normal logged table, so tokens survive a
    // crash and a restart; and a durable commit even under synchronous_commit = off, or a crash
    // could take the new table back and a later init would start the tokens again at 1.
    session.exec("BEGIN", {}, ctx);
    try {
        session.exec("SET LOCAL synchronous_commit = on", {}, ctx);
        session.exec(
            "CREATE TABLE IF NOT EXISTS pglock_fence (key bigint PRIMARY KEY, token bigint NOT NULL, "
            "name pg_catalog.bytea NOT NULL, updated_at pg_catalog.timestamptz NOT NULL DEFAULT pg_catalog.now())",
            {}, ctx);
        session.exec("COMMIT", {}, ctx);
    } catch (...) {
        try {
            session.exec("ROLLBACK", {}, ctx);
        } catch (...) {
            // The error that brought us here is the one to report.
        }
        throw;
    }
    const auto made = find(session, ctx);
    if (!made) throw not_found(Errc::query_failed);
    result.table = made->table;
    result.refusal = refusal_for_writing(*made);
    result.created = true;
    return result;
}

// The pool forms take no advisory lock: their sessions go back without a clean-up statement.
InitResult init(Pool& pool, const Context& ctx) {
    PooledSession session = pool.acquire(ctx);
    InitResult result = init(*session, ctx);
    detail::SessionOps::took_no_advisory_lock(*session);
    return result;
}

std::string table_for_writing(Session& session, const Context& ctx) {
    const auto found = find(session, ctx);
    if (!found) throw not_found(Errc::acquire_failed);
    if (auto why = refusal_for_writing(*found); !why.empty())
        throw Error(Errc::acquire_failed, "refusing to take a fencing token: " + why + "; no lock was taken");
    return found->table;
}

std::optional<std::int64_t> last_token(Session& session, std::string_view name, const Context& ctx) {
    const auto found = find(session, ctx);
    if (!found) throw not_found(Errc::query_failed);
    if (auto why = refusal_for_reading(*found); !why.empty())
        throw Error(Errc::query_failed, "refusing to read the fencing table: " + why);
    // ONLY: a plain table may have children, and a child may be a foreign table.
    Result res = session.exec("SELECT t.token FROM ONLY " + found->table +
                                  " t WHERE t.key OPERATOR(pg_catalog.=) $1::bigint",
                              {Param(key_of(name))}, ctx);
    detail::SessionOps::took_no_advisory_lock(session);
    if (!res.rows()) return std::nullopt;
    return res.get_int64(0, 0);
}

std::optional<std::int64_t> last_token(Pool& pool, std::string_view name, const Context& ctx) {
    PooledSession session = pool.acquire(ctx);
    return last_token(*session, name, ctx);
}

}  // namespace pglock::fence
