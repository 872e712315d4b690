// Durations on the command line, Go style: "500ms", "30s", "5m", "1h", "1.5s", "1m30s". They are
// written back with pglock::duration_text, the style of every front end.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

namespace pglock::cli {

// The longest duration any option takes: 365 days. Durations are added to the clock's now (a
// deadline, the end of a hold), where much longer ones would overflow into the past.
inline constexpr std::chrono::hours max_duration{24 * 365};

// Units: us, ms, s, m, h; a number (decimals allowed) before each unit; "0" alone is allowed.
// A bare number without a unit is rejected because it is ambiguous. nullopt on bad input,
// negative values, or values beyond max_duration.
std::optional<std::chrono::nanoseconds> parse_duration(std::string_view text);

// Why `text` is refused ("not a duration ...", "out of range ..."), or "" when parse_duration
// takes it.
std::string duration_error(std::string_view text);

}  // namespace pglock::cli
