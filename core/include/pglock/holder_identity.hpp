// Holder identity: while a session holds a lock through this library, its application_name names
// the lock, so that pg_stat_activity, psql, pgAdmin and every other tool an operator already has
// can tell which name an advisory key is. Qt-free; used by Lock (to write it) and the monitor (to
// read it back).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace pglock::holder_identity {

// PostgreSQL keeps NAMEDATALEN - 1 bytes of application_name in pg_stat_activity.
inline constexpr std::size_t max_bytes = 63;
// What introduces a lock name inside an application_name; the monitor looks for it.
inline constexpr std::string_view tag = "pglock:";
// {app}: the session's application_name before the lock; {lock}: "pglock:" and the escaped name.
inline constexpr std::string_view default_format = "{app} {lock}";

// The name as it is written after the tag: every byte outside '!'..'~', and '%' itself, becomes
// %XX. PostgreSQL turns any non-ASCII byte of application_name into '?' (15) or \xNN (16+), and a
// space would end the token: escaping keeps every name, UTF-8 or not, readable back exactly.
std::string escape(std::string_view name);

// The application_name for a session holding `name`: `format` with {app} and {lock} filled in,
// at most max_bytes bytes, without leading or trailing spaces. When it is too long, {app} is
// shortened first; when the lock part alone does not fit, it is cut at a character boundary
// (never inside an escape, never inside a UTF-8 sequence) and ends in a bare '%', which marks the
// cut: an escaped name never has one.
std::string application_name(std::string_view format, std::string_view app, std::string_view name);

// A lock name found in an application_name.
struct Mention {
    std::string name;       // unescaped; a prefix of the real name when `complete` is false
    bool complete = true;   // false: the name was cut to fit (it cannot be checked against a key)
};

// Every "pglock:" token of an application_name (at its start or after a space), unescaped.
// Tokens that are not valid escapes are skipped.
std::vector<Mention> mentions(std::string_view application_name);

}  // namespace pglock::holder_identity
