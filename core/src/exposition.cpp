#include "pglock/exposition.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <set>
#include <system_error>

namespace pglock::exposition {
namespace {

constexpr double inf = std::numeric_limits<double>::infinity();
constexpr double nan = std::numeric_limits<double>::quiet_NaN();

bool is_blank(char c) { return c == ' ' || c == '\t'; }
bool is_name_start(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool is_name_char(char c) { return is_name_start(c) || (c >= '0' && c <= '9'); }
bool is_metric_start(char c) { return is_name_start(c) || c == ':'; }
bool is_metric_char(char c) { return is_name_char(c) || c == ':'; }

// Go's strconv.ParseFloat, which Prometheus uses, takes a leading '+' and "Inf"/"NaN" in any case;
// std::from_chars takes the words but not the '+', so that is handled here. from_chars also takes
// "nan(...)" and a signed NaN, which Go refuses: NaN must be the bare three letters.
std::optional<double> parse_float(std::string_view token) {
    const bool signed_token = !token.empty() && (token.front() == '+' || token.front() == '-');
    if (!token.empty() && token.front() == '+') {
        token.remove_prefix(1);
        if (!token.empty() && (token.front() == '+' || token.front() == '-')) return std::nullopt;
    }
    if (token.empty()) return std::nullopt;
    const std::string_view unsigned_part = token.front() == '-' ? token.substr(1) : token;
    if (!unsigned_part.empty() && (unsigned_part.front() == 'n' || unsigned_part.front() == 'N') &&
        (signed_token || unsigned_part.size() != 3)) {
        return std::nullopt;
    }
    double value = 0;
    const auto [end, ec] = std::from_chars(token.data(), token.data() + token.size(), value);
    if (ec != std::errc{} || end != token.data() + token.size()) return std::nullopt;
    return value;
}

std::optional<std::int64_t> parse_int64(std::string_view token) {
    if (token.empty()) return std::nullopt;
    std::int64_t value = 0;
    const auto [end, ec] = std::from_chars(token.data(), token.data() + token.size(), value);
    if (ec != std::errc{} || end != token.data() + token.size()) return std::nullopt;
    return value;
}

// A cursor over one line (without its line end). Each read_* returns false and leaves a message
// in error_ when the text does not fit the grammar.
class LineReader {
public:
    explicit LineReader(std::string_view line) : line_(line) {}

    const std::string& error() const { return error_; }
    bool at_end() const { return pos_ >= line_.size(); }
    char peek() const { return at_end() ? '\0' : line_[pos_]; }
    void skip_blanks() {
        while (!at_end() && is_blank(line_[pos_])) ++pos_;
    }
    bool consume(char c) {
        if (peek() != c || at_end()) return false;
        ++pos_;
        return true;
    }
    std::string_view rest() const { return line_.substr(std::min(pos_, line_.size())); }

    std::string_view read_metric_name() {
        const std::size_t start = pos_;
        if (!at_end() && is_metric_start(line_[pos_])) {
            ++pos_;
            while (!at_end() && is_metric_char(line_[pos_])) ++pos_;
        }
        return line_.substr(start, pos_ - start);
    }

    std::string_view read_label_name() {
        const std::size_t start = pos_;
        if (!at_end() && is_name_start(line_[pos_])) {
            ++pos_;
            while (!at_end() && is_name_char(line_[pos_])) ++pos_;
        }
        return line_.substr(start, pos_ - start);
    }

    // Up to the next blank or the end of the line.
    std::string_view read_token() {
        const std::size_t start = pos_;
        while (!at_end() && !is_blank(line_[pos_])) ++pos_;
        return line_.substr(start, pos_ - start);
    }

    // A double-quoted label value; the opening quote is next.
    bool read_label_value(std::string& out) {
        if (!consume('"')) return fail("expected '\"' to open the label value");
        while (!at_end()) {
            const char c = line_[pos_++];
            if (c == '"') return true;
            if (c != '\\') {
                out.push_back(c);
                continue;
            }
            if (at_end()) break;
            switch (line_[pos_++]) {
                case '\\': out.push_back('\\'); break;
                case '"': out.push_back('"'); break;
                case 'n': out.push_back('\n'); break;
                default: return fail("invalid escape sequence in label value (only \\\\, \\\" and \\n exist)");
            }
        }
        return fail("unterminated label value (missing closing '\"')");
    }

    // `{name="value", ...}`; the opening brace is next. A trailing comma is allowed.
    bool read_labels(std::vector<Label>& labels) {
        consume('{');
        for (;;) {
            skip_blanks();
            if (consume('}')) return true;
            const std::string_view name = read_label_name();
            if (name.empty()) return fail(at_end() ? "unterminated label set (missing '}')" : "invalid label name");
            for (const Label& existing : labels) {
                if (existing.name == name) return fail("duplicate label \"" + std::string(name) + "\"");
            }
            skip_blanks();
            if (!consume('=')) return fail("expected '=' after label name \"" + std::string(name) + "\"");
            skip_blanks();
            Label& label = labels.emplace_back();
            label.name = name;
            if (!read_label_value(label.value)) return false;
            skip_blanks();
            if (consume(',')) continue;
            if (consume('}')) return true;
            return fail(at_end() ? "unterminated label set (missing '}')" : "expected ',' or '}' after label value");
        }
    }

    bool fail(std::string message) {
        error_ = std::move(message);
        return false;
    }

private:
    std::string_view line_;
    std::size_t pos_ = 0;
    std::string error_;
};

bool read_sample(LineReader& reader, Sample& sample) {
    sample.metric = reader.read_metric_name();
    if (sample.metric.empty()) return reader.fail("expected a metric name");
    reader.skip_blanks();
    if (reader.peek() == '{' && !reader.read_labels(sample.labels)) return false;
    reader.skip_blanks();
    const std::string_view value = reader.read_token();
    if (value.empty()) return reader.fail("expected a value after \"" + sample.metric + "\"");
    const auto parsed = parse_float(value);
    if (!parsed) return reader.fail("invalid value \"" + std::string(value) + "\"");
    sample.value = *parsed;
    reader.skip_blanks();
    if (reader.at_end()) return true;
    const std::string_view timestamp = reader.read_token();
    sample.timestamp_ms = parse_int64(timestamp);
    if (!sample.timestamp_ms) return reader.fail("invalid timestamp \"" + std::string(timestamp) + "\"");
    reader.skip_blanks();
    if (!reader.at_end()) return reader.fail("unexpected text after the timestamp");
    return true;
}

bool known_type(std::string_view type) {
    return type == "counter" || type == "gauge" || type == "histogram" || type == "summary" || type == "untyped";
}

// `# HELP name text`, `# TYPE name type`, or any other comment (ignored). The '#' is next.
bool read_comment(LineReader& reader, std::set<std::string, std::less<>>& typed) {
    reader.consume('#');
    reader.skip_blanks();
    const std::string_view keyword = reader.read_token();
    if (keyword != "HELP" && keyword != "TYPE") return true;
    reader.skip_blanks();
    const std::string_view metric = reader.read_metric_name();
    if (metric.empty()) return reader.fail("expected a metric name after # " + std::string(keyword));
    if (keyword == "HELP") return true;  // the docstring is not needed here
    reader.skip_blanks();
    const std::string_view type = reader.read_token();
    if (!known_type(type)) return reader.fail("unknown metric type \"" + std::string(type) + "\"");
    reader.skip_blanks();
    if (!reader.at_end()) return reader.fail("unexpected text after the metric type");
    if (!typed.emplace(metric).second) return reader.fail("second TYPE line for \"" + std::string(metric) + "\"");
    return true;
}

}  // namespace

std::string ParseError::describe() const {
    return line == 0 ? message : "line " + std::to_string(line) + ": " + message;
}

const std::string* Sample::label(std::string_view name) const noexcept {
    for (const Label& l : labels) {
        if (l.name == name) return &l.value;
    }
    return nullptr;
}

SampleParse parse_samples(std::string_view text, const Limits& limits) {
    SampleParse result;
    auto fail = [&](std::size_t line, std::string message) {
        result.samples.clear();
        result.error = ParseError{line, std::move(message)};
        return std::move(result);
    };
    if (text.size() > limits.max_input_bytes) {
        return fail(0, "input of " + std::to_string(text.size()) + " bytes exceeds the limit of " +
                           std::to_string(limits.max_input_bytes) + " bytes");
    }
    std::set<std::string, std::less<>> typed;
    std::size_t number = 0;
    std::size_t start = 0;
    while (start < text.size()) {
        ++number;
        std::size_t end = text.find('\n', start);
        if (end == std::string_view::npos) end = text.size();
        std::string_view line = text.substr(start, end - start);
        start = end + 1;
        if (line.size() > limits.max_line_length) {
            return fail(number, "line of " + std::to_string(line.size()) + " bytes exceeds the limit of " +
                                    std::to_string(limits.max_line_length) + " bytes");
        }
        if (!line.empty() && line.back() == '\r') line.remove_suffix(1);  // CRLF from some proxies
        LineReader reader(line);
        reader.skip_blanks();
        if (reader.at_end()) continue;
        if (reader.peek() == '#') {
            if (!read_comment(reader, typed)) return fail(number, reader.error());
            continue;
        }
        if (result.samples.size() >= limits.max_samples) {
            return fail(number, "more than " + std::to_string(limits.max_samples) + " samples");
        }
        Sample& sample = result.samples.emplace_back();
        sample.line = number;
        if (!read_sample(reader, sample)) return fail(number, reader.error());
    }
    return result;
}

double LockSeries::acquires_of(std::string_view outcome) const noexcept {
    const auto it = acquires.find(outcome);
    return it == acquires.end() ? 0.0 : it->second;
}

LockParse extract_lock_metrics(std::span<const Sample> samples) {
    LockParse result;
    result.scrape.samples = samples.size();
    // Buckets by bound first: the same bound may come from several series of one name.
    std::map<std::string, std::map<double, double>, std::less<>> buckets;
    const std::string bucket_metric = std::string(hold_metric) + "_bucket";
    const std::string sum_metric = std::string(hold_metric) + "_sum";
    const std::string count_metric = std::string(hold_metric) + "_count";

    auto fail = [&](const Sample& s, std::string message) {
        result.scrape = {};
        result.error = ParseError{s.line, std::move(message)};
        return std::move(result);
    };
    for (const Sample& s : samples) {
        const bool acquires = s.metric == acquires_metric;
        const bool bucket = s.metric == bucket_metric;
        const bool sum = s.metric == sum_metric;
        const bool count = s.metric == count_metric;
        const bool held = s.metric == held_metric;
        const bool lost = s.metric == lost_metric;
        if (!acquires && !bucket && !sum && !count && !held && !lost) continue;
        const std::string* name = s.label("name");
        if (!name) return fail(s, s.metric + " without a \"name\" label");
        if (held) {
            const std::string* key = s.label("key");
            const std::string* pid = s.label("pid");
            const auto key_value = key ? parse_int64(*key) : std::nullopt;
            const auto pid_value = pid ? parse_int64(*pid) : std::nullopt;
            if (!key_value) return fail(s, s.metric + " without a decimal \"key\" label");
            if (!pid_value || *pid_value <= 0 || *pid_value > std::numeric_limits<int>::max()) {
                return fail(s, s.metric + " without a positive \"pid\" label");
            }
            if (s.value == 1) result.scrape.held.push_back({*name, *key_value, static_cast<int>(*pid_value)});
            continue;
        }
        LockSeries& series = result.scrape.locks[*name];
        if (lost) {
            series.lost += s.value;
            continue;
        }
        if (acquires) {
            const std::string* outcome = s.label("outcome");
            if (!outcome) return fail(s, s.metric + " without an \"outcome\" label");
            series.acquires[*outcome] += s.value;
            continue;
        }
        series.has_hold = true;
        if (sum) {
            series.hold.sum += s.value;
        } else if (count) {
            series.hold.count += s.value;
        } else {
            const std::string* le = s.label("le");
            const auto bound = le ? parse_float(*le) : std::nullopt;
            if (!bound || std::isnan(*bound)) return fail(s, bucket_metric + " without a numeric \"le\" label");
            buckets[*name][*bound] += s.value;
        }
    }
    auto& held = result.scrape.held;
    std::sort(held.begin(), held.end());
    held.erase(std::unique(held.begin(), held.end()), held.end());
    for (auto& [name, by_bound] : buckets) {
        auto& out = result.scrape.locks[name].hold.buckets;
        out.reserve(by_bound.size());
        for (const auto& [bound, count] : by_bound) out.push_back({bound, count});
    }
    return result;
}

LockParse parse_lock_metrics(std::string_view text, const Limits& limits) {
    SampleParse parsed = parse_samples(text, limits);
    if (parsed.error) return LockParse{{}, std::move(parsed.error)};
    return extract_lock_metrics(parsed.samples);
}

double histogram_quantile(double q, std::span<const Bucket> input) {
    if (std::isnan(q)) return nan;
    if (q < 0) return -inf;
    if (q > 1) return inf;

    std::vector<Bucket> buckets(input.begin(), input.end());
    std::sort(buckets.begin(), buckets.end(),
              [](const Bucket& a, const Bucket& b) { return a.upper_bound < b.upper_bound; });
    if (buckets.empty() || buckets.back().upper_bound != inf) return nan;
    // Equal bounds (from series summed over other labels) are one bucket.
    std::vector<Bucket> merged;
    for (const Bucket& b : buckets) {
        if (!merged.empty() && merged.back().upper_bound == b.upper_bound) {
            merged.back().cumulative_count += b.cumulative_count;
        } else {
            merged.push_back(b);
        }
    }
    // Scrapes are not atomic across series, so a count can lag its neighbour; PromQL smooths that.
    for (std::size_t i = 1; i < merged.size(); ++i) {
        merged[i].cumulative_count = std::max(merged[i].cumulative_count, merged[i - 1].cumulative_count);
    }
    if (merged.size() < 2) return nan;
    const double observations = merged.back().cumulative_count;
    if (!(observations > 0)) return nan;

    double rank = q * observations;
    const auto found = std::find_if(merged.begin(), merged.end(),
                                    [rank](const Bucket& b) { return b.cumulative_count >= rank; });
    const std::size_t b = static_cast<std::size_t>(found - merged.begin());
    if (b >= merged.size() - 1) return merged[merged.size() - 2].upper_bound;
    if (b == 0 && merged[0].upper_bound <= 0) return merged[0].upper_bound;

    double start = 0;
    const double end = merged[b].upper_bound;
    double count = merged[b].cumulative_count;
    if (b > 0) {
        start = merged[b - 1].upper_bound;
        count -= merged[b - 1].cumulative_count;
        rank -= merged[b - 1].cumulative_count;
    }
    // q = 0 over an empty lowest bucket is 0/0 = NaN here, as in PromQL.
    return start + (end - start) * (rank / count);
}

std::optional<double> counter_rate(double previous, double current, double seconds) noexcept {
    if (!(seconds > 0) || !std::isfinite(previous) || !std::isfinite(current)) return std::nullopt;
    const double increase = current >= previous ? current - previous : current;
    return increase / seconds;
}

}  // namespace pglock::exposition
