#include "pglock/fence.hpp"

#include "pglock/key.hpp"
#include "session_ops.hpp"

namespace pglock::fence {

namespace {

// Where search_path finds the table, schema-qualified; "" when it finds none.
std::string where(Session& session, const Context& ctx) {
    Result res = session.exec(
        "SELECT n.nspname::text FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
        "WHERE c.oid = to_regclass('pglock_fence')",
        {}, ctx);
    return res.rows() ? std::string(res.get(0, 0)) + ".pglock_fence" : std::string();
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
    result.table = where(session, ctx);
    if (!result.table.empty()) return result;
    // IF NOT EXISTS: another init may race this one. A normal logged table, so tokens survive a
    // crash and a restart; and a durable commit even under synchronous_commit = off, or a crash
    // could take the new table back and a later init would start the tokens again at 1.
    session.exec("BEGIN", {}, ctx);
    try {
        session.exec("SET LOCAL synchronous_commit = on", {}, ctx);
        session.exec(
            "CREATE TABLE IF NOT EXISTS pglock_fence (key bigint PRIMARY KEY, token bigint NOT NULL, "
            "name bytea NOT NULL, updated_at timestamptz NOT NULL DEFAULT now())",
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
    result.table = where(session, ctx);
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

std::optional<std::int64_t> last_token(Session& session, std::string_view name, const Context& ctx) {
    Result res = session.exec("SELECT token FROM pglock_fence WHERE key = $1::bigint", {Param(key_of(name))}, ctx);
    if (!res.rows()) return std::nullopt;
    return res.get_int64(0, 0);
}

std::optional<std::int64_t> last_token(Pool& pool, std::string_view name, const Context& ctx) {
    PooledSession session = pool.acquire(ctx);
    auto token = last_token(*session, name, ctx);
    detail::SessionOps::took_no_advisory_lock(*session);
    return token;
}

}  // namespace pglock::fence
