// Fencing tokens: the table behind LockOptions::fencing, and what operators do with it.
//
// A lock protects nothing once its holder's session has died and the holder has not noticed yet
// (a long GC pause, a stalled process, a partitioned network): a new holder takes the lock while
// the old one still writes. A fencing token lets the system receiving the writes reject the old
// holder: each acquisition gets a number greater than every earlier one for that lock, and the
// receiver remembers the greatest it has seen and refuses smaller ones.
//
// The numbers live in one small table, found through search_path (once per session; the session
// then names it by its schema):
//   CREATE TABLE pglock_fence (key bigint PRIMARY KEY, token bigint NOT NULL,
//                              name bytea NOT NULL, updated_at timestamptz NOT NULL DEFAULT now())
// `key` is key_of(name); `token` the last token handed out; `name` the name of the last holder as
// raw bytes (names may be invalid UTF-8 or contain NUL); `updated_at` the time of that grant.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "pglock/context.hpp"
#include "pglock/pool.hpp"
#include "pglock/session.hpp"

namespace pglock::fence {

inline constexpr std::string_view table_name = "pglock_fence";

struct InitResult {
    bool created = false;  // false: the table was there already (nothing changed)
    std::string table{};   // schema-qualified, e.g. "public.pglock_fence"
    // Why fenced locks taken by this session's role would refuse the table (see
    // table_for_writing), or "" when they would use it.
    std::string refusal{};
};

// Creates the table where an unqualified CREATE TABLE goes (the first existing schema of
// search_path) unless search_path already finds one. Idempotent; needs CREATE on that schema.
// Holders need SELECT, INSERT and UPDATE on it. Throws Error{query_failed} from the server.
InitResult init(Session& session, const Context& ctx = {});
InitResult init(Pool& pool, const Context& ctx = {});

// The table fenced locks on `session` write to, quoted and schema-qualified. Throws
// Error{acquire_failed} when search_path finds none (SQLSTATE 42P01), when it is not a plain
// table, and when the session's role is a superuser and the table's owner is not: writing to a
// table runs what its owner attached to it (triggers, defaults, index expressions) with the
// writer's rights. Other roles are not refused; docs/security.md says what that trusts.
std::string table_for_writing(Session& session, const Context& ctx = {});

// The last token handed out for `name` (its key, so a colliding name shares it); nullopt when
// the lock never had one. Throws Error{query_failed}, e.g. 42P01 when init() never ran, and when
// reading the table could run its owner's code as this session (a view; row-level security of
// another role's table).
std::optional<std::int64_t> last_token(Session& session, std::string_view name, const Context& ctx = {});
std::optional<std::int64_t> last_token(Pool& pool, std::string_view name, const Context& ctx = {});

// `name` as PostgreSQL's hex bytea input ("\x6f72..."): any bytes, as a text parameter.
std::string bytea_hex(std::string_view name);

}  // namespace pglock::fence
