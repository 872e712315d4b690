// The source scanner's lexer: just enough of each language to know what is code, what is a
// comment and what a string literal holds (decoded with that language's escapes). Numbers and
// character literals are lexed only so that their quotes and digits are not taken for strings.
#pragma once

#include "source_scan/scan_types.hpp"

#include <string>
#include <string_view>
#include <vector>

namespace lockscope::scan {

enum class Kind { ident, str, punct, other };

struct Token {
    Kind kind = Kind::other;
    std::string_view text;  // ident / punct spelling
    std::string value;      // a string literal's decoded bytes
    std::string problem;    // a string literal that could not be decoded, and why
    int line = 0;
};

// The tokens of one file's text. Ident and punct tokens view `text`, which must outlive them.
std::vector<Token> lexSource(std::string_view text, Language language);

}  // namespace lockscope::scan
