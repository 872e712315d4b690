// pglock metrics on a prometheus-cpp registry (only when built with PGLOCK_WITH_PROMETHEUS).
#pragma once

#include <memory>

#include "pglock/observe.hpp"

namespace prometheus {
class Registry;
}

namespace pglock {

// Registers lock_acquires_total (counter) and lock_hold_duration_seconds (histogram, hold_buckets)
// on the registry; one LockMetrics per lock name.
std::shared_ptr<Metrics> make_prometheus_metrics(std::shared_ptr<prometheus::Registry> registry);

}  // namespace pglock
