#include "charts/hold_histogram_math.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

namespace lockscope::charts {

namespace {

// Scraped bounds arrive as text formatted by another program ("0.001", "1e-03"): compare them
// with a relative tolerance so that a bound equal to ours lands in our bucket, not the next one.
bool atMost(double value, double bound) noexcept { return value <= bound * (1.0 + 1e-9); }

}  // namespace

std::size_t bucketOf(double seconds) noexcept {
    if (std::isnan(seconds)) return kOverflowBucket;
    for (std::size_t i = 0; i < kFiniteBucketCount; ++i)
        if (seconds <= pglock::hold_buckets[i]) return i;
    return kOverflowBucket;
}

QString bucketLabel(std::size_t bucket) {
    if (bucket >= kFiniteBucketCount)
        return QStringLiteral(">%1s").arg(pglock::hold_buckets[kFiniteBucketCount - 1]);
    const double bound = pglock::hold_buckets[bucket];
    if (bound < 1.0) return QStringLiteral("≤%1ms").arg(std::lround(bound * 1000.0));
    return QStringLiteral("≤%1s").arg(bound);
}

BucketCounts perBucketFromCumulative(std::span<const double> upperBounds, std::span<const double> cumulativeCounts,
                                     double totalCount) {
    std::vector<std::pair<double, double>> cumulative;  // (le, cumulative count)
    const std::size_t n = std::min(upperBounds.size(), cumulativeCounts.size());
    cumulative.reserve(n + 1);
    bool haveInf = false;
    for (std::size_t i = 0; i < n; ++i) {
        if (std::isnan(upperBounds[i]) || std::isnan(cumulativeCounts[i])) continue;
        haveInf = haveInf || std::isinf(upperBounds[i]);
        cumulative.emplace_back(upperBounds[i], cumulativeCounts[i]);
    }
    if (!haveInf && std::isfinite(totalCount)) cumulative.emplace_back(std::numeric_limits<double>::infinity(), totalCount);
    std::sort(cumulative.begin(), cumulative.end());

    BucketCounts out{};
    double previous = 0;
    for (const auto& [le, count] : cumulative) {
        const double inBucket = std::max(0.0, count - previous);
        previous = std::max(previous, count);
        std::size_t target = kOverflowBucket;
        if (!std::isinf(le)) {
            for (std::size_t i = 0; i < kFiniteBucketCount; ++i) {
                if (atMost(le, pglock::hold_buckets[i])) {
                    target = i;
                    break;
                }
            }
        }
        out[target] += inBucket;
    }
    return out;
}

std::optional<double> estimateQuantile(const BucketCounts& counts, double q) {
    if (std::isnan(q)) return std::nullopt;
    q = std::clamp(q, 0.0, 1.0);
    double total = 0;
    for (double c : counts) total += c;
    if (total <= 0) return std::nullopt;
    const double rank = q * total;
    double below = 0;
    for (std::size_t i = 0; i < kFiniteBucketCount; ++i) {
        const double inBucket = counts[i];
        if (inBucket > 0 && below + inBucket >= rank) {
            const double lower = i == 0 ? 0.0 : pglock::hold_buckets[i - 1];
            const double upper = pglock::hold_buckets[i];
            return lower + (upper - lower) * ((rank - below) / inBucket);
        }
        below += inBucket;
    }
    return pglock::hold_buckets[kFiniteBucketCount - 1];
}

QString formatSeconds(double seconds) {
    if (seconds < 0.001) return QStringLiteral("%1 µs").arg(std::lround(seconds * 1e6));
    if (seconds < 1.0) return QStringLiteral("%1 ms").arg(seconds * 1000.0, 0, 'g', 3);
    if (seconds < 120.0) return QStringLiteral("%1 s").arg(seconds, 0, 'g', 3);
    if (seconds < 7200.0) return QStringLiteral("%1 min").arg(seconds / 60.0, 0, 'g', 3);
    return QStringLiteral("%1 h").arg(seconds / 3600.0, 0, 'g', 3);
}

}  // namespace lockscope::charts
