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

}  // namespace pglock
