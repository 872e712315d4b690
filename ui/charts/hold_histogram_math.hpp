// Hold-duration histograms on the library's buckets (pglock::hold_buckets, 1 ms to 10 min, plus
// an overflow bucket): which bucket a duration falls in, how Prometheus cumulative buckets become
// per-bucket counts, and quantiles estimated from bucket counts. Pure functions, no Qt widgets, so
// the maths is tested on its own.
#pragma once

#include <QString>

#include <array>
#include <cstddef>
#include <optional>
#include <span>
#include <vector>

#include "pglock/observe.hpp"

namespace lockscope::charts {

inline constexpr std::size_t kFiniteBucketCount = std::size(pglock::hold_buckets);
// The finite buckets and the overflow bucket (> 600 s), which Prometheus calls le="+Inf".
inline constexpr std::size_t kBucketCount = kFiniteBucketCount + 1;
inline constexpr std::size_t kOverflowBucket = kFiniteBucketCount;

using BucketCounts = std::array<double, kBucketCount>;

// The bucket of a duration with Prometheus `le` semantics: the first bucket whose upper bound is
// >= seconds, so a hold of exactly 0.001 s counts in "<= 1 ms". Negative durations (clock skew)
// count in the first bucket; NaN and anything above 600 s in the overflow bucket.
std::size_t bucketOf(double seconds) noexcept;

// "≤1ms", "≤5ms", …, "≤600s", ">600s".
QString bucketLabel(std::size_t bucket);

// A scraped histogram: Prometheus cumulative buckets (`le` bounds with their cumulative counts,
// in any order, +Inf optional) turned into per-bucket counts on our buckets.
// - Each scraped bucket (previous le, le] is counted in our bucket that contains its upper bound.
//   With the library's own bounds (the normal case) that is exact; with other bounds it is the
//   nearest honest approximation without inventing a distribution inside a bucket.
// - Cumulative counts summed over several endpoints can dip when an endpoint restarts between
//   scrapes; a negative difference is counted as zero rather than subtracted elsewhere.
// - Without a +Inf bucket, `totalCount` (the _count series) supplies it.
BucketCounts perBucketFromCumulative(std::span<const double> upperBounds, std::span<const double> cumulativeCounts,
                                     double totalCount);

// The q-quantile (0 <= q <= 1) as Prometheus' histogram_quantile estimates it: find the bucket
// holding rank q * total and interpolate linearly inside it (the first bucket starts at 0). When
// the rank falls in the overflow bucket the answer is the highest finite bound, 600 s: the
// histogram cannot say more. nullopt when there is nothing counted.
std::optional<double> estimateQuantile(const BucketCounts& counts, double q);

// "850 µs", "12 ms", "3.4 s", "2.5 min" — short, for chart labels.
QString formatSeconds(double seconds);

}  // namespace lockscope::charts
