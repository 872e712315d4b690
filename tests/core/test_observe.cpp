// Logger and metrics: recording implementations of pglock::Logger / pglock::Metrics, and the
// prometheus-cpp adapter on a real registry when the library is built with it.
#include <QElapsedTimer>
#include <QtTest>

#include <algorithm>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "core_test_util.hpp"

#ifdef PGLOCK_WITH_PROMETHEUS
#include <prometheus/family.h>
#include <prometheus/metric_family.h>
#include <prometheus/registry.h>

#include "pglock/prometheus.hpp"
#endif

using namespace std::chrono_literals;
using pglock::Context;
using pglock::Errc;
using pglock::Lock;
using pglock::LogLevel;
using pglock::Outcome;
using pgt::guarded;
using pgt::qba;
using pgt::RawConn;

namespace {

struct LogEntry {
    LogLevel level;
    std::string message;
    std::map<std::string, std::string> attrs;
};

class RecordingLogger : public pglock::Logger {
public:
    void log(LogLevel level, std::string_view message, std::span<const pglock::LogAttr> attrs) override {
        LogEntry e{level, std::string(message), {}};
        for (const auto& a : attrs) e.attrs[std::string(a.key)] = a.value;
        std::lock_guard lk(mu_);
        entries_.push_back(std::move(e));
    }
    std::vector<LogEntry> entries() const {
        std::lock_guard lk(mu_);
        return entries_;
    }
    std::vector<std::string> messages() const {
        std::vector<std::string> out;
        for (const auto& e : entries()) out.push_back(e.message);
        return out;
    }

private:
    mutable std::mutex mu_;
    std::vector<LogEntry> entries_;
};

// Counts what a lock reports. Enforces the Metrics contract (one live LockMetrics per name)
// like a registry would.
class RecordingMetrics : public pglock::Metrics {
public:
    struct State {
        std::mutex mu;
        std::map<std::string, std::map<Outcome, int>> acquires;
        std::map<std::string, std::vector<double>> holds;
        std::vector<std::string> registrations;
        std::set<std::string> live;
    };

    class Series : public pglock::LockMetrics {
    public:
        Series(std::shared_ptr<State> st, std::string name) : st_(std::move(st)), name_(std::move(name)) {}
        ~Series() override {
            std::lock_guard lk(st_->mu);
            st_->live.erase(name_);
        }
        void count_acquire(Outcome o) override {
            std::lock_guard lk(st_->mu);
            ++st_->acquires[name_][o];
        }
        void observe_hold(double seconds) override {
            std::lock_guard lk(st_->mu);
            st_->holds[name_].push_back(seconds);
        }

    private:
        std::shared_ptr<State> st_;
        std::string name_;
    };

    std::unique_ptr<pglock::LockMetrics> register_lock(std::string_view name) override {
        std::lock_guard lk(st_->mu);
        const std::string n(name);
        if (!st_->live.insert(n).second) throw std::invalid_argument("duplicate lock metrics: " + n);
        st_->registrations.push_back(n);
        return std::make_unique<Series>(st_, n);
    }

    int count(const std::string& name, Outcome o) const {
        std::lock_guard lk(st_->mu);
        auto it = st_->acquires.find(name);
        if (it == st_->acquires.end()) return 0;
        auto jt = it->second.find(o);
        return jt == it->second.end() ? 0 : jt->second;
    }
    std::vector<double> holds(const std::string& name) const {
        std::lock_guard lk(st_->mu);
        auto it = st_->holds.find(name);
        return it == st_->holds.end() ? std::vector<double>{} : it->second;
    }
    std::vector<std::string> registrations() const {
        std::lock_guard lk(st_->mu);
        return st_->registrations;
    }

private:
    std::shared_ptr<State> st_ = std::make_shared<State>();
};

const char* level_name(LogLevel l) {
    switch (l) {
    case LogLevel::debug: return "debug";
    case LogLevel::info: return "info";
    case LogLevel::warn: return "warn";
    case LogLevel::error: return "error";
    }
    return "?";
}

std::string dump(const std::vector<LogEntry>& entries) {
    std::string s;
    for (const auto& e : entries) {
        s += "\n  ";
        s += level_name(e.level);
        s += " \"" + e.message + "\"";
        for (const auto& [k, v] : e.attrs) s += " " + k + "=" + v;
    }
    return s;
}

// "host=127.0.0.1 port=1": nobody listens there.
const std::string kUnreachable = "host=127.0.0.1 port=1 connect_timeout=2";

}  // namespace

class TestObserve : public QObject {
    Q_OBJECT

    std::string dsn_;
    std::unique_ptr<pglock::Pool> pool_;

private slots:
    void initTestCase() {
        PGT_REQUIRE_DSN(dsn_);
        guarded([&] { pool_ = std::make_unique<pglock::Pool>(dsn_); });
    }
    void cleanupTestCase() { pool_.reset(); }

    // Go: TestWithLogger_*: acquired, contended, released (held_ms), each with name.
    void logger_sees_acquire_contend_release() {
        guarded([&] {
            const auto name = pgt::unique_name();
            auto logger = std::make_shared<RecordingLogger>();
            pglock::LockOptions opts;
            opts.logger = logger;
            Lock lk(*pool_, name, opts);

            QElapsedTimer timer;
            auto g = lk.try_acquire();
            timer.start();
            QVERIFY(g.has_value());
            QVERIFY(!lk.try_acquire().has_value());
            // A hold of a known minimum length, so held_ms can be checked for plausibility
            // (this sleep is the work under the lock, not synchronisation).
            std::this_thread::sleep_for(30ms);
            QVERIFY(!g->release());
            const auto elapsed = timer.elapsed();
            QVERIFY(!g->release());  // no second "released"

            const auto entries = logger->entries();
            const std::vector<std::string> expected{"lock: acquired", "lock: contended", "lock: released"};
            QVERIFY2(logger->messages() == expected, ("log was:" + dump(entries)).c_str());
            for (const auto& e : entries) {
                QVERIFY2(e.level == LogLevel::debug, ("not at debug:" + dump({e})).c_str());
                QVERIFY2(e.attrs.count("name") == 1, ("no name attr:" + dump({e})).c_str());
                QCOMPARE(qba(e.attrs.at("name")), qba(name));
            }
            const auto& released = entries.back();
            QVERIFY2(released.attrs.count("held_ms") == 1, ("no held_ms attr:" + dump({released})).c_str());
            bool ok = false;
            const qlonglong held_ms = QString::fromStdString(released.attrs.at("held_ms")).toLongLong(&ok);
            QVERIFY2(ok, ("held_ms is not an integer:" + dump({released})).c_str());
            QVERIFY2(held_ms >= 30 && held_ms <= elapsed + 50,
                     qPrintable(QStringLiteral("held_ms=%1, measured hold %2 ms").arg(held_ms).arg(elapsed)));
        });
    }

    void logger_disabled_level_gets_nothing() {
        guarded([&] {
            struct Quiet : RecordingLogger {
                bool enabled(LogLevel level) const noexcept override { return level >= LogLevel::warn; }
            };
            auto logger = std::make_shared<Quiet>();
            pglock::LockOptions opts;
            opts.logger = logger;
            Lock lk(*pool_, pgt::unique_name(), opts);
            auto g = lk.try_acquire();
            QVERIFY(g.has_value());
            QVERIFY(!lk.try_acquire().has_value());
            QVERIFY(!g->release());
            QVERIFY2(logger->entries().empty(), ("debug events logged although disabled:" + dump(logger->entries())).c_str());
        });
    }

    // Go: warn "lock: acquire failed" when the server is down.
    void logger_sees_acquire_failed() {
        guarded([&] {
            const auto name = pgt::unique_name();
            auto logger = std::make_shared<RecordingLogger>();
            auto metrics = std::make_shared<RecordingMetrics>();
            pglock::LockOptions opts;
            opts.logger = logger;
            opts.metrics = metrics;
            pglock::Pool dead(kUnreachable);
            Lock lk(dead, name, opts);

            QElapsedTimer timer;
            timer.start();
            const auto err = pgt::catch_error([&] { (void)lk.try_acquire(Context::with_timeout(20s)); });
            QVERIFY2(err.has_value(), "try_acquire on an unreachable server did not fail");
            QVERIFY2(timer.elapsed() < 15000, "connect to an unreachable server took too long");
            QVERIFY2(err->code() == Errc::acquire_failed,
                     ("a down server should be lock_acquire_failed (seed semantics), got " + pgt::describe(*err)).c_str());

            const auto entries = logger->entries();
            const auto it = std::find_if(entries.begin(), entries.end(),
                                         [](const LogEntry& e) { return e.message == "lock: acquire failed"; });
            QVERIFY2(it != entries.end(), ("no \"lock: acquire failed\"; log was:" + dump(entries)).c_str());
            QVERIFY2(it->level == LogLevel::warn, ("not at warn:" + dump({*it})).c_str());
            QVERIFY2(it->attrs.count("name") && it->attrs.at("name") == name, ("name attr:" + dump({*it})).c_str());
            QVERIFY2(it->attrs.count("err") && !it->attrs.at("err").empty(), ("err attr:" + dump({*it})).c_str());
            for (const auto& e : entries)
                QVERIFY2(e.message != "lock: acquired" && e.message != "lock: contended",
                         ("success logged on failure:" + dump(entries)).c_str());

            QCOMPARE(metrics->count(name, Outcome::error), 1);
            QCOMPARE(metrics->count(name, Outcome::acquired), 0);
            QCOMPARE(metrics->count(name, Outcome::contended), 0);
        });
    }

    // A cancelled or timed-out acquire is the caller's decision, not a failure of the lock: like
    // the Go package, it counts no outcome (an `error` series would page someone for every
    // deadline a service sets), logs debug "lock: acquire canceled", never warn.
    void cancelled_acquire_counts_nothing() {
        guarded([&] {
            const auto name = pgt::unique_name();
            auto logger = std::make_shared<RecordingLogger>();
            auto metrics = std::make_shared<RecordingMetrics>();
            pglock::LockOptions opts;
            opts.logger = logger;
            opts.metrics = metrics;
            Lock lk(*pool_, name, opts);
            RawConn holder(dsn_);
            holder.lock(lk.key());
            PGT_EXPECT_ERROR(lk.acquire(Context::with_timeout(200ms)), Errc::deadline_exceeded);
            std::stop_source stop;
            stop.request_stop();
            PGT_EXPECT_ERROR(lk.acquire(Context{stop.get_token(), std::nullopt}), Errc::canceled);
            PGT_EXPECT_ERROR(lk.try_acquire(Context{stop.get_token(), std::nullopt}), Errc::canceled);
            QCOMPARE(metrics->count(name, Outcome::error), 0);
            QCOMPARE(metrics->count(name, Outcome::acquired), 0);
            QCOMPARE(metrics->count(name, Outcome::contended), 0);
            const auto entries = logger->entries();
            QCOMPARE(std::count_if(entries.begin(), entries.end(),
                                   [](const LogEntry& e) {
                                       return e.message == "lock: acquire canceled" && e.level == LogLevel::debug;
                                   }),
                     3L);
            for (const auto& e : entries) QVERIFY2(e.level != LogLevel::warn, ("warned:" + dump(entries)).c_str());
            QVERIFY(holder.unlock(lk.key()));
        });
    }

    // The unlock fails on a session that is alive: here the caller unlocked the key behind the
    // guard's back on its own session, so pg_advisory_unlock returns false. release() says
    // lock_release_failed, warns "lock: release failed" with the reason, and closes the session
    // (its state is not what the guard thinks).
    void release_failed_warns_on_a_live_session() {
        guarded([&] {
            const auto name = pgt::unique_name();
            auto logger = std::make_shared<RecordingLogger>();
            pglock::LockOptions opts;
            opts.logger = logger;
            Lock lk(*pool_, name, opts);
            auto g = lk.acquire_conn(Context::with_timeout(10s));
            const int pid = g.backend_pid();
            {
                auto s = g.session();
                QVERIFY(s->exec("SELECT pg_advisory_unlock($1::bigint)", {lk.key()}).get_bool(0, 0));
            }
            QCOMPARE(g.release(), std::error_code(pglock::make_error_code(Errc::release_failed)));
            QVERIFY(!g.lost());
            const auto entries = logger->entries();
            const auto it = std::find_if(entries.begin(), entries.end(),
                                         [](const LogEntry& e) { return e.message == "lock: release failed"; });
            QVERIFY2(it != entries.end(), ("no \"lock: release failed\"; log was:" + dump(entries)).c_str());
            QCOMPARE(it->level, LogLevel::warn);
            QCOMPARE(qba(it->attrs.at("name")), qba(name));
            QVERIFY2(it->attrs.at("err").find("pg_advisory_unlock returned false") != std::string::npos, dump({*it}).c_str());
            RawConn obs(dsn_);
            QVERIFY2(pgt::wait_until([&] { return !pgt::backend_exists(obs, pid); }, 5s), "the session was not closed");
        });
    }

    void metrics_count_and_observe_once() {
        guarded([&] {
            const auto name = pgt::unique_name();
            auto metrics = std::make_shared<RecordingMetrics>();
            pglock::LockOptions opts;
            opts.metrics = metrics;
            {
                Lock lk(*pool_, name, opts);
                QCOMPARE(metrics->registrations(), std::vector<std::string>{name});

                auto g = lk.try_acquire();
                QVERIFY(g.has_value());
                QCOMPARE(metrics->count(name, Outcome::acquired), 1);
                QVERIFY(metrics->holds(name).empty());

                QVERIFY(!lk.try_acquire().has_value());
                QCOMPARE(metrics->count(name, Outcome::contended), 1);

                QVERIFY(!g->release());
                QVERIFY(!g->release());
                g.reset();  // the destructor must not observe again
                const auto holds = metrics->holds(name);
                QCOMPARE(holds.size(), std::size_t{1});
                QVERIFY2(holds[0] >= 0.0 && holds[0] < 60.0, qPrintable(QString::number(holds[0])));

                // acquire() counts as well.
                auto g2 = lk.acquire(Context::with_timeout(10s));
                QCOMPARE(metrics->count(name, Outcome::acquired), 2);
                g2.release();
                QCOMPARE(metrics->holds(name).size(), std::size_t{2});

                // Transaction-level locks count the outcome but never a hold (released by the server).
                {
                    pglock::Transaction tx(*pool_);
                    QVERIFY(lk.try_acquire_xact(&tx));
                    tx.commit();
                }
                QCOMPARE(metrics->count(name, Outcome::acquired), 3);
                QCOMPARE(metrics->holds(name).size(), std::size_t{2});
                QCOMPARE(metrics->count(name, Outcome::error), 0);

                // One registration per Lock: a second Lock of the name is refused while this lives.
                bool refused = false;
                try {
                    Lock dup(*pool_, name, opts);
                } catch (const std::invalid_argument&) {
                    refused = true;
                }
                QVERIFY2(refused, "a second Lock of the same name on the same Metrics was accepted");
            }
            // ... and accepted once the first is gone.
            Lock again(*pool_, name, opts);
            QCOMPARE(metrics->registrations().size(), std::size_t{2});
        });
    }

    // The slots exist in every build (moc need not see the define); without prometheus-cpp they skip.
    void prometheus_series() {
#ifndef PGLOCK_WITH_PROMETHEUS
        QSKIP("pglock built without PGLOCK_WITH_PROMETHEUS");
#else
        guarded([&] {
            const auto name = pgt::unique_name();
            auto registry = std::make_shared<prometheus::Registry>();
            pglock::LockOptions opts;
            opts.metrics = pglock::make_prometheus_metrics(registry);
            QVERIFY(opts.metrics != nullptr);
            Lock lk(*pool_, name, opts);

            auto g = lk.try_acquire();
            QVERIFY(g.has_value());
            QVERIFY(!lk.try_acquire().has_value());
            QVERIFY(!g->release());
            QVERIFY(!g->release());

            const auto families = registry->Collect();
            const prometheus::MetricFamily* acquires = nullptr;
            const prometheus::MetricFamily* holds = nullptr;
            std::string seen;
            for (const auto& f : families) {
                seen += " " + f.name;
                if (f.name == "lock_acquires_total") acquires = &f;
                if (f.name == "lock_hold_duration_seconds") holds = &f;
            }
            QVERIFY2(acquires, ("no lock_acquires_total; families:" + seen).c_str());
            QVERIFY2(holds, ("no lock_hold_duration_seconds; families:" + seen).c_str());
            QCOMPARE(int(acquires->type), int(prometheus::MetricType::Counter));
            QCOMPARE(int(holds->type), int(prometheus::MetricType::Histogram));

            auto label = [](const prometheus::ClientMetric& m, const std::string& key) -> std::string {
                for (const auto& l : m.label)
                    if (l.name == key) return l.value;
                return "<none>";
            };
            std::map<std::string, double> by_outcome;
            for (const auto& m : acquires->metric) {
                QCOMPARE(qba(label(m, "name")), qba(name));
                by_outcome[label(m, "outcome")] = m.counter.value;
            }
            QCOMPARE(by_outcome["acquired"], 1.0);
            QCOMPARE(by_outcome["contended"], 1.0);
            for (const auto& [outcome, value] : by_outcome) {
                QVERIFY2(outcome == "acquired" || outcome == "contended" || outcome == "error",
                         ("unexpected outcome label " + outcome).c_str());
                if (outcome == "error") QCOMPARE(value, 0.0);
            }

            QCOMPARE(holds->metric.size(), std::size_t{1});
            const auto& h = holds->metric.front();
            QCOMPARE(qba(label(h, "name")), qba(name));
            QCOMPARE(h.histogram.sample_count, std::uint64_t{1});
            QVERIFY(h.histogram.sample_sum >= 0.0);
            const std::vector<double> expected{0.001, 0.005, 0.025, 0.1, 0.5, 1, 5, 30, 120, 600,
                                               std::numeric_limits<double>::infinity()};
            std::vector<double> bounds;
            for (const auto& b : h.histogram.bucket) bounds.push_back(b.upper_bound);
            QCOMPARE(bounds, expected);
            QCOMPARE(h.histogram.bucket.back().cumulative_count, std::uint64_t{1});

            // A second Lock of the same name on the same registry is refused while the first lives.
            bool refused = false;
            try {
                Lock dup(*pool_, name, opts);
            } catch (const std::invalid_argument&) {
                refused = true;
            }
            QVERIFY2(refused, "a second Lock of the same name on the same registry was accepted");
            // Another name is fine.
            Lock other(*pool_, pgt::unique_name("prometheus.other"), opts);
            QVERIFY(other.try_acquire().has_value());
        });
#endif
    }

    void prometheus_name_reusable_after_lock_dies() {
#ifndef PGLOCK_WITH_PROMETHEUS
        QSKIP("pglock built without PGLOCK_WITH_PROMETHEUS");
#else
        guarded([&] {
            const auto name = pgt::unique_name();
            auto registry = std::make_shared<prometheus::Registry>();
            pglock::LockOptions opts;
            opts.metrics = pglock::make_prometheus_metrics(registry);
            { Lock first(*pool_, name, opts); }
            Lock second(*pool_, name, opts);
            auto g = second.try_acquire();
            QVERIFY(g.has_value());
        });
#endif
    }
};

QTEST_GUILESS_MAIN(TestObserve)
#include "test_observe.moc"
