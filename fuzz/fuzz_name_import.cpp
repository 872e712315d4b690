// The name-list format (core's pglock/name_list.hpp), which lockscope's catalog imports and
// exports and `pglock status --catalog` reads. The input is read twice: as the content of a list
// file, and as one raw name (any bytes are a valid name). Properties, from name_list.hpp's
// contract:
//   - the parser never yields more names than the content has lines; lines are 1-based,
//     increasing and within the content; every skipped line has its line and reason; no name is
//     empty;
//   - export then import gives back exactly the same names (escape_name is the inverse of the
//     parser), for a single name and for the whole parsed list written one per line as the
//     catalog's export does;
//   - an exported line is valid UTF-8 with no line break, CR or NUL, and printable_name() shows
//     exactly that line, so two different names never look the same;
//   - the display rule the line is built on (pglock/text.hpp) gives valid UTF-8 without a hidden
//     code point, and applied again gives the same text.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz_check.hpp"
#include "pglock/name_list.hpp"
#include "pglock/text.hpp"

namespace {

void check_exported_line(const std::string& name) {
    const std::string line = pglock::escape_name(name);
    FUZZ_CHECK(pglock::is_valid_utf8(line), "an exported line is valid UTF-8");
    FUZZ_CHECK(line.find_first_of(std::string_view("\n\r\0", 3)) == std::string::npos,
               "an exported line has no line break, CR or NUL");
    FUZZ_CHECK(pglock::printable_name(name) == line, "printable_name() shows exactly the exported line");
    const std::optional<std::string> back = pglock::unescape_name(line);
    FUZZ_CHECK(back && *back == name, "unescape_name(escape_name(name)) == name");
    // The file the catalog exports holding just this name, read back by the parser.
    const pglock::NameList imported = pglock::parse_name_list(line + '\n');
    FUZZ_CHECK(imported.skipped.empty(), "an exported name is never skipped on import");
    if (name.empty()) {
        FUZZ_CHECK(imported.names.empty(), "an empty name is a blank line");
        return;
    }
    FUZZ_CHECK(imported.names.size() == 1 && imported.names[0].name == name,
               "a name exported alone imports as exactly that name");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string content(reinterpret_cast<const char*>(data), size);

    const pglock::NameList list = pglock::parse_name_list(content);
    const auto newlines = static_cast<std::size_t>(std::count(content.begin(), content.end(), '\n'));
    const std::size_t lines = content.empty() ? 0 : newlines + (content.back() == '\n' ? 0 : 1);
    FUZZ_CHECK(list.names.size() + list.skipped.size() <= lines, "never more names (and skipped lines) than lines");
    int previous = 0;
    for (const pglock::SkippedLine& s : list.skipped) {
        FUZZ_CHECK(s.line > 0 && static_cast<std::size_t>(s.line) <= lines && !s.reason.empty(),
                   "a skipped line is a line of the content, with a reason");
    }
    for (const pglock::ListedName& n : list.names) {
        FUZZ_CHECK(n.line > previous && static_cast<std::size_t>(n.line) <= lines,
                   "name lines are increasing and within the content");
        FUZZ_CHECK(!n.name.empty(), "an imported name is never empty");
        previous = n.line;
    }

    // Export everything imported (one escaped name per line) and import that again.
    std::string exported;
    for (const pglock::ListedName& n : list.names) {
        check_exported_line(n.name);
        exported += pglock::escape_name(n.name);
        exported += '\n';
    }
    const pglock::NameList again = pglock::parse_name_list(exported);
    FUZZ_CHECK(again.skipped.empty() && again.names.size() == list.names.size(), "re-import keeps every name");
    for (std::size_t i = 0; i < again.names.size(); ++i)
        FUZZ_CHECK(again.names[i].name == list.names[i].name && again.names[i].line == static_cast<int>(i + 1),
                   "re-import gives the same names in the same order, one per line");

    // The input as one name, and as text a server sent.
    check_exported_line(content);
    const std::string shown = pglock::display_text(content);
    FUZZ_CHECK(pglock::is_valid_utf8(shown), "display_text() is valid UTF-8");
    for (std::string_view rest = shown; !rest.empty();) {
        const pglock::DecodedChar d = pglock::decode_utf8(rest);
        FUZZ_CHECK(!pglock::is_hidden_code_point(d.code_point), "display_text() shows no hidden code point");
        rest.remove_prefix(d.length);
    }
    FUZZ_CHECK(pglock::display_text(shown) == shown, "display_text() is idempotent");
    return 0;
}
