// Connection strings, parsed by libpq itself (conninfo "k=v ..." or postgresql:// URIs): their
// settings, how to write one, and the checks every front end makes before connecting.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace pglock {

// One setting of a connection string as libpq reads it.
struct ConninfoOption {
    std::string keyword;
    std::string value;
};

// The settings the string gives (keyword=value or URI, read by libpq's PQconninfoParse), in
// libpq's keyword order, unset keywords left out; nullopt when libpq refuses the string
// (conninfo_error() says why, with any password masked).
std::optional<std::vector<ConninfoOption>> conninfo_options(const std::string& conninfo);

// `value` as a keyword=value value: single-quoted, backslash and quote escaped (libpq's rule).
std::string conninfo_quote(std::string_view value);

// The settings as a "keyword='value' ..." string, each value conninfo_quote()d.
std::string conninfo_string(const std::vector<ConninfoOption>& options);

// libpq's complaint about a connection string, or nullopt when it parses and its port,
// timeouts and mode keywords (sslmode, target_session_attrs, ...) hold values libpq accepts.
// Any password in the string is masked in the message. A URI with more than one raw '@' before
// its host is refused too: libpq would take the part of the password after the first '@' for
// the host name (and quote it in its lookup error); such an '@' must be written %40.
std::optional<std::string> conninfo_error(const std::string& conninfo);

// The string carries a password (password=..., or user:password@ in a URI): such a string must
// not be written to disk.
bool conninfo_has_password(const std::string& conninfo);

// A short name for the server a string points at, safe to show and to store because it never
// holds the password: "service=NAME", else "user@host:port/dbname" with the parts the string
// gives ("" when it does not parse). Used for window titles and per-server history files.
std::string conninfo_label(const std::string& conninfo);

// The same connection string without its password (keyword password=, or the user:password@
// of a URI); the other settings are kept, as a "keyword='value' ..." string when it had one.
// A string that does not parse but looks like it carries a password gives "": nothing of it can
// be kept safely. Used by whatever stores connection strings.
std::string conninfo_without_password(const std::string& conninfo);

// `message` with every password that `conninfo` carries replaced by "***" (for a URI password
// with a raw '@', each '@'-separated piece too, since libpq reads the rest as the host). libpq quotes parts
// of a malformed URI in its complaints ("... in URI: \"postgresql://u:secret@[::1\""), and
// those messages reach terminals, status bars and logs. `extra` is another password to hide
// (one passed beside the string, e.g. a typed one).
std::string redact_password(std::string message, const std::string& conninfo, const std::string& extra = {});

}  // namespace pglock
