// Writing lock names and server text, which may be any bytes, into the CLI's output formats. The
// rule for showing them is core's (pglock/text.hpp); these are its JSON, TSV and key=value forms.
#pragma once

#include <string>
#include <string_view>

#include "pglock/text.hpp"

namespace pglock::cli {

// Strict UTF-8 and the display rule are core's (pglock/text.hpp).
using pglock::display_line;
using pglock::display_text;
using pglock::is_valid_utf8;
using pglock::one_line;

// A JSON string literal, quotes included. Valid UTF-8 passes through; `"` and `\` are escaped;
// control characters (U+0000..U+001F), DEL and the other hidden code points (C1 controls, bidi
// overrides, zero-width characters: is_hidden_code_point) become \uXXXX, so that the output is
// still safe on a terminal. Each byte that does not begin a valid UTF-8 sequence becomes \ufffd
// (U+FFFD), because a JSON string holds Unicode text, not bytes: callers that must keep the exact
// bytes also print hex_bytes() (the `key --json` "name_hex" field).
std::string json_quote(std::string_view bytes);

// Lowercase hex of the bytes, two digits each: "6f7264" for "ord".
std::string hex_bytes(std::string_view bytes);

// A TSV field in PostgreSQL COPY text format: `\` -> `\\`, TAB -> `\t`, LF -> `\n`, CR -> `\r`,
// and as \xHH each byte of another control character, of a hidden code point and each byte that
// is not UTF-8 (COPY reads \xHH back as that byte); every other byte unchanged. Keeps one name
// per line and one field per tab, and a terminal shows the line as it is.
std::string tsv_escape(std::string_view bytes);

// A value in the CLI's key=value lines: bare when it is plain printable text, JSON-quoted
// otherwise (spaces, quotes, `\`, `=`, control and hidden code points, invalid UTF-8, empty).
std::string kv_value(std::string_view value);

}  // namespace pglock::cli
