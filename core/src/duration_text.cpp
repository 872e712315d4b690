#include "pglock/duration_text.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>

namespace pglock {
namespace {

// Two units, the second left out when zero: "3m5s", "1m".
std::string two_units(std::int64_t big, const char* big_unit, std::int64_t small, const char* small_unit) {
    std::string out = std::to_string(big) + big_unit;
    if (small != 0) out += std::to_string(small) + small_unit;
    return out;
}

}  // namespace

std::string duration_text(double seconds) {
    if (!(seconds > 0)) return "0ms";  // negative, zero or NaN
    // Each form is taken by the value rounded to its own precision, so 59.96 s is "1m", not
    // "60.0s", and 999.6 ms is "1s".
    if (const auto ms = std::llround(seconds * 1e3); ms < 1000) return std::to_string(ms) + "ms";
    if (const auto tenths = std::llround(seconds * 10); tenths < 600) {
        std::string out = std::to_string(tenths / 10);
        if (tenths % 10 != 0) out += "." + std::to_string(tenths % 10);
        return out + "s";
    }
    // From a minute on, whole seconds as a clock reads them (185.5 s is 3m5s); at least 60, since
    // 59.96 s was rounded up to here above.
    constexpr double longest = 1e15;  // about 31 million years: beyond it the integer math overflows
    const auto s = std::max(60LL, static_cast<long long>(std::floor(std::min(seconds, longest))));
    if (s < 3600) return two_units(s / 60, "m", s % 60, "s");
    if (s < 86400) return two_units(s / 3600, "h", (s % 3600) / 60, "m");
    return two_units(s / 86400, "d", (s % 86400) / 3600, "h");
}

std::string duration_text(std::chrono::nanoseconds duration) {
    return duration_text(std::chrono::duration<double>(duration).count());
}

}  // namespace pglock
