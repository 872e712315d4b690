#include "pglock/name_list.hpp"

#include "pglock/text.hpp"

namespace pglock {
namespace {

constexpr std::string_view bom = "\xEF\xBB\xBF";

int hex_value(char c) noexcept {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

bool is_blank(char c) noexcept { return c == ' ' || c == '\t'; }

std::string_view trim_blanks(std::string_view s) noexcept {
    while (!s.empty() && is_blank(s.front())) s.remove_prefix(1);
    while (!s.empty() && is_blank(s.back())) s.remove_suffix(1);
    return s;
}

// A code point of the Basic Multilingual Plane (no surrogate) as UTF-8.
void append_utf8(std::string& out, char32_t cp) {
    if (cp < 0x80) {
        out += static_cast<char>(cp);
    } else if (cp < 0x800) {
        out += static_cast<char>(0xC0 | (cp >> 6));
        out += static_cast<char>(0x80 | (cp & 0x3F));
    } else {
        out += static_cast<char>(0xE0 | (cp >> 12));
        out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
        out += static_cast<char>(0x80 | (cp & 0x3F));
    }
}

}  // namespace

std::string escape_name(std::string_view name) {
    const std::size_t n = name.size();
    // Spaces at either end would be trimmed on import, so those (and only those) are escaped.
    std::size_t lead = 0, trail = n;
    while (lead < n && name[lead] == ' ') ++lead;
    while (trail > lead && name[trail - 1] == ' ') --trail;

    std::string out;
    out.reserve(n + 8);
    for (std::size_t i = 0; i < lead; ++i) out += "\\x20";
    std::string_view middle = name.substr(lead, trail - lead);
    if (lead == 0 && middle.starts_with(bom)) {
        // A leading U+FEFF reads as a byte order mark: the parser drops it from the first line of
        // a file (and Qt's fromUtf8 from the start of every text), so kept as is it would vanish
        // on import and in printable_name(). Escaped, it survives.
        out += "\\xef\\xbb\\xbf";
        middle.remove_prefix(bom.size());
    } else if (lead == 0 && middle.starts_with('#')) {
        out += "\\x23";  // a comment-looking start
        middle.remove_prefix(1);
    }
    // The rest as every front end shows server text (pglock/text.hpp), with `\` escaped too so
    // that the parser gives back the same bytes: a bidi override, zero-width or C1 character as
    // \uXXXX, control bytes and bytes that are not UTF-8 as \xHH, so that the exported line and
    // printable_name() are one and the same text.
    append_display_text(out, middle, "\\");
    for (std::size_t i = trail; i < n; ++i) out += "\\x20";
    return out;
}

std::optional<std::string> unescape_name(std::string_view line, std::string* why) {
    const auto refuse = [&](std::string reason) -> std::optional<std::string> {
        if (why) *why = std::move(reason);
        return std::nullopt;
    };
    std::string out;
    out.reserve(line.size());
    for (std::size_t i = 0; i < line.size(); ++i) {
        const char c = line[i];
        if (c != '\\') {
            out += c;
            continue;
        }
        if (i + 1 >= line.size()) return refuse("a lone backslash at the end; write a backslash as \\\\");
        const char e = line[++i];
        switch (e) {
            case '\\': out += '\\'; break;
            case 'n': out += '\n'; break;
            case 'r': out += '\r'; break;
            case 't': out += '\t'; break;
            case 'u': {
                // \uXXXX: what escape_name writes for a code point a view would obey.
                char32_t cp = 0;
                bool ok = i + 4 < line.size();
                for (std::size_t k = 1; ok && k <= 4; ++k) {
                    const int v = hex_value(line[i + k]);
                    ok = v >= 0;
                    cp = cp * 16 + static_cast<char32_t>(ok ? v : 0);
                }
                if (!ok || (cp >= 0xD800 && cp <= 0xDFFF))
                    return refuse("\\u needs exactly four hex digits (not a surrogate)");
                append_utf8(out, cp);
                i += 4;
                break;
            }
            case 'x': {
                const int hi = i + 1 < line.size() ? hex_value(line[i + 1]) : -1;
                const int lo = i + 2 < line.size() ? hex_value(line[i + 2]) : -1;
                if (hi < 0 || lo < 0) return refuse("\\x needs exactly two hex digits");
                out += static_cast<char>(hi * 16 + lo);
                i += 2;
                break;
            }
            default:
                return refuse("unknown escape \\" + std::string(1, e) +
                              "; the escapes are \\\\ \\n \\r \\t \\xHH \\uXXXX");
        }
    }
    return out;
}

NameList parse_name_list(std::string_view content) {
    NameList list;
    if (content.substr(0, bom.size()) == bom) content.remove_prefix(bom.size());  // a BOM is not part of a name
    int line_no = 0;
    while (!content.empty()) {
        ++line_no;
        const std::size_t nl = content.find('\n');
        std::string_view line = content.substr(0, nl);
        content.remove_prefix(nl == std::string_view::npos ? content.size() : nl + 1);
        if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
        line = trim_blanks(line);
        if (line.empty() || line.front() == '#') continue;
        if (!is_valid_utf8(line)) {
            list.skipped.push_back({line_no, "not valid UTF-8 text (write raw bytes as \\xHH)"});
            continue;
        }
        std::string why;
        std::optional<std::string> name = unescape_name(line, &why);
        if (!name) {
            list.skipped.push_back({line_no, std::move(why)});
            continue;
        }
        list.names.push_back({std::move(*name), line_no});
    }
    return list;
}

std::string describe(const SkippedLine& skipped) {
    return "line " + std::to_string(skipped.line) + ": " + skipped.reason + "; skipped";
}

}  // namespace pglock
