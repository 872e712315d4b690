// Text lists of lock names: the format lockscope's catalog exports and imports and
// `pglock status --catalog FILE` reads. One implementation, so that a name exported by one front
// end is the same name, and the same key, in the other.
//
// The format, one name per line:
//   - a line is split at "\n"; one trailing "\r" is dropped (CRLF files work); a UTF-8 BOM at the
//     very start is dropped;
//   - leading and trailing spaces and tabs are trimmed; blank lines are ignored;
//   - a line whose first non-blank character is '#' is a comment (only whole lines: '#' inside a
//     name is part of the name);
//   - backslash escapes: \\  \n  \r  \t, \xHH (exactly two hex digits) for any byte and \uXXXX
//     (four hex digits, not a surrogate) for a code point. Any other escape makes the line
//     unusable: it is skipped with a reason rather than guessed at;
//   - the raw line must be valid UTF-8; a line that is not (say a Latin-1 file) is skipped,
//     because hashing those bytes would give a key the service never uses. Bytes that really are
//     not UTF-8 are written as \xHH.
// escape_name writes every name so that parsing gives back exactly the same bytes: \, newline,
// CR, tab, other control bytes, bytes that are not UTF-8, a leading '#', a leading U+FEFF (it
// reads as a BOM) and leading/trailing spaces are escaped, and so are the code points a view would
// obey instead of showing (is_hidden_code_point, as \uXXXX); everything else is written as is.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace pglock {

// The largest list either front end reads: a file beyond it is refused, not read in part.
inline constexpr std::size_t max_name_list_bytes = 16 * 1024 * 1024;

struct ListedName {
    std::string name;  // never empty
    int line = 0;      // 1-based
};

struct SkippedLine {
    int line = 0;        // 1-based
    std::string reason;  // e.g. "not valid UTF-8 text (write raw bytes as \xHH)"
};

struct NameList {
    std::vector<ListedName> names;
    std::vector<SkippedLine> skipped;
};

// Parses list content (a file's bytes). It does not refuse binary content: the callers decide
// that on the whole file (a NUL byte, which no text list has).
NameList parse_name_list(std::string_view content);

// "line 3: unknown escape \q; the escapes are ...; skipped": one skipped line, for a warning.
std::string describe(const SkippedLine& skipped);

// One name as one line of the list (no line terminator): valid UTF-8 without CR, LF or NUL.
std::string escape_name(std::string_view name);

// A name as the front ends show it: exactly its escape_name() line, so control bytes and invalid
// UTF-8 are visible, two different names never look the same, and the text can be copied back.
inline std::string printable_name(std::string_view name) { return escape_name(name); }

// The inverse of escape_name for one already-trimmed line; nullopt with *why set for an unknown
// or cut escape.
std::optional<std::string> unescape_name(std::string_view line, std::string* why = nullptr);

}  // namespace pglock
