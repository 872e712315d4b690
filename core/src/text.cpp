#include "pglock/text.hpp"

namespace pglock {

namespace {

constexpr char hex_digits[] = "0123456789abcdef";

void append_hex_byte(std::string& out, unsigned char c) {
    out += "\\x";
    out += hex_digits[c >> 4];
    out += hex_digits[c & 0xF];
}

// Every hidden code point is in the Basic Multilingual Plane: four digits are enough.
void append_code_point(std::string& out, char32_t cp) {
    out += "\\u";
    for (int shift = 12; shift >= 0; shift -= 4) out += hex_digits[(cp >> shift) & 0xF];
}

}  // namespace

DecodedChar decode_utf8(std::string_view s) noexcept {
    if (s.empty()) return {};
    const auto b = [&](std::size_t i) { return static_cast<unsigned char>(s[i]); };
    const unsigned char c = b(0);
    if (c < 0x80) return {c, 1};
    std::size_t len = 0;
    unsigned char lo = 0x80, hi = 0xBF;  // allowed range of the second byte
    if (c >= 0xC2 && c <= 0xDF) {
        len = 2;
    } else if (c >= 0xE0 && c <= 0xEF) {
        len = 3;
        if (c == 0xE0) lo = 0xA0;  // overlong
        if (c == 0xED) hi = 0x9F;  // UTF-16 surrogates
    } else if (c >= 0xF0 && c <= 0xF4) {
        len = 4;
        if (c == 0xF0) lo = 0x90;  // overlong
        if (c == 0xF4) hi = 0x8F;  // above U+10FFFF
    } else {
        return {};  // continuation byte, C0/C1 overlong lead, F5..FF
    }
    if (s.size() < len || b(1) < lo || b(1) > hi) return {};
    for (std::size_t i = 2; i < len; ++i)
        if (b(i) < 0x80 || b(i) > 0xBF) return {};
    char32_t cp = c & (0xFF >> (len + 1));
    for (std::size_t i = 1; i < len; ++i) cp = (cp << 6) | (b(i) & 0x3F);
    return {cp, len};
}

bool is_valid_utf8(std::string_view bytes) noexcept {
    while (!bytes.empty()) {
        const std::size_t n = decode_utf8(bytes).length;
        if (n == 0) return false;
        bytes.remove_prefix(n);
    }
    return true;
}

bool is_hidden_code_point(char32_t cp) noexcept {
    return cp < 0x20 || (cp >= 0x7F && cp <= 0x9F) || cp == 0x061C || (cp >= 0x200B && cp <= 0x200F) ||
           (cp >= 0x2028 && cp <= 0x202E) || (cp >= 0x2060 && cp <= 0x2069) || cp == 0xFEFF;
}

void append_display_text(std::string& out, std::string_view s, std::string_view backslashed) {
    out.reserve(out.size() + s.size());
    std::size_t i = 0, run = 0;  // s[run, i) is still to be copied as is
    const auto flush = [&] { out.append(s.substr(run, i - run)); };
    while (i < s.size()) {
        const auto c = static_cast<unsigned char>(s[i]);
        if (c >= 0x20 && c < 0x7F) {
            if (backslashed.find(static_cast<char>(c)) != std::string_view::npos) {
                flush();
                out += '\\';
                out += static_cast<char>(c);
                run = i + 1;
            }
            ++i;
            continue;
        }
        if (c >= 0x80) {
            const DecodedChar d = decode_utf8(s.substr(i));
            if (d.length != 0 && !is_hidden_code_point(d.code_point)) {
                i += d.length;
                continue;
            }
            flush();
            if (d.length == 0) append_hex_byte(out, c);
            else append_code_point(out, d.code_point);
            i += d.length ? d.length : 1;
            run = i;
            continue;
        }
        flush();
        switch (c) {
            case '\n': out += "\\n"; break;
            case '\r': out += "\\r"; break;
            case '\t': out += "\\t"; break;
            default: append_hex_byte(out, c);  // the other C0 controls and DEL: ESC is \x1b
        }
        run = ++i;
    }
    flush();
}

std::string display_text(std::string_view bytes) {
    if (is_display_safe(bytes)) return std::string(bytes);
    std::string out;
    append_display_text(out, bytes);
    return out;
}

bool is_display_safe(std::string_view bytes) noexcept {
    while (!bytes.empty()) {
        const DecodedChar d = decode_utf8(bytes);
        if (d.length == 0 || is_hidden_code_point(d.code_point)) return false;
        bytes.remove_prefix(d.length);
    }
    return true;
}

std::string one_line(std::string_view message) {
    std::string out;
    bool pending_space = false, pending_break = false;
    for (char c : message) {
        if (c == '\n' || c == '\r') {
            pending_break = true;
        } else if (c == ' ' || c == '\t') {
            pending_space = true;
        } else {
            if (!out.empty()) {
                if (pending_break) out += "; ";
                else if (pending_space) out += ' ';
            }
            pending_space = pending_break = false;
            out += c;
        }
    }
    return out;
}

std::string display_line(std::string_view message) { return display_text(one_line(message)); }

}  // namespace pglock
