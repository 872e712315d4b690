// The /metrics exposition parser and the lock series extraction (core/src/exposition.cpp): any
// page an endpoint could send. Properties, from exposition.hpp's contract:
//   - a failed parse has no samples; a good one has at most max_samples, on increasing lines of
//     the page, each with a metric name and label names of the text format's grammar (never
//     empty, never odd bytes) and no label twice;
//   - the samples, written back in the text format, parse to exactly the same samples (names,
//     label bytes, values bit for bit or both NaN, timestamps): nothing is lost or invented;
//   - tighter limits only ever turn a success into an error, never change what is read;
//   - the extraction counts every sample, fails with an empty scrape, gives buckets in ascending
//     order with no NaN bound, lock_held_info claims sorted without repeats and with a positive
//     pid, and histogram_quantile stays NaN or inside the buckets' range.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz_check.hpp"
#include "pglock/exposition.hpp"

namespace ex = pglock::exposition;

namespace {

bool name_start(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool name_char(char c) { return name_start(c) || (c >= '0' && c <= '9'); }

bool valid_label_name(std::string_view s) {
    return !s.empty() && name_start(s[0]) && std::all_of(s.begin(), s.end(), name_char);
}
bool valid_metric_name(std::string_view s) {
    return !s.empty() && (name_start(s[0]) || s[0] == ':') &&
           std::all_of(s.begin(), s.end(), [](char c) { return name_char(c) || c == ':'; });
}

std::string format_value(double v) {
    if (std::isnan(v)) return "NaN";
    if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
    char buf[64];
    const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);  // shortest text that reads back exactly
    FUZZ_CHECK(ec == std::errc{}, "a double fits 64 characters");
    return std::string(buf, end);
}

// The text format, as an exporter writes it.
std::string render(const std::vector<ex::Sample>& samples) {
    std::string out = "# HELP anything at all\n";
    for (const ex::Sample& s : samples) {
        out += s.metric;
        if (!s.labels.empty()) {
            out += '{';
            for (const ex::Label& l : s.labels) {
                out += l.name + "=\"";
                for (char c : l.value) {
                    if (c == '\\') out += "\\\\";
                    else if (c == '"') out += "\\\"";
                    else if (c == '\n') out += "\\n";
                    else out += c;
                }
                out += "\",";
            }
            out += '}';
        }
        out += ' ' + format_value(s.value);
        if (s.timestamp_ms) out += ' ' + std::to_string(*s.timestamp_ms);
        out += '\n';
    }
    return out;
}

bool same_value(double a, double b) {
    return (std::isnan(a) && std::isnan(b)) || (a == b && std::signbit(a) == std::signbit(b));
}

bool same_samples(const std::vector<ex::Sample>& a, const std::vector<ex::Sample>& b) {
    if (a.size() != b.size()) return false;
    for (std::size_t i = 0; i < a.size(); ++i) {
        if (a[i].metric != b[i].metric || !same_value(a[i].value, b[i].value) || a[i].timestamp_ms != b[i].timestamp_ms ||
            a[i].labels.size() != b[i].labels.size())
            return false;
        for (std::size_t k = 0; k < a[i].labels.size(); ++k)
            if (a[i].labels[k].name != b[i].labels[k].name || a[i].labels[k].value != b[i].labels[k].value) return false;
    }
    return true;
}

void check_quantiles(const ex::Histogram& h) {
    // The documented range holds when the bounds are ordinary numbers; with ±huge bounds the
    // interpolation itself overflows, as in PromQL.
    double lowest = 0, highest_finite = 0;
    for (const ex::Bucket& b : h.buckets) {
        if (std::isinf(b.upper_bound) && b.upper_bound > 0) continue;
        if (!(std::fabs(b.upper_bound) < 1e300)) return;
        lowest = std::min(lowest, b.upper_bound);
        highest_finite = std::max(highest_finite, b.upper_bound);
    }
    for (double q : {0.0, 0.25, 0.5, 0.9, 0.99, 1.0}) {
        const double v = ex::histogram_quantile(q, h.buckets);
        if (std::isnan(v)) continue;
        const double slack = 1e-9 * std::max(1.0, std::max(std::fabs(lowest), std::fabs(highest_finite)));
        FUZZ_CHECK(v >= lowest - slack && v <= highest_finite + slack, "a quantile lies within the buckets");
    }
    FUZZ_CHECK(ex::histogram_quantile(-0.5, h.buckets) == -std::numeric_limits<double>::infinity() &&
                   ex::histogram_quantile(1.5, h.buckets) == std::numeric_limits<double>::infinity(),
               "q < 0 is -Inf and q > 1 is +Inf");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    const ex::SampleParse parsed = ex::parse_samples(text);
    std::size_t lines = 0;
    for (char c : text) lines += c == '\n';
    lines += text.empty() || text.back() == '\n' ? 0 : 1;

    if (parsed.error) {
        FUZZ_CHECK(parsed.samples.empty(), "a failed parse has no samples");
        FUZZ_CHECK(parsed.error->line <= lines, "an error names a line of the page");
        FUZZ_CHECK(!parsed.error->message.empty(), "an error says what is wrong");
    }
    std::size_t previous = 0;
    for (const ex::Sample& s : parsed.samples) {
        FUZZ_CHECK(valid_metric_name(s.metric), "a metric name fits the grammar");
        FUZZ_CHECK(s.line > previous && s.line <= lines, "samples are on increasing lines of the page");
        previous = s.line;
        for (std::size_t i = 0; i < s.labels.size(); ++i) {
            FUZZ_CHECK(valid_label_name(s.labels[i].name), "a label name fits the grammar");
            for (std::size_t k = 0; k < i; ++k) FUZZ_CHECK(s.labels[k].name != s.labels[i].name, "no label twice");
            FUZZ_CHECK(s.label(s.labels[i].name) == &s.labels[i].value, "label() finds the label");
        }
    }

    // Tight limits: a success is the same success, otherwise an error.
    ex::Limits tight;
    tight.max_samples = 3;
    tight.max_line_length = 64;
    tight.max_input_bytes = 512;
    const ex::SampleParse bounded = ex::parse_samples(text, tight);
    FUZZ_CHECK(bounded.samples.size() <= tight.max_samples, "never more samples than the limit");
    if (!bounded.error) {
        FUZZ_CHECK(!parsed.error && same_samples(bounded.samples, parsed.samples),
                   "a parse within tight limits equals the parse within the default ones");
    }
    if (parsed.error) FUZZ_CHECK(bounded.error.has_value(), "tighter limits never make a bad page good");

    if (!parsed.error) {
        const ex::SampleParse again = ex::parse_samples(render(parsed.samples));
        FUZZ_CHECK(!again.error, "the samples written back in the text format parse");
        FUZZ_CHECK(same_samples(again.samples, parsed.samples), "the samples written back parse to the same samples");
    }

    const ex::LockParse locks = ex::parse_lock_metrics(text);
    if (parsed.error) FUZZ_CHECK(locks.error.has_value(), "parse_lock_metrics fails when the parse does");
    if (locks.error) {
        FUZZ_CHECK(locks.scrape.locks.empty() && locks.scrape.held.empty() && locks.scrape.samples == 0,
                   "a failed extraction has an empty scrape");
        return 0;
    }
    FUZZ_CHECK(locks.scrape.samples == parsed.samples.size(), "the scrape counts every sample");
    for (std::size_t i = 0; i < locks.scrape.held.size(); ++i) {
        FUZZ_CHECK(locks.scrape.held[i].pid > 0, "a lock_held_info claim has a positive pid");
        if (i > 0) FUZZ_CHECK(locks.scrape.held[i - 1] < locks.scrape.held[i], "claims sorted, no repeats");
    }
    for (const auto& [name, series] : locks.scrape.locks) {
        bool named = false;
        for (const ex::Sample& s : parsed.samples) {
            const std::string* n = s.label("name");
            named = named || (n && *n == name);
        }
        FUZZ_CHECK(named, "every lock of the scrape is the name label of a sample");
        for (std::size_t i = 0; i < series.hold.buckets.size(); ++i) {
            FUZZ_CHECK(!std::isnan(series.hold.buckets[i].upper_bound), "no NaN bucket bound");
            if (i > 0)
                FUZZ_CHECK(series.hold.buckets[i - 1].upper_bound < series.hold.buckets[i].upper_bound,
                           "buckets ascend, one per bound");
        }
        check_quantiles(series.hold);
    }
    return 0;
}
