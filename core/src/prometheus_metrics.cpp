#include <prometheus/counter.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>

#include <map>
#include <mutex>
#include <set>
#include <stdexcept>
#include <string>

#include "pglock/key.hpp"
#include "pglock/prometheus.hpp"

namespace pglock {
namespace {

class PrometheusMetrics;

class PrometheusLockMetrics final : public LockMetrics {
public:
    PrometheusLockMetrics(std::shared_ptr<PrometheusMetrics> owner, std::string name, prometheus::Counter& acquired,
                          prometheus::Counter& contended, prometheus::Counter& error, prometheus::Histogram& hold,
                          prometheus::Counter& session_changes, prometheus::Counter& lost,
                          prometheus::Family<prometheus::Gauge>& held)
        : owner_(std::move(owner)), name_(std::move(name)), acquired_(acquired), contended_(contended), error_(error),
          hold_(hold), session_changes_(session_changes), lost_(lost), held_(held) {}
    ~PrometheusLockMetrics() override;

    void count_acquire(Outcome outcome) override {
        switch (outcome) {
            case Outcome::acquired: acquired_.Increment(); break;
            case Outcome::contended: contended_.Increment(); break;
            case Outcome::error: error_.Increment(); break;
        }
    }
    void observe_hold(double seconds) override { hold_.Observe(seconds); }
    void count_session_changed() override { session_changes_.Increment(); }
    void count_lost() override { lost_.Increment(); }

    // One series per guard: (name, pid) is unique while held, since a session lent to a guard is
    // not lent again until the guard lets go. Counted anyway, so a surprise never drops a claim
    // that is still true.
    void held(std::int64_t key, int pid) override {
        std::lock_guard lock(mutex_);
        auto& entry = claims_[pid];
        if (entry.count++ == 0) {
            entry.gauge = &held_.Add({{"name", name_}, {"key", std::to_string(key)}, {"pid", std::to_string(pid)}});
            entry.gauge->Set(1);
        }
    }
    void unheld(int pid) override {
        std::lock_guard lock(mutex_);
        const auto it = claims_.find(pid);
        if (it == claims_.end() || --it->second.count > 0) return;
        held_.Remove(it->second.gauge);
        claims_.erase(it);
    }

private:
    struct Claim {
        int count = 0;
        prometheus::Gauge* gauge = nullptr;
    };
    std::shared_ptr<PrometheusMetrics> owner_;
    std::string name_;
    prometheus::Counter& acquired_;
    prometheus::Counter& contended_;
    prometheus::Counter& error_;
    prometheus::Histogram& hold_;
    prometheus::Counter& session_changes_;
    prometheus::Counter& lost_;
    prometheus::Family<prometheus::Gauge>& held_;
    std::mutex mutex_;
    std::map<int, Claim> claims_;  // by backend pid
};

class PrometheusMetrics final : public Metrics, public std::enable_shared_from_this<PrometheusMetrics> {
public:
    explicit PrometheusMetrics(std::shared_ptr<prometheus::Registry> registry)
        : registry_(std::move(registry)),
          acquires_(prometheus::BuildCounter()
                        .Name("lock_acquires_total")
                        .Help("Advisory lock acquisition attempts by outcome (acquired, contended, error).")
                        .Register(*registry_)),
          holds_(prometheus::BuildHistogram()
                     .Name("lock_hold_duration_seconds")
                     .Help("How long advisory locks were held, from acquisition to release.")
                     .Register(*registry_)),
          session_changes_(prometheus::BuildCounter()
                               .Name("lock_session_changes_total")
                               .Help("Lock statements that ran on a different server backend than the lock "
                                     "(a transaction-mode pooler in between).")
                               .Register(*registry_)),
          lost_(prometheus::BuildCounter()
                    .Name("lock_lost_total")
                    .Help("Held advisory locks whose session died under them (the holder was told: Guard::lost()).")
                    .Register(*registry_)),
          held_(prometheus::BuildGauge()
                    .Name("lock_held_info")
                    .Help("1 per advisory lock this process believes it holds, on the server backend pid; gone when "
                          "released or found lost.")
                    .Register(*registry_)) {
        // Which name-to-key derivation this process uses, so that dashboards can spot a fleet
        // whose services disagree (they would not contend for the same locks).
        prometheus::BuildGauge()
            .Name("pglock_key_scheme_info")
            .Help("The key scheme of this library: version 1 is SHA-256 of the name, first 8 bytes big-endian.")
            .Register(*registry_)
            .Add({{"version", std::to_string(key_scheme_version)}, {"scheme", std::string(key_scheme_name)}})
            .Set(1);
    }

    std::unique_ptr<LockMetrics> register_lock(std::string_view name) override {
        std::string key(name);
        {
            std::lock_guard lock(mutex_);
            if (!names_.insert(key).second) {
                throw std::invalid_argument("lock metrics for name '" + key +
                                            "' are already registered on this registry: wire each name to one Lock");
            }
        }
        // The series stay in the registry after the Lock is gone: counters must not reset under
        // a scraper; a later Lock of the same name continues them.
        auto& acquired = acquires_.Add({{"name", key}, {"outcome", "acquired"}});
        auto& contended = acquires_.Add({{"name", key}, {"outcome", "contended"}});
        auto& error = acquires_.Add({{"name", key}, {"outcome", "error"}});
        auto& hold = holds_.Add({{"name", key}},
                                prometheus::Histogram::BucketBoundaries(std::begin(hold_buckets), std::end(hold_buckets)));
        auto& session_changes = session_changes_.Add({{"name", key}});
        auto& lost = lost_.Add({{"name", key}});
        return std::make_unique<PrometheusLockMetrics>(shared_from_this(), std::move(key), acquired, contended, error,
                                                       hold, session_changes, lost, held_);
    }

    void forget(const std::string& name) {
        std::lock_guard lock(mutex_);
        names_.erase(name);
    }

private:
    std::shared_ptr<prometheus::Registry> registry_;
    prometheus::Family<prometheus::Counter>& acquires_;
    prometheus::Family<prometheus::Histogram>& holds_;
    prometheus::Family<prometheus::Counter>& session_changes_;
    prometheus::Family<prometheus::Counter>& lost_;
    prometheus::Family<prometheus::Gauge>& held_;
    std::mutex mutex_;
    std::set<std::string> names_;
};

PrometheusLockMetrics::~PrometheusLockMetrics() { owner_->forget(name_); }

}  // namespace

std::shared_ptr<Metrics> make_prometheus_metrics(std::shared_ptr<prometheus::Registry> registry) {
    if (!registry) throw std::invalid_argument("make_prometheus_metrics needs a registry");
    // One adapter per registry, so that "a name registered twice on one registry" is caught even
    // when the caller asks for the adapter twice.
    static std::mutex mutex;
    static std::map<const prometheus::Registry*, std::weak_ptr<PrometheusMetrics>> adapters;
    std::lock_guard lock(mutex);
    std::erase_if(adapters, [](const auto& entry) { return entry.second.expired(); });
    auto& slot = adapters[registry.get()];
    if (auto existing = slot.lock()) return existing;
    auto adapter = std::make_shared<PrometheusMetrics>(std::move(registry));
    slot = adapter;
    return adapter;
}

}  // namespace pglock
