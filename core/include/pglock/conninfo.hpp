// Checks on connection strings, parsed by libpq itself (conninfo "k=v ..." or postgresql:// URIs).
#pragma once

#include <optional>
#include <string>

namespace pglock {

// libpq's complaint about a connection string, or nullopt when it parses.
std::optional<std::string> conninfo_error(const std::string& conninfo);

// The string carries a password (password=..., or user:password@ in a URI): such a string must
// not be written to disk.
bool conninfo_has_password(const std::string& conninfo);

// A short name for the server a string points at, safe to show and to store because it never
// holds the password: "service=NAME", else "user@host:port/dbname" with the parts the string
// gives ("" when it does not parse). Used for window titles and per-server history files.
std::string conninfo_label(const std::string& conninfo);

}  // namespace pglock
