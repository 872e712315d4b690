// The source scanner's lexer and call matcher (ui/source_scan/, scanText): any file
// content, read as each of the five languages. Properties, from source_scanner.hpp's contract:
//   - a found name is never empty (the library rejects empty names; the scanner reports them);
//   - every reported line (names and problems) is a line of the file: 1 .. number of '\n' + 1.
//     Lines end at '\n' only, as everywhere else in the app, so a lone CR never starts one;
//   - lines are counted, not guessed: a newline put before the text moves every report down by
//     exactly one line and changes nothing else.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz_check.hpp"
#include "source_scan/source_scanner.hpp"

namespace scan = lockscope::scan;

namespace {

void check_lines(const std::vector<scan::Literal>& found, int lines) {
    for (const scan::Literal& l : found) FUZZ_CHECK(l.line >= 1 && l.line <= lines, "a reported line is a line of the file");
}

void check_shifted(const std::vector<scan::Literal>& a, const std::vector<scan::Literal>& shifted) {
    FUZZ_CHECK(a.size() == shifted.size(), "a leading newline finds the same names and problems");
    for (std::size_t i = 0; i < a.size(); ++i)
        FUZZ_CHECK(shifted[i].name == a[i].name && shifted[i].line == a[i].line + 1,
                   "a leading newline moves every report down by exactly one line");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    int lines = 1;
    for (char c : text) lines += c == '\n';
    const std::string shifted_text = "\n" + std::string(text);

    for (scan::Language lang : {scan::Language::go, scan::Language::cpp, scan::Language::c_like, scan::Language::js,
                                scan::Language::hash}) {
        const scan::TextScan found = scan::scanText(text, lang);
        for (const scan::Literal& name : found.names) FUZZ_CHECK(!name.name.empty(), "a found name is never empty");
        for (const scan::Literal& problem : found.problems) FUZZ_CHECK(!problem.name.empty(), "a problem says what it is");
        check_lines(found.names, lines);
        check_lines(found.problems, lines);

        const scan::TextScan shifted = scan::scanText(shifted_text, lang);
        check_shifted(found.names, shifted.names);
        check_shifted(found.problems, shifted.problems);
    }
    return 0;
}
