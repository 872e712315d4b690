// How every front end writes a duration for people: lockscope's views and history, the CLI's
// lines. One style, the two most significant units, no spaces:
//   250ms   4.2s   59.9s   3m5s   1m   1h2m   2d3h
// Below a second in whole milliseconds, below a minute in seconds with one decimal (".0"
// dropped), both rounded; from a minute on whole units, truncated as a clock reads them, with a
// zero second unit left out. Negative durations read as 0ms.
#pragma once

#include <chrono>
#include <string>

namespace pglock {

std::string duration_text(std::chrono::nanoseconds duration);

// The same, from seconds as a double (the monitor's and the history's clocks).
std::string duration_text(double seconds);

}  // namespace pglock
