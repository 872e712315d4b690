#include "chaos_driver.hpp"

#include <libpq-fe.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <sstream>
#include <stdexcept>
#include <stop_token>
#include <thread>
#include <vector>

#include "pglock/pglock.hpp"

namespace pglock::chaos {
namespace {

using namespace std::chrono_literals;
using Tp = Clock::time_point;
using Ms = std::chrono::duration<double, std::milli>;

constexpr auto kPidReuseWindow = 5s;      // a kill this long before a call may still hit its backend
constexpr auto kRecoveryBound = 10s;      // after a restart, locks are taken again within this
constexpr std::size_t kMaxSamples = 12;

double ms(Clock::duration d) { return Ms(d).count(); }

// ---- a plain libpq session, independent of pglock, that reconnects after a fault ------------

using Rows = std::vector<std::vector<std::string>>;

class RawPg {
public:
    explicit RawPg(std::string dsn) : dsn_(std::move(dsn)) {}
    RawPg(const RawPg&) = delete;
    RawPg& operator=(const RawPg&) = delete;
    ~RawPg() { close(); }

    // Runs one parameterized statement; reconnects first when the connection broke (a restart).
    // nullopt on any failure; error() tells why.
    std::optional<Rows> exec(const std::string& sql, const std::vector<std::string>& params = {}) {
        if (conn_ && PQstatus(conn_) != CONNECTION_OK) close();
        if (!conn_) {
            conn_ = PQconnectdb(dsn_.c_str());
            if (PQstatus(conn_) != CONNECTION_OK) {
                error_ = PQerrorMessage(conn_);
                close();
                return std::nullopt;
            }
        }
        std::vector<const char*> values;
        for (const auto& p : params) values.push_back(p.c_str());
        PGresult* res = PQexecParams(conn_, sql.c_str(), static_cast<int>(values.size()), nullptr,
                                     values.empty() ? nullptr : values.data(), nullptr, nullptr, 0);
        const auto status = PQresultStatus(res);
        std::optional<Rows> rows;
        if (status == PGRES_TUPLES_OK || status == PGRES_COMMAND_OK) {
            rows.emplace();
            for (int r = 0; r < PQntuples(res); ++r) {
                auto& row = rows->emplace_back();
                for (int c = 0; c < PQnfields(res); ++c) row.emplace_back(PQgetvalue(res, r, c));
            }
        } else {
            error_ = PQerrorMessage(conn_);
        }
        PQclear(res);
        return rows;
    }
    const std::string& error() const noexcept { return error_; }

private:
    void close() noexcept {
        if (conn_) PQfinish(conn_);
        conn_ = nullptr;
    }
    std::string dsn_;
    PGconn* conn_ = nullptr;
    std::string error_;
};

// The run's keys as a bigint[] literal, and the condition that selects their pg_locks rows.
constexpr const char* kKeyRows =
    "l.locktype = 'advisory' AND l.objsubid = 1 "
    "AND ((l.classid::bigint << 32) | l.objid::bigint) = ANY($1::bigint[])";

std::string key_array(const std::vector<std::int64_t>& keys) {
    std::string s = "{";
    for (auto k : keys) s += (s.size() > 1 ? "," : "") + std::to_string(k);
    return s + "}";
}

// ---- records -------------------------------------------------------------------------------

struct Section {
    int name = 0;
    int worker = 0;
    int pid = 0;
    Tp call, enter, exit, release_done;
    std::atomic<std::int64_t> notice_ns{-1};  // on_lost time (steady clock ns), set on any thread
    bool release_ok = false;
    std::string release_error;
};

struct Kill {
    int pid = 0;
    Tp at;                  // just before pg_terminate_backend was sent
    std::optional<Tp> gone; // when pg_stat_activity no longer showed the backend
};

struct Restart {
    Tp begin, end;
    bool ok = false;
};

struct ProbeFailure {
    int pid = 0;
    Tp lent, failed;
    std::string error;
};

struct Shared {
    const Config& cfg;
    Tp start;
    std::vector<std::string> names;  // hot first, then each worker's own
    std::vector<std::int64_t> keys;
    std::stop_source stop;

    std::mutex mu;  // guards everything below
    std::vector<std::shared_ptr<Section>> sections;
    std::vector<Kill> kills;
    std::vector<Restart> restarts;
    std::vector<ProbeFailure> probe_failures;
    Report counts;

    explicit Shared(const Config& c) : cfg(c), start(Clock::now()) {}

    template <class F>
    void update(F&& f) {
        std::lock_guard lk(mu);
        f(counts);
    }
    void log(const std::string& line) {
        if (cfg.log) cfg.log(line);
    }
};

// Waits `d` or until the run stops; false when it stopped.
bool pause(std::stop_token stop, Clock::duration d) {
    std::mutex m;
    std::condition_variable_any cv;
    std::unique_lock lk(m);
    return !cv.wait_for(lk, stop, d, [] { return false; }) && !stop.stop_requested();
}

// ---- the canceller: requests stop on acquire() calls at random moments -------------------------

class Canceller {
public:
    Canceller() : thread_([this](std::stop_token st) { loop(st); }) {}
    ~Canceller() {
        thread_.request_stop();
        cv_.notify_all();
    }
    void schedule(std::shared_ptr<std::stop_source> source, Tp when) {
        {
            std::lock_guard lk(mu_);
            due_.emplace(when, std::move(source));
        }
        cv_.notify_all();
    }

private:
    void loop(std::stop_token st) {
        std::unique_lock lk(mu_);
        while (!st.stop_requested()) {
            if (due_.empty()) {
                cv_.wait(lk, st, [&] { return !due_.empty(); });
                continue;
            }
            auto it = due_.begin();
            if (it->first > Clock::now()) {
                const Tp when = it->first;
                cv_.wait_until(lk, st, when, [&] { return !due_.empty() && due_.begin()->first < when; });
                continue;
            }
            auto source = std::move(it->second);
            due_.erase(it);
            lk.unlock();
            source->request_stop();  // harmless when the call has long returned
            lk.lock();
        }
    }
    std::mutex mu_;
    std::condition_variable_any cv_;
    std::multimap<Tp, std::shared_ptr<std::stop_source>> due_;
    std::jthread thread_;  // last: starts after, and stops before, the members it uses
};

// ---- workers ---------------------------------------------------------------------------------

enum class Op { try_acquire, deadline, stop, run_once };
const char* op_name(Op op) {
    switch (op) {
        case Op::try_acquire: return "try";
        case Op::deadline: return "deadline";
        case Op::stop: return "stop";
        case Op::run_once: return "run_once";
    }
    return "?";
}

class Worker {
public:
    Worker(Shared& sh, Pool& pool, Canceller& canceller, int id, std::uint64_t seed)
        : sh_(sh), pool_(pool), canceller_(canceller), id_(id), rng_(seed) {
        const int hot = sh.cfg.hot_names, own = sh.cfg.unique_names_per_worker;
        for (int i = 0; i < hot; ++i) names_.push_back(i);
        for (int i = 0; i < own; ++i) names_.push_back(hot + id * own + i);
        for (int n : names_) locks_.emplace(n, Lock(pool, sh.names[static_cast<std::size_t>(n)]));
    }

    void run() {
        const auto stop = sh_.stop.get_token();
        while (!stop.stop_requested()) {
            if (chance(0.05)) {
                probe_pool();
            } else {
                attempt();
            }
            pause(stop, std::chrono::microseconds(uniform(0, 3000)));
        }
    }

private:
    bool chance(double p) { return std::uniform_real_distribution<double>(0, 1)(rng_) < p; }
    long uniform(long lo, long hi) { return std::uniform_int_distribution<long>(lo, hi)(rng_); }

    int pick_name() {
        const int hot = sh_.cfg.hot_names;
        if (hot > 0 && (names_.size() == static_cast<std::size_t>(hot) || chance(0.7)))
            return names_[static_cast<std::size_t>(uniform(0, hot - 1))];
        return names_[static_cast<std::size_t>(uniform(hot, static_cast<long>(names_.size()) - 1))];
    }

    void attempt() {
        const int name = pick_name();
        Lock& lock = locks_.at(name);
        const double r = std::uniform_real_distribution<double>(0, 1)(rng_);
        const Op op = r < 0.25 ? Op::try_acquire : r < 0.55 ? Op::deadline : r < 0.8 ? Op::stop : Op::run_once;
        auto sec = std::make_shared<Section>();
        sec->name = name;
        sec->worker = id_;
        sec->call = Clock::now();
        try {
            switch (op) {
                case Op::try_acquire: {
                    auto g = lock.try_acquire(Context::with_timeout(5s));
                    if (g) critical(*g, sec, op);
                    else sh_.update([](Report& c) { ++c.contended; });
                    break;
                }
                case Op::deadline: {
                    auto g = lock.acquire(Context::with_timeout(std::chrono::milliseconds(uniform(5, 150))));
                    critical(g, sec, op);
                    break;
                }
                case Op::stop: {
                    auto source = std::make_shared<std::stop_source>();
                    canceller_.schedule(source, Clock::now() + std::chrono::microseconds(uniform(0, 150000)));
                    // The deadline is only a safety net: the canceller fires long before.
                    auto g = lock.acquire(Context{source->get_token(), Clock::now() + 10s});
                    critical(g, sec, op);
                    break;
                }
                case Op::run_once: {
                    const bool ran = lock.run_once(Context::with_timeout(5s), [&](Guard& g) { critical(g, sec, op); });
                    if (!ran) sh_.update([](Report& c) { ++c.contended; });
                    break;
                }
            }
        } catch (const Error& e) {
            failed(e);
        }
    }

    void failed(const Error& e) {
        const auto code = e.code();
        sh_.update([&](Report& c) {
            if (code == Errc::canceled) {
                ++c.cancels;
            } else if (code == Errc::deadline_exceeded) {
                ++c.deadlines;
            } else {
                ++c.errors[std::string(code_string(code))];
                const std::string msg = e.what();
                if (c.error_samples.size() < kMaxSamples &&
                    std::find(c.error_samples.begin(), c.error_samples.end(), msg) == c.error_samples.end())
                    c.error_samples.push_back(msg);
            }
        });
        // A server going down makes every call fail at once: back off a little, randomly.
        if (code != Errc::canceled && code != Errc::deadline_exceeded)
            pause(sh_.stop.get_token(), std::chrono::milliseconds(uniform(5, 50)));
    }

    // The critical section: hold for a random time, stop at once when the lock is lost.
    void critical(Guard& g, const std::shared_ptr<Section>& sec, Op op) {
        sec->pid = g.backend_pid();
        // Registered before the section starts, so a loss at any point is timed. The callback
        // keeps the record alive: it may run on the watcher thread after this returns.
        g.on_lost([sec] {
            sec->notice_ns.store(std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch()).count());
        });
        sec->enter = Clock::now();
        const auto lost = g.lost_token();
        if (chance(0.3)) {
            // Work on the lock's own session (acquire_conn); a fault here surfaces as an error
            // and, when the lease ends, as the lost notice.
            try {
                auto s = g.session();
                (void)s->exec("SELECT $1::int", {id_}, Context::with_timeout(5s));
            } catch (const Error&) {
            }
        }
        const long hold_us = chance(0.1) ? uniform(50000, 300000) : uniform(0, 30000);
        if (!lost.stop_requested()) {
            std::mutex m;
            std::condition_variable_any cv;
            std::unique_lock lk(m);
            cv.wait_for(lk, lost, std::chrono::microseconds(hold_us), [] { return false; });
        }
        sec->exit = Clock::now();
        const auto ec = g.release();
        sec->release_done = Clock::now();
        sec->release_ok = !ec;
        if (ec) sec->release_error = ec.message();
        std::lock_guard lk(sh_.mu);
        sh_.sections.push_back(sec);
        ++sh_.counts.acquisitions;
        ++sh_.counts.acquisitions_by_op[op_name(op)];
    }

    // The pool must never lend a session whose death it could have seen.
    void probe_pool() {
        try {
            auto s = pool_.acquire(Context::with_timeout(5s));
            const Tp lent = Clock::now();
            sh_.update([](Report& c) { ++c.pool_probes; });
            try {
                (void)s->exec("SELECT 1", {}, Context::with_timeout(5s));
            } catch (const Error& e) {
                std::lock_guard lk(sh_.mu);
                sh_.probe_failures.push_back({s->backend_pid(), lent, Clock::now(), e.what()});
            }
        } catch (const Error& e) {
            failed(e);  // connecting during a restart: not a lent session
        }
    }

    Shared& sh_;
    Pool& pool_;
    Canceller& canceller_;
    int id_;
    std::mt19937_64 rng_;
    std::vector<int> names_;
    std::map<int, Lock> locks_;
};

// ---- the killer and the restarter ----------------------------------------------------------------

void killer(Shared& sh, std::uint64_t seed) {
    const auto stop = sh.stop.get_token();
    std::mt19937_64 rng(seed);
    RawPg pg(sh.cfg.dsn);
    const std::string keys = key_array(sh.keys);
    const double mean = static_cast<double>(sh.cfg.kill_every.count());
    for (;;) {
        const auto wait = std::chrono::milliseconds(
            static_cast<long>(std::uniform_real_distribution<double>(0.5 * mean, 1.5 * mean)(rng)));
        if (!pause(stop, wait)) return;
        // Mostly holders (their guards must learn of it), sometimes a session waiting for a lock
        // (its acquire must fail cleanly and its session must not be lent again).
        const bool holder = std::uniform_real_distribution<double>(0, 1)(rng) < 0.8;
        auto rows = pg.exec(std::string("SELECT l.pid FROM pg_locks l WHERE l.granted = $2::boolean AND ") + kKeyRows,
                            {keys, holder ? "true" : "false"});
        if (!rows || rows->empty()) continue;
        const auto& row = (*rows)[std::uniform_int_distribution<std::size_t>(0, rows->size() - 1)(rng)];
        Kill k;
        k.pid = std::stoi(row[0]);
        k.at = Clock::now();
        auto res = pg.exec("SELECT pg_terminate_backend($1::int)", {row[0]});
        if (!res || res->empty() || (*res)[0][0] != "t") continue;  // gone already: no fault injected
        // When the server stops showing it: from then on its socket's EOF is on its way.
        const Tp limit = Clock::now() + 3s;
        while (Clock::now() < limit) {
            auto alive = pg.exec("SELECT count(*) FROM pg_stat_activity WHERE pid = $1::int", {row[0]});
            if (alive && !alive->empty() && (*alive)[0][0] == "0") {
                k.gone = Clock::now();
                break;
            }
            std::this_thread::sleep_for(2ms);  // polling the server; there is no event to wait for
        }
        std::lock_guard lk(sh.mu);
        sh.kills.push_back(k);
    }
}

void restarter(Shared& sh, Tp end) {
    const auto stop = sh.stop.get_token();
    // Restarts happen in the middle: the last stretch of the run shows that everything recovered.
    const auto quiet_tail = std::max<Clock::duration>(sh.cfg.restart_every / 2, kRecoveryBound);
    for (;;) {
        if (!pause(stop, sh.cfg.restart_every)) return;
        if (Clock::now() + quiet_tail > end) return;
        Restart r;
        r.begin = Clock::now();
        const int rc = std::system(sh.cfg.restart_command.c_str());
        r.end = Clock::now();
        r.ok = rc == 0;
        sh.log("restart " + std::string(r.ok ? "done" : "FAILED") + " in " + std::to_string(static_cast<long>(ms(r.end - r.begin))) + " ms");
        std::lock_guard lk(sh.mu);
        sh.restarts.push_back(r);
        if (r.ok) ++sh.counts.restarts;
    }
}

// ---- the checks ------------------------------------------------------------------------------

void violation(Report& rep, const std::string& kind, const std::string& detail) {
    ++rep.violations[kind];
    if (rep.violation_samples.size() < kMaxSamples) rep.violation_samples.push_back(kind + ": " + detail);
}

struct Analysis {
    Shared& sh;
    Report& rep;
    Tp t0;

    std::string at(Tp t) const {
        std::ostringstream os;
        os.precision(1);
        os << std::fixed << ms(t - t0) << " ms";
        return os.str();
    }

    // A kill of this pid may have hit a backend that a call made at `call` used: not when the
    // backend was seen gone before the call (the pid would be a new backend's), nor long before.
    static bool may_be_same_backend(const Kill& k, Tp call) {
        return k.gone ? *k.gone >= call : k.at + kPidReuseWindow >= call;
    }

    // The earliest injected fault that could have taken the section's lock, if any.
    std::optional<Tp> fault_of(const Section& s, bool* by_kill) const {
        std::optional<Tp> first;
        for (const auto& k : sh.kills) {
            if (k.pid == s.pid && k.at <= s.release_done && may_be_same_backend(k, s.call) && (!first || k.at < *first)) {
                first = k.at;
                *by_kill = true;
            }
        }
        for (const auto& r : sh.restarts) {
            if (r.begin <= s.release_done && r.end >= s.call && (!first || r.begin < *first)) {
                first = r.begin;
                *by_kill = false;
            }
        }
        return first;
    }

    void sections() {
        std::vector<double> latencies;
        std::map<int, std::vector<std::pair<Tp, Tp>>> intervals;  // name -> [start, effective end)
        std::vector<int> hit_kills;
        for (const auto& sp : sh.sections) {
            const Section& s = *sp;
            const auto notice_ns = s.notice_ns.load();
            // A plain pointer-or-null rather than std::optional: GCC's -Wmaybe-uninitialized
            // misfires on an optional time_point built in a conditional.
            const Tp notice_at{std::chrono::nanoseconds(std::max<std::int64_t>(notice_ns, 0))};
            const Tp* notice = notice_ns < 0 ? nullptr : &notice_at;
            if (notice) ++rep.lost_notices;
            bool by_kill = false;
            const auto fault = fault_of(s, &by_kill);
            Tp effective_end = s.exit;
            const std::string who = "name " + sh.names[static_cast<std::size_t>(s.name)] + " worker " +
                                    std::to_string(s.worker) + " pid " + std::to_string(s.pid) + " section " +
                                    at(s.enter) + ".." + at(s.exit);
            if (s.release_ok) {
                // pg_advisory_unlock returned true: the lock was held to the end.
                if (notice) violation(rep, "lost_but_released", who);
                if (fault) ++rep.released_before_fault;
            } else if (!fault) {
                violation(rep, "loss_without_fault", who + ", release: " + s.release_error +
                                                         (notice ? ", lost notice at " + at(*notice) : ""));
                if (notice) effective_end = std::min(effective_end, *notice);
            } else {
                effective_end = std::min(effective_end, *fault);
                const Tp from = std::max(*fault, s.enter);
                if (!notice) {
                    violation(rep, "missed_lost_notice", who + ", fault at " + at(*fault) + ", release: " + s.release_error);
                } else {
                    const double latency = std::max(0.0, ms(*notice - from));
                    latencies.push_back(latency);
                    if (*notice > from + sh.cfg.lost_notice_bound)
                        violation(rep, "late_lost_notice", who + ": " + std::to_string(latency) + " ms after the fault");
                    if (s.exit > *notice) rep.max_overrun_ms = std::max(rep.max_overrun_ms, ms(s.exit - *notice));
                }
            }
            if (fault && by_kill && !s.release_ok) ++rep.kills_hitting_guard;
            if (effective_end > s.enter) intervals[s.name].emplace_back(s.enter, effective_end);
        }
        for (auto& [name, list] : intervals) {
            std::sort(list.begin(), list.end());
            Tp reach = Tp::min();
            for (const auto& [start, end] : list) {
                if (start < reach) {
                    violation(rep, "overlap", "name " + sh.names[static_cast<std::size_t>(name)] + ": a section from " +
                                                  at(start) + " began before another ended at " + at(reach));
                }
                reach = std::max(reach, end);
            }
        }
        std::sort(latencies.begin(), latencies.end());
        if (!latencies.empty()) {
            rep.lost_median_ms = latencies[latencies.size() / 2];
            rep.lost_p99_ms = latencies[std::min(latencies.size() - 1, latencies.size() * 99 / 100)];
            rep.lost_max_ms = latencies.back();
        }
    }

    void probes() {
        const auto grace = sh.cfg.visible_grace;
        for (const auto& p : sh.probe_failures) {
            bool explained = false;
            for (const auto& k : sh.kills) {
                if (k.pid == p.pid && k.at <= p.failed && k.at + kPidReuseWindow >= p.lent &&
                    (!k.gone || *k.gone + grace > p.lent))  // not yet visibly dead when lent
                    explained = true;
            }
            for (const auto& r : sh.restarts) {
                if (r.begin <= p.failed && r.end + grace > p.lent) explained = true;
            }
            if (explained) {
                ++rep.pool_probe_failures_explained;
            } else {
                violation(rep, "dead_session_lent", "pid " + std::to_string(p.pid) + " lent at " + at(p.lent) +
                                                        ", failed at " + at(p.failed) + ": " + p.error);
            }
        }
    }

    void recovery(Tp run_end) {
        for (const auto& r : sh.restarts) {
            if (!r.ok) {
                violation(rep, "restart_failed", "restart at " + at(r.begin));
                continue;
            }
            std::optional<Tp> first;
            for (const auto& s : sh.sections)
                if (s->call > r.end && (!first || s->enter < *first)) first = s->enter;
            if (first) {
                rep.max_recovery_ms = std::max(rep.max_recovery_ms, ms(*first - r.end));
                if (*first > r.end + kRecoveryBound) violation(rep, "slow_recovery", "restart done at " + at(r.end));
            } else if (run_end > r.end + kRecoveryBound) {
                violation(rep, "no_recovery", "no lock taken after the restart done at " + at(r.end));
            }
        }
    }
};

// Once every worker stopped and released, no row of the run's keys may remain. Released sessions
// are back in the pool (or closing), so poll a moment before calling it a leak.
void check_leaks(Shared& sh, Report& rep) {
    RawPg pg(sh.cfg.dsn);
    const std::string keys = key_array(sh.keys);
    const std::string sql = std::string(
        "SELECT l.pid, l.granted, coalesce(a.state, ''), coalesce(a.query, '') FROM pg_locks l "
        "LEFT JOIN pg_stat_activity a ON a.pid = l.pid WHERE ") + kKeyRows;
    const Tp limit = Clock::now() + 3s;
    for (;;) {
        auto rows = pg.exec(sql, {keys});
        if (rows && rows->empty()) return;
        if (Clock::now() >= limit) {
            if (!rows) {
                violation(rep, "leak_check_failed", pg.error());
                return;
            }
            for (const auto& r : *rows)
                violation(rep, "leaked_lock", "pid " + r[0] + " granted=" + r[1] + " state=" + r[2] + " query=" + r[3]);
            return;
        }
        std::this_thread::sleep_for(20ms);  // polling the server's view; there is no event for it
    }
}

std::string progress_line(Shared& sh) {
    std::lock_guard lk(sh.mu);
    const auto& c = sh.counts;
    std::ostringstream os;
    os << "t=" << static_cast<long>(ms(Clock::now() - sh.start) / 1000) << "s acquisitions " << c.acquisitions
       << ", cancels " << c.cancels << ", deadlines " << c.deadlines << ", kills " << sh.kills.size()
       << ", restarts " << c.restarts;
    return os.str();
}

}  // namespace

long Report::total_violations() const {
    long n = 0;
    for (const auto& [kind, count] : violations) n += count;
    return n;
}

std::string Report::summary() const {
    std::ostringstream os;
    os.setf(std::ios::fixed);
    os.precision(1);
    os << "chaos run: " << seconds << " s\n";
    os << "  acquisitions " << acquisitions << " (";
    bool first = true;
    for (const auto& [op, n] : acquisitions_by_op) {
        os << (first ? "" : ", ") << op << " " << n;
        first = false;
    }
    os << "), contended " << contended << ", cancels " << cancels << ", deadlines " << deadlines << "\n";
    os << "  errors:";
    if (errors.empty()) os << " none";
    for (const auto& [code, n] : errors) os << " " << code << " " << n;
    os << "\n";
    os << "  faults: kills " << kills << " (hit a held guard " << kills_hitting_guard << "), restarts " << restarts
       << "\n";
    os << "  lost notices " << lost_notices << ": latency median " << lost_median_ms << " ms, p99 " << lost_p99_ms
       << " ms, max " << lost_max_ms << " ms; unlock won the race with the fault " << released_before_fault
       << "; max section overrun after the notice " << max_overrun_ms << " ms\n";
    os << "  pool probes " << pool_probes << " (failures explained by a fault " << pool_probe_failures_explained
       << "); max recovery after a restart " << max_recovery_ms << " ms\n";
    os << "  violations " << total_violations();
    for (const auto& [kind, n] : violations) os << " " << kind << "=" << n;
    os << "\n";
    for (const auto& s : violation_samples) os << "    " << s << "\n";
    return os.str();
}

Report run(const Config& cfg) {
    Shared sh(cfg);
    const std::uint64_t seed = cfg.seed ? cfg.seed : std::random_device{}();
    std::mt19937_64 seeder(seed);
    const std::string run_id = std::to_string(seeder() % 1000000000ULL);
    for (int i = 0; i < cfg.hot_names; ++i) sh.names.push_back("pglock.chaos." + run_id + ".hot." + std::to_string(i));
    for (int w = 0; w < cfg.workers; ++w)
        for (int i = 0; i < cfg.unique_names_per_worker; ++i)
            sh.names.push_back("pglock.chaos." + run_id + ".w" + std::to_string(w) + "." + std::to_string(i));
    for (const auto& n : sh.names) sh.keys.push_back(key_of(n));
    {
        RawPg probe(cfg.dsn);
        if (!probe.exec("SELECT 1")) throw std::runtime_error("chaos: cannot reach the server: " + probe.error());
    }
    sh.log("chaos: seed " + std::to_string(seed) + ", " + std::to_string(cfg.workers) + " workers, " +
           std::to_string(sh.names.size()) + " names");

    // Fewer sessions than workers: calls also wait for a pooled session (and get cancelled there).
    Pool pool(cfg.dsn, PoolOptions{static_cast<std::size_t>(std::max(2, cfg.workers - 2)), 5000ms});
    const Tp end = sh.start + cfg.duration;
    {
        Canceller canceller;
        std::vector<std::unique_ptr<Worker>> workers;
        for (int w = 0; w < cfg.workers; ++w)
            workers.push_back(std::make_unique<Worker>(sh, pool, canceller, w, seeder()));
        std::vector<std::jthread> threads;
        for (auto& w : workers) threads.emplace_back([&w] { w->run(); });
        if (cfg.kill_every.count() > 0) threads.emplace_back([&sh, s = seeder()] { killer(sh, s); });
        if (cfg.restart_every.count() > 0 && !cfg.restart_command.empty())
            threads.emplace_back([&sh, end] { restarter(sh, end); });

        // The run's clock: wake for progress lines, stop at the end.
        for (;;) {
            const Tp now = Clock::now();
            if (now >= end) break;
            Tp next = end;
            if (cfg.progress_every.count() > 0) next = std::min(end, now + cfg.progress_every);
            std::this_thread::sleep_until(next);
            if (cfg.progress_every.count() > 0 && Clock::now() < end) sh.log(progress_line(sh));
        }
        sh.stop.request_stop();
        threads.clear();  // joins workers, killer, restarter; then the canceller stops
    }
    const Tp run_end = Clock::now();

    Report rep;
    {
        std::lock_guard lk(sh.mu);
        rep = sh.counts;
    }
    rep.seconds = ms(run_end - sh.start) / 1000.0;
    rep.kills = static_cast<long>(sh.kills.size());
    Analysis a{sh, rep, sh.start};
    a.sections();
    a.probes();
    a.recovery(run_end);
    check_leaks(sh, rep);
    return rep;
}

}  // namespace pglock::chaos
