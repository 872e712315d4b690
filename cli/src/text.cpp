#include "pglock_cli/text.hpp"

#include <cstdint>

namespace pglock::cli {

namespace {

// Length of the valid UTF-8 sequence at the start of s, or 0 when it is not one; the caller
// then takes that one byte as invalid and goes on with the next.
std::size_t utf8_sequence(std::string_view s) noexcept {
    const auto b = [&](std::size_t i) { return static_cast<unsigned char>(s[i]); };
    const unsigned char c = b(0);
    if (c < 0x80) return 1;
    std::size_t len = 0;
    unsigned char lo = 0x80, hi = 0xBF;  // allowed range of the second byte
    if (c >= 0xC2 && c <= 0xDF) {
        len = 2;
    } else if (c >= 0xE0 && c <= 0xEF) {
        len = 3;
        if (c == 0xE0) lo = 0xA0;          // overlong
        if (c == 0xED) hi = 0x9F;          // UTF-16 surrogates
    } else if (c >= 0xF0 && c <= 0xF4) {
        len = 4;
        if (c == 0xF0) lo = 0x90;          // overlong
        if (c == 0xF4) hi = 0x8F;          // above U+10FFFF
    } else {
        return 0;                          // continuation byte, C0/C1 overlong lead, F5..FF
    }
    if (s.size() < len) return 0;
    if (b(1) < lo || b(1) > hi) return 0;
    for (std::size_t i = 2; i < len; ++i)
        if (b(i) < 0x80 || b(i) > 0xBF) return 0;
    return len;
}

constexpr char hex_digits[] = "0123456789abcdef";

}  // namespace

bool is_valid_utf8(std::string_view bytes) noexcept {
    while (!bytes.empty()) {
        const std::size_t n = utf8_sequence(bytes);
        if (n == 0) return false;
        bytes.remove_prefix(n);
    }
    return true;
}

std::string json_quote(std::string_view bytes) {
    std::string out;
    out.reserve(bytes.size() + 2);
    out += '"';
    while (!bytes.empty()) {
        const std::size_t n = utf8_sequence(bytes);
        if (n == 0) {
            out += "\\ufffd";
            bytes.remove_prefix(1);
            continue;
        }
        if (n == 1) {
            const auto c = static_cast<unsigned char>(bytes[0]);
            if (c == '"' || c == '\\') {
                out += '\\';
                out += static_cast<char>(c);
            } else if (c < 0x20 || c == 0x7F) {
                out += "\\u00";
                out += hex_digits[c >> 4];
                out += hex_digits[c & 0xF];
            } else {
                out += static_cast<char>(c);
            }
        } else {
            out.append(bytes.substr(0, n));
        }
        bytes.remove_prefix(n);
    }
    out += '"';
    return out;
}

std::string hex_bytes(std::string_view bytes) {
    std::string out;
    out.reserve(bytes.size() * 2);
    for (char ch : bytes) {
        const auto c = static_cast<unsigned char>(ch);
        out += hex_digits[c >> 4];
        out += hex_digits[c & 0xF];
    }
    return out;
}

std::string tsv_escape(std::string_view bytes) {
    std::string out;
    out.reserve(bytes.size());
    for (char c : bytes) {
        switch (c) {
            case '\\': out += "\\\\"; break;
            case '\t': out += "\\t"; break;
            case '\n': out += "\\n"; break;
            case '\r': out += "\\r"; break;
            default: out += c;
        }
    }
    return out;
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

}  // namespace pglock::cli
