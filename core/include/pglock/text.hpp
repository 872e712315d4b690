// Text safety shared by every front end (the CLI's logs and fields, the app's views): strict UTF-8,
// and which code points must be shown escaped rather than passed to a terminal or a text view.
#pragma once

#include <cstddef>
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

}  // namespace pglock
