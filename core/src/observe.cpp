#include <cstddef>
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

// slog's text handler quotes values with spaces, quotes, '=', control characters or bytes that
// are not valid UTF-8. Inside quotes the one rule for server text (pglock/text.hpp) escapes them,
// with `"` and `\` backslashed too, so a value is one field on one line whatever bytes a lock
// name or a server's error message holds.
void append_value(std::string& out, std::string_view value) {
    const bool plain = !value.empty() && is_display_safe(value) &&
                       value.find_first_of(" \"=") == std::string_view::npos;
    if (plain) {
        out += value;
        return;
    }
    out += '"';
    append_display_text(out, value, "\"\\");
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
