// pglock_bench_poll: the monitor's poll against the naive lock query, side by side, on one server.
//   pglock_bench_poll --dsn DSN [--runs N] [--warmup N]
// (a) the poll exactly as lockscope's poll worker does it: pglock::monitor::poll() (one query,
//     decoded into a Snapshot), then the hold and wait trackers and the held-since map that make
//     up a PollResult; (b) the query common tools use: pg_locks joined to pg_stat_activity with
//     pg_blocking_pids(pid) for every row, every value read once on the client.
// For each: end to end on the client, and the server's Execution Time from
// EXPLAIN (ANALYZE, TIMING OFF, FORMAT JSON) of the same statement. The runs alternate which goes
// first, so drift of a shared machine hits both. Prints median, p95 and max of each, and the
// ratios baseline / pglock. Run it with the server loaded (scripts/bench-scale does).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "pglock/error.hpp"
#include "pglock/monitor.hpp"
#include "pglock/session.hpp"

namespace {

using Clock = std::chrono::steady_clock;
namespace mon = pglock::monitor;

// What tools such as the PostgreSQL wiki's lock-monitoring queries and most dashboards run:
// every advisory row with its session, and pg_blocking_pids() evaluated for each row, granted or not.
constexpr std::string_view kBaselineQuery =
    "SELECT l.locktype, l.database, l.classid, l.objid, l.objsubid, l.mode, l.granted, l.pid,"
    " pg_blocking_pids(l.pid) AS blocked_by,"
    " a.usename, a.application_name, a.client_addr, a.client_hostname, a.state, a.query,"
    " a.wait_event_type, a.wait_event, a.backend_start, a.xact_start, a.query_start, a.state_change"
    " FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid"
    " WHERE l.locktype = 'advisory'";

double ms_since(Clock::time_point t0) { return std::chrono::duration<double, std::milli>(Clock::now() - t0).count(); }

// The client side of lockscope's PollWorker::tick() (ui/poller/poll_worker.cpp) without Qt: the
// same core calls in the same order, and the same held-since map a PollResult carries.
struct ProductPoll {
    mon::HoldTracker holds;
    mon::WaitTracker waits;
    std::size_t locks = 0, holders = 0, waiters = 0, waiters_with_blockers = 0, backends = 0;

    void run(pglock::Session& session) {
        auto snapshot = std::make_shared<mon::Snapshot>(mon::poll(session));
        holds.update(*snapshot);
        waits.update(*snapshot);
        std::map<std::pair<mon::LockId, int>, double> held_since;
        for (const auto& [key, hold] : holds.open()) held_since.emplace(key, hold.start);
        auto finished = holds.take_finished();
        auto finished_waits = waits.take_finished();
        locks = snapshot->locks.size();
        backends = snapshot->backends.size();
        holders = waiters = waiters_with_blockers = 0;
        for (const auto& lock : snapshot->locks) {
            holders += lock.holders.size();
            waiters += lock.waiters.size();
            for (const auto& w : lock.waiters) waiters_with_blockers += w.blocked_by.empty() ? 0 : 1;
        }
    }
};

// Reads every value once, as a tool that shows the rows would.
std::size_t run_baseline(pglock::Session& session, std::size_t& bytes) {
    pglock::Result r = session.exec(kBaselineQuery);
    bytes = 0;
    for (int row = 0; row < r.rows(); ++row)
        for (int col = 0; col < r.columns(); ++col) bytes += r.get(row, col).size();
    return static_cast<std::size_t>(r.rows());
}

// The server's own time for a statement, without sending the rows.
double server_ms(pglock::Session& session, std::string_view sql) {
    pglock::Result r = session.exec("EXPLAIN (ANALYZE, TIMING OFF, FORMAT JSON) " + std::string(sql));
    const std::string_view plan = r.get(0, 0);
    const auto at = plan.find("\"Execution Time\":");
    if (at == std::string_view::npos) throw std::runtime_error("no Execution Time in EXPLAIN output");
    return std::strtod(std::string(plan.substr(at + 17, 32)).c_str(), nullptr);
}

struct Stats {
    double median = 0, p95 = 0, max = 0;
};

Stats stats_of(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    if (v.empty()) return {};
    const auto at = [&](double q) { return v[std::min(v.size() - 1, static_cast<std::size_t>(q * static_cast<double>(v.size() - 1) + 0.5))]; };
    return {at(0.5), at(0.95), v.back()};
}

int usage(const char* why) {
    std::fprintf(stderr, "pglock_bench_poll: %s\nusage: pglock_bench_poll --dsn DSN [--runs N] [--warmup N]\n", why);
    return 2;
}

}  // namespace

int main(int argc, char** argv) {
    std::string dsn;
    if (const char* env = std::getenv("PGLOCK_TEST_DSN")) dsn = env;
    int runs = 50, warmup = 3;
    try {
        for (int i = 1; i < argc; ++i) {
            const std::string_view arg = argv[i];
            if (i + 1 >= argc) return usage("missing value");
            const std::string value = argv[++i];
            if (arg == "--dsn") dsn = value;
            else if (arg == "--runs") runs = std::stoi(value);
            else if (arg == "--warmup") warmup = std::stoi(value);
            else return usage("unknown option");
        }
    } catch (const std::exception&) {
        return usage("a number was expected");
    }
    if (dsn.empty()) return usage("no --dsn (or PGLOCK_TEST_DSN)");
    if (runs < 1 || warmup < 0) return usage("--runs must be positive, --warmup not negative");

    try {
        // Two sessions, so neither query finds the other's plan or buffers in its backend.
        pglock::Session product_session = pglock::Session::connect(dsn);
        pglock::Session baseline_session = pglock::Session::connect(dsn);
        const std::string product_sql = mon::poll_query(mon::poll(product_session).server_version);

        ProductPoll product;
        std::size_t baseline_rows = 0, baseline_bytes = 0;
        std::vector<double> p_e2e, p_query, p_server, b_e2e, b_server;
        for (int i = 0; i < warmup + runs; ++i) {
            const bool measured = i >= warmup;
            auto one_product = [&] {
                const auto t0 = Clock::now();
                product.run(product_session);
                const double e2e = ms_since(t0);
                const double server = server_ms(product_session, product_sql);
                if (measured) {
                    p_e2e.push_back(e2e);
                    p_server.push_back(server);
                }
            };
            auto one_baseline = [&] {
                const auto t0 = Clock::now();
                baseline_rows = run_baseline(baseline_session, baseline_bytes);
                const double e2e = ms_since(t0);
                const double server = server_ms(baseline_session, kBaselineQuery);
                if (measured) {
                    b_e2e.push_back(e2e);
                    b_server.push_back(server);
                }
            };
            if (i % 2 == 0) {
                one_product();
                one_baseline();
            } else {
                one_baseline();
                one_product();
            }
        }

        std::printf("server: %d locks (%zu holders, %zu waiters, %zu of them with blockers), %zu sessions; "
                    "baseline rows: %zu (%zu bytes of values)\n",
                    static_cast<int>(product.locks), product.holders, product.waiters, product.waiters_with_blockers,
                    product.backends, baseline_rows, baseline_bytes);
        std::printf("%d runs each (after %d warm-up), alternating; times in ms\n\n", runs, warmup);
        const Stats pe = stats_of(p_e2e), ps = stats_of(p_server), be = stats_of(b_e2e), bs = stats_of(b_server);
        std::printf("%-36s %9s %9s %9s\n", "", "median", "p95", "max");
        std::printf("%-36s %9.1f %9.1f %9.1f\n", "pglock poll, end to end (PollResult)", pe.median, pe.p95, pe.max);
        std::printf("%-36s %9.1f %9.1f %9.1f\n", "pglock poll, server execution", ps.median, ps.p95, ps.max);
        std::printf("%-36s %9.1f %9.1f %9.1f\n", "baseline, end to end", be.median, be.p95, be.max);
        std::printf("%-36s %9.1f %9.1f %9.1f\n", "baseline, server execution", bs.median, bs.p95, bs.max);
        std::printf("\nratio baseline / pglock (median): end to end %.1fx, server %.1fx\n", be.median / pe.median,
                    bs.median / ps.median);
        std::printf("goal: pglock poll <= 50 ms end to end (median): %s\n", pe.median <= 50.0 ? "met" : "NOT met");
        return 0;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "pglock_bench_poll: %s\n", e.what());
        return 1;
    }
}
