// Durations on the command line, Go style: "500ms", "30s", "5m", "1h", "1.5s", "1m30s".
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

namespace pglock::cli {

// Units: us, ms, s, m, h; a number (decimals allowed) before each unit; "0" alone is allowed.
// A bare number without a unit is rejected because it is ambiguous. nullopt on bad input,
// negative values, or values beyond ~290 years.
std::optional<std::chrono::nanoseconds> parse_duration(std::string_view text);

// A short human form: "300ms", "1.5s", "2m", "1h30m" (millisecond precision).
std::string format_duration(std::chrono::nanoseconds d);

}  // namespace pglock::cli
