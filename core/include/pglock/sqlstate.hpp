// The SQLSTATEs the library and its front ends act on, by their PostgreSQL names (Appendix A,
// "PostgreSQL Error Codes"), to compare with Error::sqlstate().
#pragma once

#include <string_view>

namespace pglock::sqlstate {

// 40001: a repeatable-read or serializable transaction lost a race; run it again.
inline constexpr std::string_view serialization_failure = "40001";
// 42501: the role may not do this (pg_cancel_backend on another role's session, ...).
inline constexpr std::string_view insufficient_privilege = "42501";
// 42P01: a table the statement names does not exist (the fencing table before init()).
inline constexpr std::string_view undefined_table = "42P01";
// 42P05: PREPARE of a name the session already has.
inline constexpr std::string_view duplicate_prepared_statement = "42P05";
// 26000: EXECUTE of a prepared statement the session does not have (a pooler switched sessions).
inline constexpr std::string_view invalid_sql_statement_name = "26000";
// 55P03: a lock the statement needed was not free within lock_timeout (or NOWAIT).
inline constexpr std::string_view lock_not_available = "55P03";
// 57014: the statement was canceled (our own cancel request, or statement_timeout).
inline constexpr std::string_view query_canceled = "57014";

}  // namespace pglock::sqlstate
