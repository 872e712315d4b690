// Which parts of a connection string are secret, in libpq's own judgement: the keywords that
// PQconndefaults() marks with dispchar "*" (password, sslpassword, and whatever a later libpq
// adds), plus a URI's user:password@. Whatever stores, shows or logs a connection string (saved
// profiles, window titles, per-server file names, status lines) goes through these.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace pglock {

// libpq marks `keyword` as secret (dispchar "*" in PQconndefaults()).
bool conninfo_keyword_is_secret(std::string_view keyword);

// The string gives a value to a secret keyword (as keyword=value or a URI query parameter) or
// carries a URI password. A string libpq does not parse counts when its text looks like it does.
// A URI with more than one '@' before its path counts too: libpq splits it at the first one, so
// the rest of an unencoded password would otherwise pass for a host name.
bool conninfo_has_secret(const std::string& conninfo);

// The same connection string without any secret; the other settings are kept, as
// "keyword='value' ..." when there was something to remove. "" when it does not parse (or is a
// URI with an '@' inside its password) but looks like it carries a secret: nothing of it can be
// kept safely.
std::string conninfo_without_secrets(const std::string& conninfo);

// Every secret text the string carries, raw and %-decoded, longest first: values of secret
// keywords, a URI password read up to the first '@' (as libpq does) and up to the last one (as
// the user meant), and the pieces of the latter between '@'s.
std::vector<std::string> conninfo_secret_texts(const std::string& conninfo);

// `text` with every secret of `conninfo` replaced by "***". For messages, titles and labels
// built from a connection string or from libpq's complaints about it.
std::string redact_secrets(std::string text, const std::string& conninfo);

}  // namespace pglock
