// Reading what an application's /metrics endpoint says about its locks: a parser of the
// Prometheus text exposition format 0.0.4, the extraction of this library's two series
// (lock_acquires_total{name,outcome} and lock_hold_duration_seconds{name}), and the maths a
// dashboard needs on them (histogram quantiles as PromQL computes them, counter rates).
//
// Qt-free and exception-free on bad input: the text comes from the network, so every problem is
// a ParseError naming the line, and hard limits bound the memory and time any input can take.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace pglock::exposition {

// Bounds on what one parse may consume. The defaults take a large application's whole /metrics
// page (a few MiB) and refuse anything that could only be an accident or an attack.
struct Limits {
    std::size_t max_input_bytes = 16u << 20;
    std::size_t max_samples = 500'000;
    std::size_t max_line_length = 64u << 10;
};

struct ParseError {
    std::size_t line = 0;  // 1-based; 0 when the error is about the input as a whole
    std::string message;

    // "line 12: expected '=' after label name" (or just the message for line 0).
    std::string describe() const;
};

struct Label {
    std::string name;
    std::string value;  // unescaped bytes; not necessarily UTF-8
};

struct Sample {
    std::string metric;
    std::vector<Label> labels;
    double value = 0;
    std::optional<std::int64_t> timestamp_ms;
    std::size_t line = 0;

    // The value of the label, or nullptr when the sample has none by that name.
    const std::string* label(std::string_view name) const noexcept;
};

struct SampleParse {
    std::vector<Sample> samples;
    std::optional<ParseError> error;  // set: samples is empty
};

// Parses the whole text (HELP/TYPE lines and comments, blank lines, CRLF line ends, label value
// escapes \\ \" \n, NaN/+Inf/-Inf, optional timestamps). Any syntax error fails the whole parse,
// as Prometheus does: a half-read page would show numbers that are silently wrong.
SampleParse parse_samples(std::string_view text, const Limits& limits = {});

// One cumulative histogram bucket: how many observations were <= upper_bound.
struct Bucket {
    double upper_bound = 0;
    double cumulative_count = 0;
};

struct Histogram {
    std::vector<Bucket> buckets;  // ascending upper bounds; the last is +Inf when the source had it
    double sum = 0;
    double count = 0;
};

// What one endpoint says about one lock name.
struct LockSeries {
    std::map<std::string, double, std::less<>> acquires;  // outcome ("acquired", "contended", "error") -> total
    Histogram hold;                                       // lock_hold_duration_seconds
    bool has_hold = false;                                // any hold series seen for the name
    double lost = 0;                                      // lock_lost_total

    double acquires_of(std::string_view outcome) const noexcept;
};

// One lock_held_info series: the endpoint's process believes it holds `name` (key `key`) on the
// server backend `pid`.
struct HeldClaim {
    std::string name;
    std::int64_t key = 0;
    int pid = 0;
    friend auto operator<=>(const HeldClaim&, const HeldClaim&) = default;
};

struct LockScrape {
    std::map<std::string, LockSeries, std::less<>> locks;  // by lock name (raw bytes)
    std::vector<HeldClaim> held;                            // lock_held_info with value 1, sorted, no repeats
    std::size_t samples = 0;                               // every sample on the page, ours or not
};

struct LockParse {
    LockScrape scrape;
    std::optional<ParseError> error;
};

inline constexpr std::string_view acquires_metric = "lock_acquires_total";
inline constexpr std::string_view hold_metric = "lock_hold_duration_seconds";
inline constexpr std::string_view held_metric = "lock_held_info";
inline constexpr std::string_view lost_metric = "lock_lost_total";

// Picks this library's series out of the samples. Series that differ in labels other than
// name/outcome/le (an application's own constant labels) are summed, as `sum by (name, outcome)`
// would. A sample of ours without a `name` label, or a bucket whose `le` is not a number, is an
// error naming its line; so is a lock_held_info without a decimal int64 `key` or a positive int
// `pid`. lock_held_info samples whose value is not 1 claim nothing.
LockParse extract_lock_metrics(std::span<const Sample> samples);

// parse_samples + extract_lock_metrics.
LockParse parse_lock_metrics(std::string_view text, const Limits& limits = {});

// The q-quantile (0 <= q <= 1) of a cumulative histogram, as PromQL's histogram_quantile computes
// it: buckets sorted, equal bounds merged, counts forced monotonic; linear interpolation inside
// the bucket holding the rank, the lowest bucket starting at 0 (when its bound is positive); a
// rank in the +Inf bucket gives the highest finite bound. NaN when there is no +Inf bucket, fewer
// than two buckets, or no observations; -Inf for q < 0 and +Inf for q > 1.
double histogram_quantile(double q, std::span<const Bucket> buckets);

// Per-second increase of a counter between two scrapes `seconds` apart. A drop means the process
// restarted and its counter began again at 0, so the increase is the new value (Prometheus' reset
// rule). nullopt when the interval is not positive or a value is not finite.
std::optional<double> counter_rate(double previous, double current, double seconds) noexcept;

}  // namespace pglock::exposition
