// The source scanner's plain types, shared by its lexer, its call matcher and its tree walk.
// Qt-free: the fuzz target links the lexer and matcher alone.
#pragma once

#include <string>
#include <vector>

namespace lockscope::scan {

// The lexical families the scanner reads. Only Go and C++ have calls of this library or of
// gokit/db/lock to match; the others are lexed (comments and strings told apart from code) so that
// wrappers mirroring those call shapes are found too.
enum class Language {
    go,      // .go
    cpp,     // .cpp .cc .cxx .hpp .h .c
    c_like,  // .rs .java .kt .cs: // and /* */ comments, "..." strings, '.' characters
    js,      // .ts .js: also '...' and `...` strings
    hash,    // .py .rb: # comments, "..." and '...' strings
};

struct Literal {
    std::string name;  // decoded bytes
    int line = 0;      // 1-based line of the (first) literal
};
struct TextScan {
    std::vector<Literal> names;
    std::vector<Literal> problems;  // `name` holds the message: a dynamic name, a bad escape, ...
};

}  // namespace lockscope::scan
