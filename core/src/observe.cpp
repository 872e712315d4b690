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

// Escaped in a log line: see pglock/text.hpp (the views of the app use the same set).
bool hidden(char32_t cp) noexcept { return is_hidden_code_point(cp); }

// slog's text handler quotes values with spaces, quotes, '=', control characters or bytes that
// are not valid UTF-8; inside quotes those are escaped (\n, \x.., \u....), so a value is one
// field on one line whatever bytes a lock name holds.
void append_value(std::string& out, std::string_view value) {
    bool plain = !value.empty();
    for (std::size_t i = 0; plain && i < value.size();) {
        const DecodedChar u = decode_utf8(value.substr(i));
        if (u.length == 0 || u.code_point <= ' ' || u.code_point == '"' || u.code_point == '=' || hidden(u.code_point)) plain = false;
        i += u.length ? u.length : 1;
    }
    if (plain) {
        out += value;
        return;
    }
    out += '"';
    for (std::size_t i = 0; i < value.size();) {
        const DecodedChar u = decode_utf8(value.substr(i));
        char buf[16];
        if (u.length == 0) {
            std::snprintf(buf, sizeof buf, "\\x%02x", static_cast<unsigned char>(value[i]));
            out += buf;
            ++i;
            continue;
        }
        if (u.code_point == '"' || u.code_point == '\\') {
            out += '\\';
            out += static_cast<char>(u.code_point);
        } else if (u.code_point == '\n') {
            out += "\\n";
        } else if (u.code_point < 0x20 || u.code_point == 0x7F) {
            std::snprintf(buf, sizeof buf, "\\x%02x", static_cast<unsigned>(u.code_point));
            out += buf;
        } else if (hidden(u.code_point)) {
            std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(u.code_point));
            out += buf;
        } else {
            out.append(value.substr(i, u.length));
        }
        i += u.length;
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
