#include "pglock/holder_identity.hpp"

namespace pglock::holder_identity {
namespace {

constexpr char kHex[] = "0123456789ABCDEF";

int hex_value(char c) noexcept {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;
}

bool plain(unsigned char c) noexcept { return c > ' ' && c < 0x7f && c != '%'; }

// The escaped byte at s[i] ("%XX"), or -1 when there is none.
int escaped_byte(std::string_view s, std::size_t i) noexcept {
    if (i + 3 > s.size() || s[i] != '%') return -1;
    const int hi = hex_value(s[i + 1]), lo = hex_value(s[i + 2]);
    return hi < 0 || lo < 0 ? -1 : hi * 16 + lo;
}

bool continuation(int byte) noexcept { return (byte & 0xc0) == 0x80; }

// The longest prefix of an escaped name that fits in `limit` bytes and ends at a character
// boundary: an escaped UTF-8 sequence (lead byte and its continuation bytes) is kept whole.
std::string_view cut_escaped(std::string_view s, std::size_t limit) noexcept {
    std::size_t i = 0;
    while (i < s.size()) {
        std::size_t next = i + 1;
        if (const int byte = escaped_byte(s, i); byte >= 0) {
            next = i + 3;
            while (continuation(escaped_byte(s, next))) next += 3;
        }
        if (next > limit) break;
        i = next;
    }
    return s.substr(0, i);
}

// The longest prefix of plain text that fits in `limit` bytes without splitting a UTF-8 sequence.
std::string_view cut_utf8(std::string_view s, std::size_t limit) noexcept {
    if (s.size() <= limit) return s;
    std::size_t end = limit;
    while (end > 0 && continuation(static_cast<unsigned char>(s[end]))) --end;
    return s.substr(0, end);
}

std::string expand(std::string_view format, std::string_view app, std::string_view lock) {
    std::string out;
    out.reserve(format.size() + app.size() + lock.size());
    bool lock_done = false;
    for (std::size_t i = 0; i < format.size();) {
        if (format.substr(i, 5) == "{app}") {
            out += app;
            i += 5;
        } else if (!lock_done && format.substr(i, 6) == "{lock}") {
            out += lock;
            lock_done = true;  // one token per name: a second {lock} stays literal
            i += 6;
        } else {
            out += format[i++];
        }
    }
    return out;
}

std::string trimmed(std::string s) {
    const auto first = s.find_first_not_of(' ');
    if (first == std::string::npos) return {};
    s.erase(s.find_last_not_of(' ') + 1);
    s.erase(0, first);
    return s;
}

}  // namespace

std::string escape(std::string_view name) {
    std::string out;
    out.reserve(name.size());
    for (const char ch : name) {
        const auto c = static_cast<unsigned char>(ch);
        if (plain(c)) {
            out += ch;
        } else {
            out += '%';
            out += kHex[c >> 4];
            out += kHex[c & 0xf];
        }
    }
    return out;
}

std::string application_name(std::string_view format, std::string_view app, std::string_view name) {
    std::string lock(tag);
    lock += escape(name);
    if (format.find("{lock}") == std::string_view::npos) {
        return std::string(cut_utf8(trimmed(expand(format, app, lock)), max_bytes));
    }
    // Measured without {app}: the literal text of the format plus the lock part.
    const std::string without_app = expand(format, "", lock);
    if (without_app.size() <= max_bytes) {
        // Trimming can only shorten the result, so the cut app always fits.
        return trimmed(expand(format, cut_utf8(app, max_bytes - without_app.size()), lock));
    }
    // Even without {app} the name does not fit: cut it and mark the cut with a bare '%'.
    const std::size_t fixed = without_app.size() - lock.size();
    const std::size_t room = fixed + tag.size() + 1 < max_bytes ? max_bytes - fixed - 1 : 0;
    if (room <= tag.size()) return std::string(cut_utf8(trimmed(without_app), max_bytes));  // a format of mostly text
    std::string cut(tag);
    cut += cut_escaped(std::string_view(lock).substr(tag.size()), room - tag.size());
    cut += '%';
    return std::string(cut_utf8(trimmed(expand(format, "", cut)), max_bytes));
}

std::vector<Mention> mentions(std::string_view application_name) {
    std::vector<Mention> out;
    std::size_t at = 0;
    while ((at = application_name.find(tag, at)) != std::string_view::npos) {
        const bool starts_token = at == 0 || application_name[at - 1] == ' ';
        const std::size_t begin = at + tag.size();
        std::size_t end = application_name.find(' ', begin);
        if (end == std::string_view::npos) end = application_name.size();
        at = end;
        if (!starts_token || end == begin) continue;
        const std::string_view token = application_name.substr(begin, end - begin);
        Mention m;
        bool valid = true;
        for (std::size_t i = 0; i < token.size();) {
            if (token[i] != '%') {
                m.name += token[i++];
                continue;
            }
            if (const int byte = escaped_byte(token, i); byte >= 0) {
                m.name += static_cast<char>(byte);
                i += 3;
            } else if (token.size() - i <= 2) {
                // The cut marker (a bare '%'), or an escape some later cut split: a prefix.
                m.complete = false;
                break;
            } else {
                valid = false;  // not something this library wrote
                break;
            }
        }
        if (valid && !m.name.empty()) out.push_back(std::move(m));
    }
    return out;
}

}  // namespace pglock::holder_identity
