#include "exporter_render.hpp"

#include <prometheus/metric_family.h>
#include <prometheus/text_serializer.h>

#include <functional>
#include <sstream>


namespace pglock::cli {

namespace {

using prometheus::ClientMetric;
using prometheus::MetricFamily;
using prometheus::MetricType;

MetricFamily gauge(std::string name, std::string help, double value) {
    MetricFamily f{std::move(name), std::move(help), MetricType::Gauge, {}};
    ClientMetric m;
    m.gauge.value = value;
    f.metric.push_back(std::move(m));
    return f;
}

MetricFamily counter(std::string name, std::string help, double value) {
    MetricFamily f{std::move(name), std::move(help), MetricType::Counter, {}};
    ClientMetric m;
    m.counter.value = value;
    f.metric.push_back(std::move(m));
    return f;
}

MetricFamily per_lock(const ServerSeries& s, std::string name, std::string help,
                      const std::function<double(const LockSeries&)>& value) {
    MetricFamily f{std::move(name), std::move(help), MetricType::Gauge, {}};
    f.metric.reserve(s.locks.size());
    for (const LockSeries& l : s.locks) {
        ClientMetric m;
        m.label.push_back({"name", name_label(l)});
        if (!l.key.empty()) m.label.push_back({"key", l.key});
        m.gauge.value = value(l);
        f.metric.push_back(std::move(m));
    }
    return f;
}

std::string serialize(const std::vector<MetricFamily>& families) {
    std::ostringstream out;
    prometheus::TextSerializer().Serialize(out, families);
    return out.str();
}

}  // namespace

std::string render_target_head(const TargetReport& r) {
    std::vector<MetricFamily> f;
    f.push_back(gauge("pglock_up", "1 when the last poll of the server's advisory locks succeeded, 0 when it failed",
                      r.up ? 1 : 0));
    f.push_back(gauge("pglock_poll_duration_seconds", "How long the last poll of pg_locks and pg_stat_activity took",
                      r.poll_seconds));
    f.push_back(counter("pglock_exporter_polls_total", "Polls of this server since the exporter started",
                        static_cast<double>(r.polls)));
    f.push_back(counter("pglock_exporter_poll_errors_total", "Polls of this server that failed",
                        static_cast<double>(r.poll_errors)));
    f.push_back(counter("pglock_exporter_scrapes_total",
                        "Requests answered for this server, from a fresh poll or the cache",
                        static_cast<double>(r.scrapes)));
    return serialize(f);
}

std::string render_target_series(const ServerSeries& s, bool in_recovery) {
    std::vector<MetricFamily> f;
    f.push_back(gauge("pglock_server_in_recovery", "1 on a standby (its advisory locks are its own)", in_recovery ? 1 : 0));
    f.push_back(gauge("pglock_advisory_locks", "Advisory locks held or waited for in this database",
                      static_cast<double>(s.advisory_locks)));
    f.push_back(gauge("pglock_unknown_keys", "Advisory locks without a name (not in the catalog, no holder identity)",
                      static_cast<double>(s.unknown_keys)));
    f.push_back(gauge("pglock_folded_locks",
                      "Locks counted in name=\"(other)\" or in name=\"(unknown)\" without a key because of the "
                      "series caps (--max-names, --max-unknown-keys)",
                      static_cast<double>(s.folded_names + s.folded_unknown_keys)));
    f.push_back(per_lock(s, "pglock_lock_holders", "Sessions holding the lock",
                         [](const LockSeries& l) { return static_cast<double>(l.holders); }));
    f.push_back(per_lock(s, "pglock_lock_waiters", "Sessions waiting for the lock",
                         [](const LockSeries& l) { return static_cast<double>(l.waiters); }));
    f.push_back(per_lock(s, "pglock_lock_oldest_wait_seconds", "The longest current wait for the lock (0: none)",
                         [](const LockSeries& l) { return l.oldest_wait_seconds; }));
    f.push_back(per_lock(s, "pglock_lock_oldest_hold_seconds",
                         "The longest current hold of the lock, since the exporter first saw it",
                         [](const LockSeries& l) { return l.oldest_hold_seconds; }));
    f.push_back(per_lock(s, "pglock_lock_idle_in_transaction_holders",
                         "Holders of the lock whose session is idle in transaction",
                         [](const LockSeries& l) { return static_cast<double>(l.idle_in_transaction_holders); }));
    f.push_back(per_lock(s, "pglock_lock_waiter_xmin_pin_seconds",
                         "How long the oldest waiter's snapshot has held back the xmin horizon (0: none)",
                         [](const LockSeries& l) { return l.waiter_xmin_pin_seconds; }));
    f.push_back(per_lock(s, "pglock_lock_series_locks",
                         "How many locks the series stands for (more than 1 only for \"(other)\" and \"(unknown)\")",
                         [](const LockSeries& l) { return static_cast<double>(l.locks); }));
    return serialize(f);
}

std::string render_exporter(const std::vector<TargetCounters>& targets) {
    std::vector<MetricFamily> f;
    f.push_back(gauge("pglock_exporter_targets", "Targets in the exporter's --config file",
                      static_cast<double>(targets.size())));
    const auto per_target = [&](std::string name, std::string help, auto field) {
        MetricFamily fam{std::move(name), std::move(help), MetricType::Counter, {}};
        for (const TargetCounters& t : targets) {
            ClientMetric m;
            m.label.push_back({"target", t.target});
            m.counter.value = static_cast<double>(t.*field);
            fam.metric.push_back(std::move(m));
        }
        f.push_back(std::move(fam));
    };
    per_target("pglock_exporter_polls_total", "Polls of the target since the exporter started", &TargetCounters::polls);
    per_target("pglock_exporter_poll_errors_total", "Polls of the target that failed", &TargetCounters::poll_errors);
    per_target("pglock_exporter_scrapes_total", "/probe requests answered for the target", &TargetCounters::scrapes);
    return serialize(f);
}

}  // namespace pglock::cli
