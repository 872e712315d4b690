#include "pglock/text.hpp"

namespace pglock {

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

}  // namespace pglock
