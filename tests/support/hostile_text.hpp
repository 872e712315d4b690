// Text an attacker puts wherever a server lets it choose the bytes (role, database, schema and
// table names, application_name, query text, error messages), what the one display rule must
// make of it, and a check of output for anything a terminal or a text view would still act on.
// The expected forms are written out here, not computed by the code under test.
#pragma once

#include <string>
#include <string_view>

namespace pglock::test::hostile {

// Valid UTF-8: a screen clear and a window-title change (ESC ... BEL), the one-character CSI and
// a NEL of the C1 controls (U+009B, U+0085), a right-to-left override (U+202E) and a newline.
inline constexpr std::string_view utf8 =
    "ev\x1b[2J\x1b]0;owned\x07|\xc2\x9b"
    "31m\xc2\x85|\xe2\x80\xae"
    "exe.|\n|";
// Not UTF-8 (a SQL_ASCII database checks no encoding): a lone 0x9b byte, CSI to a terminal that
// reads bytes, and 0xff, which begins no character at all.
inline constexpr std::string_view raw =
    "\x9b"
    "7m\xff";

// pglock::display_text of them: how prose, labels, cells and messages show them.
inline constexpr std::string_view shown_utf8 = R"(ev\x1b[2J\x1b]0;owned\x07|\u009b31m\u0085|\u202eexe.|\n|)";
inline constexpr std::string_view shown_raw = R"(\x9b7m\xff)";
// Inside a JSON string (the CLI's --json and its quoted key=value fields).
inline constexpr std::string_view json_utf8 = R"(ev\u001b[2J\u001b]0;owned\u0007|\u009b31m\u0085|\u202eexe.|\u000a|)";
inline constexpr std::string_view json_raw = R"(\ufffd7m\ufffd)";

inline std::string with_raw(std::string_view prefix) { return std::string(prefix) + std::string(utf8) + std::string(raw); }

// Code points a terminal or a text view obeys or hides instead of showing, written out again
// here so that the check does not lean on the code it checks.
inline bool live(char32_t cp, bool newline_ok) {
    if (cp == '\n') return !newline_ok;
    return cp < 0x20 || (cp >= 0x7F && cp <= 0x9F) || cp == 0x061C || (cp >= 0x200B && cp <= 0x200F) ||
           (cp >= 0x2028 && cp <= 0x202E) || (cp >= 0x2060 && cp <= 0x2069) || cp == 0xFEFF;
}

// Printable ASCII as is, every other byte as <HH>: for failure messages, which must not carry
// the bytes they complain about.
inline std::string inert(std::string_view bytes) {
    static constexpr char digits[] = "0123456789abcdef";
    std::string out;
    for (const char ch : bytes) {
        const auto c = static_cast<unsigned char>(ch);
        if (c >= 0x20 && c < 0x7F) {
            out += ch;
        } else {
            out += '<';
            out += digits[c >> 4];
            out += digits[c & 0xF];
            out += '>';
        }
    }
    return out;
}

// "" when `bytes` is valid UTF-8 without a live code point (line breaks allowed when
// `newline_ok`: output made of lines), else what was found first and where.
inline std::string first_live(std::string_view bytes, bool newline_ok = true) {
    for (std::size_t i = 0; i < bytes.size();) {
        const auto c = static_cast<unsigned char>(bytes[i]);
        const std::size_t len = c < 0x80 ? 1 : (c & 0xE0) == 0xC0 ? 2 : (c & 0xF0) == 0xE0 ? 3 : (c & 0xF8) == 0xF0 ? 4 : 0;
        char32_t cp = len == 1 ? c : len == 2 ? (c & 0x1F) : len == 3 ? (c & 0x0F) : (c & 0x07);
        bool ok = len != 0 && i + len <= bytes.size() && c != 0xC0 && c != 0xC1 && c <= 0xF4;
        for (std::size_t k = 1; ok && k < len; ++k) {
            const auto b = static_cast<unsigned char>(bytes[i + k]);
            ok = (b & 0xC0) == 0x80;
            cp = (cp << 6) | (b & 0x3F);
        }
        if (!ok || live(cp, newline_ok)) {
            const std::size_t from = i > 40 ? i - 40 : 0;
            return std::string(ok ? "a live code point" : "a byte that is not UTF-8") + " at byte " + std::to_string(i) +
                   ": ..." + inert(bytes.substr(from, 80)) + "...";
        }
        i += len;
    }
    return {};
}

}  // namespace pglock::test::hostile
