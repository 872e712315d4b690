#include "pglock_cli/duration.hpp"

#include <cmath>
#include <cstdint>
#include <limits>

namespace pglock::cli {

namespace {

// Nanoseconds per unit; longest spellings first so "ms" is not read as "m" + garbage.
struct Unit {
    std::string_view name;
    long double ns;
};
constexpr Unit units[] = {
    {"us", 1e3L}, {"ms", 1e6L}, {"h", 3600e9L}, {"m", 60e9L}, {"s", 1e9L},
};

// The value in nanoseconds, unbounded; nullopt when the text is not a duration.
std::optional<long double> parse_ns(std::string_view text) {
    if (text == "0") return 0.0L;
    if (text.empty()) return std::nullopt;
    long double total = 0;
    std::size_t i = 0;
    while (i < text.size()) {
        // number: digits, optionally "." and more digits; at least one digit somewhere
        long double value = 0;
        bool digits = false;
        while (i < text.size() && text[i] >= '0' && text[i] <= '9') {
            value = value * 10 + (text[i++] - '0');
            digits = true;
        }
        if (i < text.size() && text[i] == '.') {
            ++i;
            long double scale = 0.1L;
            while (i < text.size() && text[i] >= '0' && text[i] <= '9') {
                value += scale * (text[i++] - '0');
                scale /= 10;
                digits = true;
            }
        }
        if (!digits) return std::nullopt;
        const Unit* unit = nullptr;
        for (const Unit& u : units) {
            if (text.substr(i, u.name.size()) == u.name) {
                unit = &u;
                break;
            }
        }
        if (!unit) return std::nullopt;  // missing or unknown unit
        i += unit->name.size();
        total += value * unit->ns;
    }
    return total;
}

constexpr long double max_ns = static_cast<long double>(std::chrono::nanoseconds(max_duration).count());

}  // namespace

std::optional<std::chrono::nanoseconds> parse_duration(std::string_view text) {
    const auto ns = parse_ns(text);
    if (!ns || *ns > max_ns) return std::nullopt;
    return std::chrono::nanoseconds{static_cast<std::int64_t>(std::llround(*ns))};
}

std::string duration_error(std::string_view text) {
    const auto ns = parse_ns(text);
    if (!ns) return "not a duration (examples: 500ms, 30s, 5m, 1h): " + std::string(text);
    if (*ns > max_ns) return "out of range (at most 8760h, 365 days): " + std::string(text);
    return {};
}

}  // namespace pglock::cli
