// pglock_bench_poll: the monitor's poll against the naive lock query, side by side, on one server.
//   pglock_bench_poll --dsn DSN [--runs N] [--warmup N] [--no-explain] [--baseline naive|first-statement]
// (a) the poll exactly as lockscope's poll worker does it: pglock::monitor::poll() (one query,
//     decoded into a Snapshot), then the hold and wait trackers and the held-since map that make
//     up a PollResult; (b) the query common tools use: pg_locks joined to pg_stat_activity with
//     pg_blocking_pids(pid) for every row, every value read once on the client.
// For each: end to end on the client (wall clock), the server's Execution Time from
// EXPLAIN (ANALYZE, TIMING OFF, FORMAT JSON) of the same statement (wall clock, without sending
// rows; in a second pass, unless --no-explain), and, when the server runs on this machine and /proc/<pid>/schedstat is readable, the CPU
// time its backend spent on the statement itself, rows sent included, and the client's CPU time.
// On a shared machine the wall clock mostly measures the other processes; the CPU times do not. The runs alternate which goes
// first, so drift of a shared machine hits both. Prints median, p95 and max of each, and the
// ratios baseline / pglock. Run it with the server loaded (scripts/bench-scale does).
// --baseline first-statement: the baseline is the poll's first statement alone, read as (b) reads
// rows: the whole poll before the lock tree (one statement, no chain walk, no lock_tree()), to
// measure what following blocking chains past advisory locks adds.
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <fstream>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "pglock/error.hpp"
#include "pglock/lock_tree.hpp"
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

// CPU time of a server backend in ms (Linux: the first field of /proc/<pid>/schedstat is the
// nanoseconds it ran); negative when not readable (another machine, or no permission).
double backend_cpu_ms(int pid) {
    std::ifstream in("/proc/" + std::to_string(pid) + "/schedstat");
    long long ns = -1;
    if (!(in >> ns)) return -1;
    return static_cast<double>(ns) / 1e6;
}

double thread_cpu_ms() {
    timespec ts{};
    ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) / 1e6;
}

// The client side of lockscope's PollWorker::tick() (ui/poller/poll_worker.cpp) without Qt: the
// same core calls in the same order, and the same held-since map a PollResult carries.
struct ProductPoll {
    mon::HoldTracker holds;
    mon::WaitTracker waits;
    std::size_t locks = 0, holders = 0, waiters = 0, waiters_with_blockers = 0, backends = 0;
    std::size_t other_waits = 0, roots = 0, worst = 0;

    void run(pglock::Session& session) {
        auto snapshot = std::make_shared<mon::Snapshot>(mon::poll(session));
        holds.update(*snapshot);
        waits.update(*snapshot);
        std::map<std::pair<mon::LockId, int>, double> held_since;
        for (const auto& [key, hold] : holds.open()) held_since.emplace(key, hold.start);
        auto finished = holds.take_finished();
        auto finished_waits = waits.take_finished();
        const auto tree = mon::lock_tree(*snapshot);  // the poll worker builds it with each result
        other_waits = snapshot->other_waits.size();
        roots = tree.size();
        worst = tree.empty() ? 0 : tree.front().blocked_total;
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
std::size_t run_baseline(pglock::Session& session, const std::string& sql, std::size_t& bytes) {
    pglock::Result r = session.exec(sql);
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
    std::fprintf(stderr, "pglock_bench_poll: %s\nusage: pglock_bench_poll --dsn DSN [--runs N] [--warmup N] [--no-explain] "
                 "[--baseline naive|first-statement]\n", why);
    return 2;
}

}  // namespace

int main(int argc, char** argv) {
    std::string dsn;
    if (const char* env = std::getenv("PGLOCK_TEST_DSN")) dsn = env;
    int runs = 50, warmup = 3;
    bool explain = true;
    std::string baseline_kind = "naive";
    try {
        for (int i = 1; i < argc; ++i) {
            const std::string_view arg = argv[i];
            if (arg == "--no-explain") {
                explain = false;
                continue;
            }
            if (i + 1 >= argc) return usage("missing value");
            const std::string value = argv[++i];
            if (arg == "--dsn") dsn = value;
            else if (arg == "--runs") runs = std::stoi(value);
            else if (arg == "--warmup") warmup = std::stoi(value);
            else if (arg == "--baseline" && (value == "naive" || value == "first-statement")) baseline_kind = value;
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
        const std::string baseline_sql = baseline_kind == "naive" ? std::string(kBaselineQuery) : product_sql;

        ProductPoll product;
        std::size_t baseline_rows = 0, baseline_bytes = 0;
        const int product_pid = product_session.backend_pid(), baseline_pid = baseline_session.backend_pid();
        std::vector<double> p_e2e, p_server, p_cpu, p_client_cpu, b_e2e, b_server, b_cpu, b_client_cpu;
        for (int i = 0; i < warmup + runs; ++i) {
            const bool measured = i >= warmup;
            auto one_product = [&] {
                const double cpu0 = backend_cpu_ms(product_pid), client0 = thread_cpu_ms();
                const auto t0 = Clock::now();
                product.run(product_session);
                const double e2e = ms_since(t0);
                const double client = thread_cpu_ms() - client0, cpu = backend_cpu_ms(product_pid) - cpu0;
                if (measured) {
                    p_e2e.push_back(e2e);
                    p_client_cpu.push_back(client);
                    if (cpu0 >= 0) p_cpu.push_back(cpu);
                }
            };
            auto one_baseline = [&] {
                const double cpu0 = backend_cpu_ms(baseline_pid), client0 = thread_cpu_ms();
                const auto t0 = Clock::now();
                baseline_rows = run_baseline(baseline_session, baseline_sql, baseline_bytes);
                const double e2e = ms_since(t0);
                const double client = thread_cpu_ms() - client0, cpu = backend_cpu_ms(baseline_pid) - cpu0;
                if (measured) {
                    b_e2e.push_back(e2e);
                    b_client_cpu.push_back(client);
                    if (cpu0 >= 0) b_cpu.push_back(cpu);
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
        // EXPLAIN ANALYZE in a pass of its own: run between the timed statements it made the
        // backend CPU of the next one look up to 2x higher.
        for (int i = 0; explain && i < runs; ++i) {
            p_server.push_back(server_ms(product_session, product_sql));
            b_server.push_back(server_ms(baseline_session, baseline_sql));
        }

        std::printf("server: %d locks (%zu holders, %zu waiters, %zu of them with blockers), %zu sessions; "
                    "baseline rows: %zu (%zu bytes of values)\n",
                    static_cast<int>(product.locks), product.holders, product.waiters, product.waiters_with_blockers,
                    product.backends, baseline_rows, baseline_bytes);
        std::printf("lock tree: %zu sessions waiting on other lock types, %zu roots, the worst blocking %zu; baseline: %s\n",
                    product.other_waits, product.roots, product.worst,
                    baseline_kind == "naive" ? "pg_locks x pg_stat_activity with pg_blocking_pids() on every row"
                                             : "the poll's first statement alone (the poll before the lock tree)");
        std::printf("%d runs each (after %d warm-up), alternating; times in ms; server Execution Time is the first "
                    "statement's\n\n", runs, warmup);
        const auto row = [](const char* what, const std::vector<double>& v) {
            if (v.empty()) return std::printf("%-42s %9s\n", what, "n/a"), void();
            const Stats st = stats_of(v);
            std::printf("%-42s %9.1f %9.1f %9.1f\n", what, st.median, st.p95, st.max);
        };
        std::printf("%-42s %9s %9s %9s\n", "", "median", "p95", "max");
        row("pglock poll, end to end (to PollResult)", p_e2e);
        row("pglock poll, server Execution Time", p_server);
        row("pglock poll, server backend CPU", p_cpu);
        row("pglock poll, client CPU (libpq + decoding)", p_client_cpu);
        row("baseline, end to end", b_e2e);
        row("baseline, server Execution Time", b_server);
        row("baseline, server backend CPU", b_cpu);
        row("baseline, client CPU (libpq + reading)", b_client_cpu);
        const auto ratio = [](const std::vector<double>& b, const std::vector<double>& p) {
            return b.empty() || p.empty() ? 0.0 : stats_of(b).median / stats_of(p).median;
        };
        std::printf("\nratio baseline / pglock (medians): end to end %.2fx, server Execution Time %.2fx, server CPU %.2fx\n",
                    ratio(b_e2e, p_e2e), ratio(b_server, p_server), ratio(b_cpu, p_cpu));
        const double cost = p_cpu.empty() ? stats_of(p_e2e).median : stats_of(p_cpu).median + stats_of(p_client_cpu).median;
        std::printf("goal: a poll at most 50 ms: end to end median %.1f ms%s; server + client CPU median %.1f ms\n",
                    stats_of(p_e2e).median, stats_of(p_e2e).median <= 50.0 ? " (met)" : " (over: see the CPU times)", cost);
        return 0;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "pglock_bench_poll: %s\n", e.what());
        return 1;
    }
}
