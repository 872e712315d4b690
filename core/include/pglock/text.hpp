// Text safety shared by every front end (the CLI's lines, fields, logs and error messages, the
// app's labels, cells, tooltips and message boxes): strict UTF-8, which code points must be shown
// escaped rather than passed to a terminal or a text view, and the one rule that escapes them.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace pglock {

// The first code point of `bytes` and the length of its well-formed UTF-8 sequence (RFC 3629: no
// overlong forms, no surrogates, nothing above U+10FFFF). length is 0 when `bytes` is empty or
// does not start with such a sequence (the caller then takes one byte as invalid and goes on).
struct DecodedChar {
    char32_t code_point = 0;
    std::size_t length = 0;
};
DecodedChar decode_utf8(std::string_view bytes) noexcept;

// True when all of `bytes` is well-formed UTF-8 (as decode_utf8 reads it).
bool is_valid_utf8(std::string_view bytes) noexcept;

// Code points a terminal or a text view would act on or hide rather than show: C0/C1 controls,
// DEL, and the invisible format characters that reorder or hide text (bidi overrides, embeddings,
// isolates and marks, zero-width characters, line/paragraph separators, BOM). A name holding
// U+202E would otherwise display reversed. (Go's strconv.Quote escapes these too.)
bool is_hidden_code_point(char32_t cp) noexcept;

// The rule for showing bytes that came from a server (application_name, role, database, schema
// and table names, query text, error messages; a pooler's or a metrics page's text alike):
//   - LF, CR and TAB are written \n, \r and \t; every other C0 control and DEL \xHH (ESC \x1b);
//   - every other hidden code point (C1 controls, bidi, zero-width, ...) \uXXXX: U+009B, the
//     one-character CSI, is \u009b, U+202E \u202e;
//   - each byte that does not begin well-formed UTF-8 \xHH: a lone 0x9b byte (CSI to a terminal
//     that reads bytes) is \x9b;
//   - everything else as is, backslashes too.
// The result is valid UTF-8 without a hidden code point, on one line. Display only: a backslash
// is not escaped, so the text is not reversible (escape_name's list form is), and in exchange
// the rule is idempotent: text escaped where a message is built and again where it is printed
// reads the same.
std::string display_text(std::string_view bytes);

// display_text() appended to `out`, with each ASCII character of `backslashed` also written with
// a backslash before it: the quoted and reversible forms built on the rule (a quoted log value
// backslashes `"` and `\`; a name list line `\`).
void append_display_text(std::string& out, std::string_view bytes, std::string_view backslashed = {});

// display_text(bytes) == bytes: valid UTF-8 without a hidden code point.
bool is_display_safe(std::string_view bytes) noexcept;

// Folds a possibly multi-line message (libpq's end in "\n" and may continue with "\t"-indented
// hints) into one line: whitespace runs that contain a line break become "; " and the ends are
// trimmed.
std::string one_line(std::string_view message);

// An error or status message as one line to show: one_line(), then display_text(). Redact
// secrets before (redact_secrets looks for them as typed).
std::string display_line(std::string_view message);

}  // namespace pglock
