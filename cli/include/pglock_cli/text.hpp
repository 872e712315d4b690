// Writing lock names, which may be any bytes, into the CLI's output formats.
#pragma once

#include <string>
#include <string_view>

#include "pglock/text.hpp"

namespace pglock::cli {

// Strict UTF-8 is core's (pglock/text.hpp): is_valid_utf8, decode_utf8.
using pglock::is_valid_utf8;

// A JSON string literal, quotes included. Valid UTF-8 passes through; `"` and `\` are escaped;
// control characters (U+0000..U+001F) and DEL become \u00XX. Each byte that does not begin a
// valid UTF-8 sequence becomes \ufffd (U+FFFD), because a JSON string holds Unicode text, not bytes: callers
// that must keep the exact bytes also print hex_bytes() (the `key --json` "name_hex" field).
std::string json_quote(std::string_view bytes);

// Lowercase hex of the bytes, two digits each: "6f7264" for "ord".
std::string hex_bytes(std::string_view bytes);

// A TSV field in PostgreSQL COPY text format: `\` -> `\\`, TAB -> `\t`, LF -> `\n`, CR -> `\r`;
// every other byte unchanged. Keeps one name per line and one field per tab.
std::string tsv_escape(std::string_view bytes);

// Folds a possibly multi-line message (libpq's end in "\n" and may continue with "\t"-indented
// hints) into one line: whitespace runs that contain a line break become "; " and the ends are
// trimmed.
std::string one_line(std::string_view message);

}  // namespace pglock::cli
