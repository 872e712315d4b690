#include <cstddef>
#include <cstdio>
#include <mutex>
#include <string>
#include <string_view>

#include "pglock/observe.hpp"
#include "pglock/text.hpp"

namespace pglock {

std::string_view outcome_string(Outcome outcome) noexcept {
    switch (outcome) {
        case Outcome::acquired: return "acquired";
        case Outcome::contended: return "contended";
        case Outcome::error: return "error";
    }
    return "error";
}

namespace {

std::string_view level_name(LogLevel level) {
    switch (level) {
        case LogLevel::debug: return "DEBUG";
        case LogLevel::info: return "INFO";
        case LogLevel::warn: return "WARN";
        case LogLevel::error: return "ERROR";
    }
    return "INFO";
}

// One UTF-8 sequence at the front of `s`: its code point and length, or length 0 when the bytes
// are not valid UTF-8 (overlong, surrogate, out of range, cut short).
struct Utf8 {
    char32_t cp;
    std::size_t len;
};
Utf8 decode_utf8(std::string_view s) noexcept {
    const auto b = [&](std::size_t i) { return static_cast<unsigned char>(s[i]); };
    const unsigned char c = b(0);
    std::size_t len = c < 0x80 ? 1 : (c & 0xE0) == 0xC0 ? 2 : (c & 0xF0) == 0xE0 ? 3 : (c & 0xF8) == 0xF0 ? 4 : 0;
    if (len == 0 || len > s.size()) return {0, 0};
    char32_t cp = len == 1 ? c : len == 2 ? (c & 0x1F) : len == 3 ? (c & 0x0F) : (c & 0x07);
    for (std::size_t i = 1; i < len; ++i) {
        if ((b(i) & 0xC0) != 0x80) return {0, 0};
        cp = (cp << 6) | (b(i) & 0x3F);
    }
    static constexpr char32_t min_of_len[] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < min_of_len[len] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return {0, 0};
    return {cp, len};
}

// Escaped in a log line: see pglock/text.hpp (the views of the app use the same set).
bool hidden(char32_t cp) noexcept { return is_hidden_code_point(cp); }

// slog's text handler quotes values with spaces, quotes, '=', control characters or bytes that
// are not valid UTF-8; inside quotes those are escaped (\n, \x.., \u....), so a value is one
// field on one line whatever bytes a lock name holds.
void append_value(std::string& out, std::string_view value) {
    bool plain = !value.empty();
    for (std::size_t i = 0; plain && i < value.size();) {
        const Utf8 u = decode_utf8(value.substr(i));
        if (u.len == 0 || u.cp <= ' ' || u.cp == '"' || u.cp == '=' || hidden(u.cp)) plain = false;
        i += u.len ? u.len : 1;
    }
    if (plain) {
        out += value;
        return;
    }
    out += '"';
    for (std::size_t i = 0; i < value.size();) {
        const Utf8 u = decode_utf8(value.substr(i));
        char buf[16];
        if (u.len == 0) {
            std::snprintf(buf, sizeof buf, "\\x%02x", static_cast<unsigned char>(value[i]));
            out += buf;
            ++i;
            continue;
        }
        if (u.cp == '"' || u.cp == '\\') {
            out += '\\';
            out += static_cast<char>(u.cp);
        } else if (u.cp == '\n') {
            out += "\\n";
        } else if (u.cp < 0x20 || u.cp == 0x7F) {
            std::snprintf(buf, sizeof buf, "\\x%02x", static_cast<unsigned>(u.cp));
            out += buf;
        } else if (hidden(u.cp)) {
            std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(u.cp));
            out += buf;
        } else {
            out.append(value.substr(i, u.len));
        }
        i += u.len;
    }
    out += '"';
}

class StderrLogger final : public Logger {
public:
    explicit StderrLogger(LogLevel min_level) : min_level_(min_level) {}

    bool enabled(LogLevel level) const noexcept override { return level >= min_level_; }

    void log(LogLevel level, std::string_view message, std::span<const LogAttr> attrs) override {
        std::string line = "level=";
        line += level_name(level);
        line += " msg=";
        append_value(line, message);
        for (const LogAttr& attr : attrs) {
            line += ' ';
            line += attr.key;
            line += '=';
            append_value(line, attr.value);
        }
        line += '\n';
        std::lock_guard lock(mutex_);
        std::fwrite(line.data(), 1, line.size(), stderr);
    }

private:
    LogLevel min_level_;
    std::mutex mutex_;
};

}  // namespace

std::shared_ptr<Logger> make_stderr_logger(LogLevel min_level) { return std::make_shared<StderrLogger>(min_level); }

}  // namespace pglock
