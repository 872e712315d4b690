// The /metrics text parser: real prometheus-cpp output (names with quotes, backslashes and
// newlines), the text format's corners, malformed, truncated and enormous input (errors with line
// numbers, never a crash), and the quantile and rate maths against hand-computed values.
#include <QElapsedTimer>
#include <QtTest>

#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "pglock/exposition.hpp"
#include "pglock/observe.hpp"

#ifdef PGLOCK_WITH_PROMETHEUS
#include <prometheus/registry.h>
#include <prometheus/text_serializer.h>

#include "pglock/prometheus.hpp"
#endif

namespace ex = pglock::exposition;

namespace {

constexpr double inf = std::numeric_limits<double>::infinity();

// Names an application may well use, and bytes that only escapes keep intact.
const std::vector<std::string>& awkward_names() {
    static const std::vector<std::string> names = {
        "orders.daily-rollup",
        "say \"hi\"",
        "back\\slash\\",
        "two\nlines",
        "carriage\rreturn",
        "tab\tand } brace, comma=",
        "z\xc3\xa4hlen",  // UTF-8
        "\xff\xfe not utf-8",
    };
    return names;
}

#ifdef PGLOCK_WITH_PROMETHEUS
// What the CLI's /metrics would serve after some lock traffic on every awkward name.
std::string prometheus_cpp_page() {
    auto registry = std::make_shared<prometheus::Registry>();
    auto metrics = pglock::make_prometheus_metrics(registry);
    std::vector<std::unique_ptr<pglock::LockMetrics>> series;
    for (const auto& name : awkward_names()) series.push_back(metrics->register_lock(name));
    // The first name: 3 acquired, 2 contended, 1 error; holds 0.5 ms, 2 ms, 0.3 s, 2 s, 700 s.
    for (int i = 0; i < 3; ++i) series[0]->count_acquire(pglock::Outcome::acquired);
    for (int i = 0; i < 2; ++i) series[0]->count_acquire(pglock::Outcome::contended);
    series[0]->count_acquire(pglock::Outcome::error);
    for (double s : {0.0005, 0.002, 0.3, 2.0, 700.0}) series[0]->observe_hold(s);
    // Every other name: one acquire and one 10 ms hold.
    for (std::size_t i = 1; i < series.size(); ++i) {
        series[i]->count_acquire(pglock::Outcome::acquired);
        series[i]->observe_hold(0.01);
    }
    return prometheus::TextSerializer().Serialize(registry->Collect());
}
#endif

std::string crlf(const std::string& text) {
    std::string out;
    for (char c : text) {
        if (c == '\n') out += '\r';
        out += c;
    }
    return out;
}

std::vector<ex::Bucket> buckets(std::initializer_list<std::pair<double, double>> list) {
    std::vector<ex::Bucket> out;
    for (auto [bound, count] : list) out.push_back({bound, count});
    return out;
}

}  // namespace

class TestExposition : public QObject {
    Q_OBJECT
private slots:
    void real_prometheus_cpp_output() {
#ifndef PGLOCK_WITH_PROMETHEUS
        QSKIP("pglock built without PGLOCK_WITH_PROMETHEUS");
#else
        const std::string page = prometheus_cpp_page();
        for (const std::string& text : {page, crlf(page)}) {
            const ex::LockParse parsed = ex::parse_lock_metrics(text);
            QVERIFY2(!parsed.error, parsed.error ? parsed.error->describe().c_str() : "");
            QCOMPARE(parsed.scrape.locks.size(), awkward_names().size());
            for (const auto& name : awkward_names()) QVERIFY2(parsed.scrape.locks.count(name), name.c_str());

            const ex::LockSeries& first = parsed.scrape.locks.at(awkward_names()[0]);
            QCOMPARE(first.acquires_of("acquired"), 3.0);
            QCOMPARE(first.acquires_of("contended"), 2.0);
            QCOMPARE(first.acquires_of("error"), 1.0);
            QVERIFY(first.has_hold);
            QCOMPARE(first.hold.count, 5.0);
            QVERIFY(std::abs(first.hold.sum - 702.3025) < 1e-9);
            // The library's buckets plus +Inf, cumulative.
            const std::vector<double> expected_counts = {1, 2, 2, 2, 3, 3, 4, 4, 4, 4, 5};
            QCOMPARE(first.hold.buckets.size(), std::size(pglock::hold_buckets) + 1);
            for (std::size_t i = 0; i < std::size(pglock::hold_buckets); ++i) {
                QCOMPARE(first.hold.buckets[i].upper_bound, pglock::hold_buckets[i]);
            }
            QCOMPARE(first.hold.buckets.back().upper_bound, inf);
            for (std::size_t i = 0; i < expected_counts.size(); ++i) {
                QCOMPARE(first.hold.buckets[i].cumulative_count, expected_counts[i]);
            }
            // Median: rank 2.5 falls in (0.1, 0.5] holding 1 of 3 - 2 -> 0.1 + 0.4 * 0.5.
            QVERIFY(std::abs(ex::histogram_quantile(0.5, first.hold.buckets) - 0.3) < 1e-12);
            // p99: rank 4.95 lies in +Inf -> the highest finite bound.
            QCOMPARE(ex::histogram_quantile(0.99, first.hold.buckets), 600.0);

            const ex::LockSeries& quoted = parsed.scrape.locks.at("say \"hi\"");
            QCOMPARE(quoted.acquires_of("acquired"), 1.0);
            QCOMPARE(quoted.acquires_of("contended"), 0.0);
            QCOMPARE(quoted.hold.count, 1.0);
        }
#endif
    }

    void every_prefix_of_real_output_parses_or_errors() {
#ifndef PGLOCK_WITH_PROMETHEUS
        QSKIP("pglock built without PGLOCK_WITH_PROMETHEUS");
#else
        // A response cut off mid-transfer: no crash, and a cut inside a line is an error.
        const std::string page = prometheus_cpp_page();
        int errors = 0;
        for (std::size_t n = 0; n <= page.size(); ++n) {
            const ex::LockParse parsed = ex::parse_lock_metrics(std::string_view(page).substr(0, n));
            if (parsed.error) {
                ++errors;
                QVERIFY(parsed.error->line > 0);
                QVERIFY(parsed.scrape.locks.empty());
            }
        }
        QVERIFY(errors > 0);
#endif
    }

    void text_format_corners() {
        const std::string text =
            "# HELP lock_acquires_total Attempts \\\\ by outcome\\n.\n"
            "# TYPE lock_acquires_total counter\n"
            "# a free comment { with \" odd } bytes\n"
            "\n"
            "   \t\n"
            "lock_acquires_total{name=\"a\",outcome=\"acquired\"} 7 1700000000000\r\n"
            "lock_acquires_total { name = \"a\" , outcome = \"contended\" , } +2.5e1\n"
            "lock_acquires_total{name=\"a\",outcome=\"error\",pod=\"x\"} 1\n"
            "lock_acquires_total{name=\"a\",outcome=\"error\",pod=\"y\"} 2 -5\n"
            "lock_hold_duration_seconds_bucket{name=\"a\",le=\"+Inf\"} 4\n"
            "lock_hold_duration_seconds_bucket{name=\"a\",le=\"0.5\"} 3\n"
            "lock_hold_duration_seconds_bucket{name=\"a\",le=\"1e-1\"} 1\n"
            "lock_hold_duration_seconds_sum{name=\"a\"} NaN\n"
            "lock_hold_duration_seconds_count{name=\"a\"} 4\n"
            "other_metric{name=\"b\"} -Inf\n"
            "other_metric_without_labels +Inf\n"
            "other_metric{name=\"c\"} nan\n"
            "lock_acquires_total{name=\"\",outcome=\"acquired\"} 1";  // no final newline
        const ex::SampleParse samples = ex::parse_samples(text);
        QVERIFY2(!samples.error, samples.error ? samples.error->describe().c_str() : "");
        QCOMPARE(samples.samples.size(), std::size_t(13));
        QCOMPARE(samples.samples[0].timestamp_ms.value(), std::int64_t(1700000000000));
        QCOMPARE(samples.samples[0].line, std::size_t(6));
        QCOMPARE(samples.samples[3].timestamp_ms.value(), std::int64_t(-5));
        QVERIFY(std::isnan(samples.samples[7].value));
        QCOMPARE(samples.samples[9].value, -inf);
        QCOMPARE(samples.samples[10].value, inf);
        QVERIFY(std::isnan(samples.samples[11].value));  // any case, as Go's ParseFloat

        const ex::LockParse parsed = ex::extract_lock_metrics(samples.samples);
        QVERIFY(!parsed.error);
        QCOMPARE(parsed.scrape.samples, std::size_t(13));
        QCOMPARE(parsed.scrape.locks.size(), std::size_t(2));  // "a" and the empty name; not other_metric
        const ex::LockSeries& a = parsed.scrape.locks.at("a");
        QCOMPARE(a.acquires_of("acquired"), 7.0);
        QCOMPARE(a.acquires_of("contended"), 25.0);
        QCOMPARE(a.acquires_of("error"), 3.0);  // summed over the pod label
        QCOMPARE(a.hold.buckets.size(), std::size_t(3));
        QCOMPARE(a.hold.buckets[0].upper_bound, 0.1);  // sorted by bound
        QCOMPARE(a.hold.buckets[2].upper_bound, inf);
        QVERIFY(std::isnan(a.hold.sum));
        QCOMPARE(a.hold.count, 4.0);
        QCOMPARE(parsed.scrape.locks.at("").acquires_of("acquired"), 1.0);
    }

    void escapes_give_raw_bytes() {
        const ex::SampleParse parsed =
            ex::parse_samples("m{name=\"q\\\"b\\\\n\\n\xff\"} 1\n");
        QVERIFY(!parsed.error);
        QCOMPARE(*parsed.samples[0].label("name"), std::string("q\"b\\n\n\xff"));
    }

    void malformed_input_names_the_line() {
        struct Case {
            const char* text;
            std::size_t line;
            const char* message_part;
        };
        const Case cases[] = {
            {"a 1\nb{x=\"1\" 2\n", 2, "expected ',' or '}'"},
            {"a 1\n\nfoo bar\n", 3, "invalid value \"bar\""},
            {"a{x=\"\\q\"} 1\n", 1, "invalid escape"},
            {"a 1\n# TYPE a nonsense\n", 2, "unknown metric type"},
            {"# TYPE a counter\n# TYPE a gauge\n", 2, "second TYPE line"},
            {"# HELP\n", 1, "expected a metric name"},
            {"a{x=\"1\",x=\"2\"} 1\n", 1, "duplicate label"},
            {"a 1 soon\n", 1, "invalid timestamp"},
            {"a 1 123 extra\n", 1, "unexpected text"},
            {"{x=\"1\"} 1\n", 1, "expected a metric name"},
            {"a{1x=\"1\"} 1\n", 1, "invalid label name"},
            {"a{x=1} 1\n", 1, "expected '\"'"},
            {"a{x} 1\n", 1, "expected '='"},
            {"a{x=\"1} 1\n", 1, "unterminated label value"},
            {"a{x=\"1\"\n", 1, "unterminated label set"},
            {"a\n", 1, "expected a value"},
            {"a ++1\n", 1, "invalid value"},
            {"a 1e999\n", 1, "invalid value"},
            {"a nan(1)\n", 1, "invalid value"},   // std::from_chars takes these, Go's ParseFloat does not
            {"a -NaN\n", 1, "invalid value"},
            {"a +nan\n", 1, "invalid value"},
            {"ok 1\r\n\r\nbad\xff 1\r\n", 3, "invalid value"},
            {"lock_acquires_total{outcome=\"acquired\"} 1\n", 1, "without a \"name\" label"},
            {"x 1\nlock_acquires_total{name=\"a\"} 1\n", 2, "without an \"outcome\" label"},
            {"lock_hold_duration_seconds_bucket{name=\"a\",le=\"big\"} 1\n", 1, "numeric \"le\""},
            {"lock_hold_duration_seconds_bucket{name=\"a\"} 1\n", 1, "numeric \"le\""},
        };
        for (const Case& c : cases) {
            const ex::LockParse parsed = ex::parse_lock_metrics(c.text);
            QVERIFY2(parsed.error, c.text);
            QCOMPARE(parsed.error->line, c.line);
            const std::string described = parsed.error->describe();
            QVERIFY2(described.find(c.message_part) != std::string::npos, described.c_str());
            QVERIFY2(described.rfind("line " + std::to_string(c.line) + ": ", 0) == 0, described.c_str());
            QVERIFY(parsed.scrape.locks.empty());
        }
    }

    void limits_bound_any_input() {
        ex::Limits limits;
        limits.max_input_bytes = 1000;
        limits.max_samples = 3;
        limits.max_line_length = 40;

        const ex::SampleParse too_big = ex::parse_samples(std::string(1001, '\n'), limits);
        QVERIFY(too_big.error);
        QCOMPARE(too_big.error->line, std::size_t(0));
        QVERIFY(too_big.error->describe().find("exceeds the limit of 1000 bytes") != std::string::npos);

        const ex::SampleParse too_many = ex::parse_samples("a 1\nb 2\nc 3\n# fine\nd 4\n", limits);
        QVERIFY(too_many.error);
        QCOMPARE(too_many.error->line, std::size_t(5));
        QVERIFY(too_many.samples.empty());

        const ex::SampleParse too_long = ex::parse_samples("a 1\nb{x=\"" + std::string(40, 'y') + "\"} 1\n", limits);
        QVERIFY(too_long.error);
        QCOMPARE(too_long.error->line, std::size_t(2));
    }

    void random_bytes_never_crash() {
        // Garbage and mutated real-looking lines: each parse ends with a result or an error.
        std::mt19937 rng(20240601);
        const std::string seed =
            "# TYPE lock_acquires_total counter\nlock_acquires_total{name=\"a\\\"b\",outcome=\"acquired\"} 1 5\n"
            "lock_hold_duration_seconds_bucket{name=\"a\",le=\"+Inf\"} 3\n";
        int errors = 0;
        for (int round = 0; round < 20000; ++round) {
            std::string text = seed;
            if (round % 2) {
                const int edits = 1 + int(rng() % 4);
                for (int e = 0; e < edits; ++e) text[rng() % text.size()] = char(rng() % 256);
            } else {
                text.resize(rng() % 200);
                for (char& c : text) c = char(rng() % 256);
            }
            errors += ex::parse_lock_metrics(text).error ? 1 : 0;
        }
        QVERIFY(errors > 5000);
    }

    void one_mebibyte_page_parses_quickly() {
        // A large application's page: many names, each with the library's 3 + 13 series.
        std::string page = "# TYPE lock_acquires_total counter\n# TYPE lock_hold_duration_seconds histogram\n";
        int names = 0;
        while (page.size() < (1u << 20)) {
            const std::string n = "service.job-" + std::to_string(names++);
            for (const char* o : {"acquired", "contended", "error"})
                page += "lock_acquires_total{name=\"" + n + "\",outcome=\"" + o + "\"} 12345\n";
            double cumulative = 0;
            for (double b : pglock::hold_buckets) {
                cumulative += 3;
                page += "lock_hold_duration_seconds_bucket{name=\"" + n + "\",le=\"" + std::to_string(b) + "\"} " +
                        std::to_string(cumulative) + "\n";
            }
            page += "lock_hold_duration_seconds_bucket{name=\"" + n + "\",le=\"+Inf\"} 33\n";
            page += "lock_hold_duration_seconds_sum{name=\"" + n + "\"} 12.5\n";
            page += "lock_hold_duration_seconds_count{name=\"" + n + "\"} 33\n";
        }
        QElapsedTimer timer;
        timer.start();
        const ex::LockParse parsed = ex::parse_lock_metrics(page);
        const qint64 ms = timer.elapsed();
        QVERIFY(!parsed.error);
        QCOMPARE(parsed.scrape.locks.size(), std::size_t(names));
        qInfo("parsed %zu bytes (%d names, %zu samples) in %lld ms", page.size(), names, parsed.scrape.samples, ms);
        QVERIFY2(ms < 2000, "a 1 MiB page should parse in well under a second");
    }

    void quantiles_match_hand_computed_values() {
        // 10 observations: 2 <= 0.1, 4 in (0.1, 0.5], 2 in (0.5, 1], 2 above 1.
        const auto b = buckets({{0.1, 2}, {0.5, 6}, {1, 8}, {inf, 10}});
        QCOMPARE(ex::histogram_quantile(0.5, b), 0.4);     // rank 5: 0.1 + 0.4 * (3 / 4)
        QCOMPARE(ex::histogram_quantile(0.1, b), 0.05);    // rank 1: lowest bucket from 0, 0.1 * (1 / 2)
        QCOMPARE(ex::histogram_quantile(0.8, b), 1.0);     // rank 8: top of (0.5, 1]
        QCOMPARE(ex::histogram_quantile(0.9, b), 1.0);     // rank 9 lies in +Inf: the highest finite bound
        QCOMPARE(ex::histogram_quantile(0.0, b), 0.0);
        QCOMPARE(ex::histogram_quantile(-0.1, b), -inf);
        QCOMPARE(ex::histogram_quantile(1.1, b), inf);
        QVERIFY(std::isnan(ex::histogram_quantile(std::nan(""), b)));

        // Order does not matter; equal bounds (series summed over other labels) merge.
        QCOMPARE(ex::histogram_quantile(0.5, buckets({{inf, 10}, {1, 8}, {0.1, 2}, {0.5, 6}})), 0.4);
        QCOMPARE(ex::histogram_quantile(0.5, buckets({{0.1, 1}, {0.1, 1}, {0.5, 3}, {0.5, 3}, {inf, 5}, {inf, 5}})),
                 0.4);
        // A count lagging its lower neighbour is raised to it: {5, 5, 10} -> rank 5 at the top of 0.1.
        QCOMPARE(ex::histogram_quantile(0.5, buckets({{0.1, 5}, {0.5, 4}, {inf, 10}})), 0.1);
        // A non-positive lowest bound is returned as is.
        QCOMPARE(ex::histogram_quantile(0.25, buckets({{-1, 2}, {inf, 4}})), -1.0);

        // No +Inf bucket, too few buckets, or no observations: NaN.
        QVERIFY(std::isnan(ex::histogram_quantile(0.5, buckets({{0.1, 2}, {0.5, 6}}))));
        QVERIFY(std::isnan(ex::histogram_quantile(0.5, buckets({{inf, 6}}))));
        QVERIFY(std::isnan(ex::histogram_quantile(0.5, buckets({}))));
        QVERIFY(std::isnan(ex::histogram_quantile(0.5, buckets({{0.1, 0}, {inf, 0}}))));
    }

    void counter_rates_handle_resets() {
        QCOMPARE(ex::counter_rate(10, 40, 15).value(), 2.0);
        QCOMPARE(ex::counter_rate(40, 40, 15).value(), 0.0);
        QCOMPARE(ex::counter_rate(100, 30, 10).value(), 3.0);  // restarted: 30 since the restart
        QVERIFY(!ex::counter_rate(1, 2, 0));
        QVERIFY(!ex::counter_rate(1, 2, -1));
        QVERIFY(!ex::counter_rate(std::nan(""), 2, 1));
        QVERIFY(!ex::counter_rate(1, inf, 1));
    }
};

QTEST_GUILESS_MAIN(TestExposition)
#include "test_exposition.moc"
