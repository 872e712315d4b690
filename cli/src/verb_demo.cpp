// pglock demo : a realistic contention workload on the library, for watching with `pglock status`
// or the lockscope app: cron-like jobs, a chain of waiters, a holder idle in transaction, a
// transaction-level lock, a shared lock with two holders and a lock whose name no catalog knows;
// and what other software does on the same database: Rails' and golang-migrate's migration
// locks (taken with the statements those libraries send), an advisory holder stuck behind a row
// lock of a session idle in transaction, and an orphaned holder (idle, not in a transaction)
// that others wait for.

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <iostream>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "catalog_file.hpp"
#include "metrics_server.hpp"
#include "pglock/sleep.hpp"
#include "pglock/duration_text.hpp"
#include "pglock/error.hpp"
#include "pglock/key_schemes.hpp"
#include "pglock/lock.hpp"
#include "pglock/session.hpp"
#include "pglock/transaction.hpp"
#include "pglock_cli/connection.hpp"
#include "pglock_cli/duration.hpp"
#include "pglock_cli/exit_codes.hpp"
#include "pglock_cli/text.hpp"
#include "signals.hpp"
#include "verbs.hpp"

namespace pglock::cli {

namespace {

using namespace std::chrono_literals;
using ms = std::chrono::milliseconds;

constexpr std::size_t names_needed = 12;

struct DemoOptions {
    std::string metrics = "127.0.0.1:0";
    bool metrics_given = false;
    std::string catalog;   // empty: the sample catalog
    std::string run_for;   // DURATION, empty: until a signal
};

// Several jobs lock the same name (replicas, waiters): each Lock registers its name with the
// metrics, which allow one live registration per name. This hands every Lock of a name the
// same series.
class SharedNameMetrics final : public Metrics {
public:
    explicit SharedNameMetrics(std::shared_ptr<Metrics> inner) : inner_(std::move(inner)) {}
    std::unique_ptr<LockMetrics> register_lock(std::string_view name) override {
        std::lock_guard lk(mutex_);
        auto& series = by_name_[std::string(name)];
        if (!series) series = std::shared_ptr<LockMetrics>(inner_->register_lock(name));
        return std::make_unique<Forward>(series);
    }

private:
    struct Forward final : LockMetrics {
        explicit Forward(std::shared_ptr<LockMetrics> to) : to_(std::move(to)) {}
        void count_acquire(Outcome outcome) override { to_->count_acquire(outcome); }
        void observe_hold(double seconds) override { to_->observe_hold(seconds); }
        std::shared_ptr<LockMetrics> to_;
    };
    std::shared_ptr<Metrics> inner_;
    std::mutex mutex_;
    std::map<std::string, std::shared_ptr<LockMetrics>> by_name_;
};

// The DSN (conninfo or URI, possibly empty) as a conninfo string with application_name = app, so
// that pg_stat_activity tells the demo's jobs apart.
std::string conninfo_with_app(const std::string& dsn, const std::string& app) {
    std::vector<ConninfoOption> options = dsn_options(dsn);
    std::erase_if(options, [](const ConninfoOption& o) { return o.keyword == "application_name"; });
    options.push_back({"application_name", app});
    return conninfo_string(options);
}

// What every job shares: the stop token, observability and the tallies printed at the end.
struct DemoShared {
    std::string dsn;
    std::string table;  // the row-lock chain's table, quoted and schema-qualified (made_demo_table)
    bool pooler_check = true;  // GlobalOptions::pooler_check
    std::stop_token stop;
    std::shared_ptr<Metrics> metrics;
    std::shared_ptr<Logger> logger;
    std::mutex out_mutex;
    std::atomic<long> acquired{0}, contended{0}, timed_out{0}, errors{0};

    void line(std::ostream& out, const std::string& text) {
        std::lock_guard lk(out_mutex);
        out << text << std::endl;
    }
};

// One job: a thread, a pool whose sessions carry application_name=demo-<label>, a random source.
class Job {
public:
    Job(DemoShared& shared, std::string label, std::string role, std::size_t pool_size)
        : shared_(shared),
          label_(std::move(label)),
          role_(std::move(role)),
          app_("demo-" + label_),
          pool_(conninfo_with_app(shared.dsn, app_), pool_options_for(shared.dsn, pool_size, shared.pooler_check)),
          rng_(std::random_device{}()) {}

    Lock lock(const std::string& name, Mode mode = Mode::exclusive) {
        LockOptions options;
        options.logger = shared_.logger;
        options.metrics = shared_.metrics;
        options.mode = mode;
        return Lock(pool_, name, std::move(options));
    }

    // Runs `cycle` until the demo stops; a failing cycle is reported and retried a second later.
    void run(const std::string& what, const std::function<void(Job&)>& cycle) {
        shared_.line(std::cout, "demo: started job " + label_ + " (" + role_ + ") " + what + " app=" + app_);
        while (!stopped()) {
            try {
                cycle(*this);
            } catch (const Error& e) {
                if (stopped()) break;  // the stop cancelled what was running: not a failure
                if (e.code() == Errc::deadline_exceeded) {
                    ++shared_.timed_out;  // waited long enough: a normal outcome here
                    continue;
                }
                ++shared_.errors;
                shared_.line(std::cerr, "demo: job " + label_ + ": " + display_line(e.what()));
                nap(1s);
            } catch (const std::exception& e) {
                if (stopped()) break;
                ++shared_.errors;
                shared_.line(std::cerr, "demo: job " + label_ + ": " + display_line(e.what()));
                nap(1s);
            }
        }
    }

    bool stopped() const { return shared_.stop.stop_requested(); }
    bool nap(std::chrono::nanoseconds d) { return sleep_for(std::chrono::duration_cast<Clock::duration>(d), shared_.stop); }
    // A random duration in [lo, hi].
    ms pick(ms lo, ms hi) {
        std::uniform_int_distribution<ms::rep> d(lo.count(), hi.count());
        return ms(d(rng_));
    }
    Context ctx() const { return Context{shared_.stop, std::nullopt}; }
    Context wait_at_most(ms d) const { return Context{shared_.stop, Clock::now() + d}; }
    // For statements that must run even while stopping (COMMIT, ROLLBACK): bounded, not stoppable.
    static Context cleanup() { return Context{{}, Clock::now() + 5s}; }

    void held() { ++shared_.acquired; }
    void missed() { ++shared_.contended; }
    Pool& pool() { return pool_; }
    const std::string& table() const { return shared_.table; }

private:
    DemoShared& shared_;
    std::string label_, role_, app_;
    Pool pool_;
    std::mt19937 rng_;
};

std::string quoted(const std::string& name) { return json_quote(name) + " key=" + std::to_string(key_of(name)); }

// ---- the roles -------------------------------------------------------------------------------

// A cron job on several replicas: try now, skip when another replica runs it.
void cron_cycle(Job& job, Lock& lock) {
    if (auto guard = lock.try_acquire(job.ctx())) {
        job.held();
        job.nap(job.pick(100ms, 8000ms));
    } else {
        job.missed();
    }
    job.nap(job.pick(1000ms, 4000ms));
}

// A job that queues for its lock, giving up after a deadline.
void waiting_cycle(Job& job, Lock& lock, ms patience, ms hold_lo, ms hold_hi, ms pause_lo, ms pause_hi) {
    {
        Guard guard = lock.acquire(job.wait_at_most(patience));
        job.held();
        job.nap(job.pick(hold_lo, hold_hi));
    }
    job.nap(job.pick(pause_lo, pause_hi));
}

// Holds `outer`, then queues for `inner` while still holding it: whoever waits for `outer` now
// waits behind a waiter, a blocking chain.
void chain_cycle(Job& job, Lock& outer, Lock& inner) {
    {
        Guard a = outer.acquire(job.wait_at_most(10s));
        job.held();
        Guard b = inner.acquire(job.wait_at_most(6s));
        job.held();
        job.nap(job.pick(500ms, 1500ms));
    }
    job.nap(job.pick(500ms, 2000ms));
}

// Takes the lock, then opens a transaction on the lock's own session and leaves it idle: the
// holder pg_stat_activity shows as "idle in transaction" (and holding back vacuum's horizon).
void idle_in_transaction_cycle(Job& job, Lock& lock) {
    Guard guard = lock.acquire(job.wait_at_most(10s));
    job.held();
    {
        auto session = guard.session();
        session->exec("BEGIN", {}, job.ctx());
        session->exec("SELECT 1", {}, job.ctx());
    }
    job.nap(job.pick(20000ms, 40000ms));
    {
        auto session = guard.session();
        session->exec("COMMIT", {}, Job::cleanup());
    }
    if (const auto ec = guard.release()) throw Error(Errc::release_failed, "release: " + ec.message());
    job.nap(job.pick(500ms, 1500ms));
}

// A transaction-level lock: taken inside a transaction, released by its commit.
void xact_cycle(Job& job, Lock& lock) {
    {
        Transaction tx(job.pool(), job.ctx());
        if (lock.try_acquire_xact(&tx, job.ctx())) {
            job.held();
            job.nap(job.pick(2000ms, 4000ms));
            tx.commit(Job::cleanup());
        } else {
            job.missed();
            tx.rollback(Job::cleanup());
        }
    }
    job.nap(job.pick(1000ms, 3000ms));
}

// ---- other software on the same database ---------------------------------------------------------

// The one-row table of the row-lock chain. The demo creates it and drops it when it stops.
constexpr const char* demo_table = "pglock_demo_rows";

// Creates the demo's table unless it exists and returns its name, quoted and schema-qualified.
// A table of that name made by another role is refused: the demo's writes would run whatever
// that role attached to it (a trigger, a default) with the rights of the demo's role.
std::string made_demo_table(Session& session, const Context& ctx) {
    session.exec(std::string("CREATE TABLE IF NOT EXISTS ") + demo_table + " (id int PRIMARY KEY, v bigint NOT NULL DEFAULT 0)",
                 {}, ctx);
    const Result r = session.exec(
        "SELECT pg_catalog.quote_ident(n.nspname) OPERATOR(pg_catalog.||) '.' OPERATOR(pg_catalog.||) "
        "pg_catalog.quote_ident(c.relname), pg_catalog.pg_get_userbyid(c.relowner)::pg_catalog.text, "
        "c.relowner OPERATOR(pg_catalog.=) (SELECT r.oid FROM pg_catalog.pg_roles r "
        "WHERE r.rolname OPERATOR(pg_catalog.=) CURRENT_USER) "
        "FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid OPERATOR(pg_catalog.=) c.relnamespace "
        "WHERE c.oid OPERATOR(pg_catalog.=) pg_catalog.to_regclass($1)",
        {demo_table}, ctx);
    if (r.rows() == 0) throw Error(Errc::query_failed, std::string("the demo's table ") + demo_table + " was not found after creating it");
    const std::string table(r.get(0, 0));
    if (!r.get_bool(0, 2)) {
        throw Error(Errc::query_failed, "the demo's table " + table + " already exists and belongs to " +
                                            std::string(r.get(0, 1)) +
                                            ": the demo writes only to a table its own role made (writing to another "
                                            "role's table runs what that role attached to it); drop it or run the demo "
                                            "in another database");
    }
    session.exec("INSERT INTO " + table + " VALUES (1, 0) ON CONFLICT (id) DO NOTHING", {}, ctx);
    return table;
}

// A session of the job's pool holding a session-level advisory lock by raw SQL, the way another
// library holds it; `unlock` runs on every way out (bounded, even while stopping).
template <class Body>
void holding(Job& job, const std::string& lock_sql, const std::vector<std::string>& params, const std::string& unlock_sql,
             Body&& body) {
    auto session = job.pool().acquire(job.ctx());
    std::vector<Param> p(params.begin(), params.end());
    const Result r = session->exec(lock_sql, p, job.ctx());
    if (r.rows() > 0 && r.get(0, 0) == "f") {  // a try that found it taken
        job.missed();
        return;
    }
    job.held();
    struct Unlock {
        PooledSession& s;
        const std::string& sql;
        std::vector<Param>& p;
        ~Unlock() {
            try {
                s->exec(sql, p, Job::cleanup());
            } catch (const Error&) {
                s.discard();  // its connection closes: the server releases the lock
            }
        }
    } unlock{session, unlock_sql, p};
    body(*session);
}

// Rails' migration lock (activerecord migration.rb): pg_try_advisory_lock with the key written
// into the statement, 2053462845 × crc32(current_database()).
void rails_migration_cycle(Job& job) {
    std::string database;
    {
        auto s = job.pool().acquire(job.ctx());
        database = std::string(s->exec("SELECT pg_catalog.current_database()", {}, job.ctx()).get(0, 0));
    }
    SchemeContext c;
    c.database = database;
    const std::string key = std::to_string(scheme_key("rails-migration", std::nullopt, c).packed);
    holding(job, "SELECT pg_catalog.pg_try_advisory_lock(" + key + ")", {}, "SELECT pg_catalog.pg_advisory_unlock(" + key + ")",
            [&](Session&) { job.nap(job.pick(6000ms, 12000ms)); });
    job.nap(job.pick(1000ms, 3000ms));
}

// golang-migrate's lock (database/postgres Lock): pg_advisory_lock($1) with the key as a decimal
// string, crc32 of schema, table and database joined with NUL, × 1486364155, as uint32.
void golang_migrate_cycle(Job& job) {
    SchemeContext c;
    {
        auto s = job.pool().acquire(job.ctx());
        const Result r = s->exec("SELECT pg_catalog.current_database(), pg_catalog.current_schema()", {}, job.ctx());
        c.database = std::string(r.get(0, 0));
        c.schema = std::string(r.get(0, 1));
    }
    c.table = "schema_migrations";
    const std::string key = std::to_string(scheme_key("golang-migrate", std::nullopt, c).packed);
    holding(job, "SELECT pg_catalog.pg_advisory_lock($1)", {key}, "SELECT pg_catalog.pg_advisory_unlock($1)",
            [&](Session&) { job.nap(job.pick(6000ms, 12000ms)); });
    job.nap(job.pick(1000ms, 3000ms));
}

// Updates the demo row and sits idle in transaction: the row lock the chain below waits for.
void row_owner_cycle(Job& job) {
    auto s = job.pool().acquire(job.ctx());
    s->exec("BEGIN", {}, job.ctx());
    try {
        s->exec("UPDATE " + job.table() + " SET v = v OPERATOR(pg_catalog.+) 1 WHERE id OPERATOR(pg_catalog.=) 1", {},
                job.ctx());
        job.nap(job.pick(15000ms, 25000ms));
        s->exec("COMMIT", {}, Job::cleanup());
    } catch (...) {
        s.discard();
        throw;
    }
    job.nap(job.pick(300ms, 1000ms));
}

// Holds an advisory lock and, on its session, updates the row the row owner holds: its waiters
// queue behind an advisory holder whose real blocker is a row lock of another session.
void row_chain_cycle(Job& job, Lock& lock) {
    {
        Guard guard = lock.acquire(job.wait_at_most(15s));
        job.held();
        auto session = guard.session();
        session->exec("BEGIN", {}, job.ctx());
        session->exec("UPDATE " + job.table() + " SET v = v OPERATOR(pg_catalog.+) 1 WHERE id OPERATOR(pg_catalog.=) 1",
                      {}, job.wait_at_most(30s));
        session->exec("COMMIT", {}, Job::cleanup());
        job.nap(job.pick(300ms, 1000ms));
    }
    job.nap(job.pick(200ms, 800ms));
}

// Takes a session lock and forgets it: idle, not in a transaction, for 40-60 s, while others wait.
void idle_orphan_cycle(Job& job, const std::string& name) {
    const std::string key = std::to_string(key_of(name));
    holding(job, "SELECT pg_catalog.pg_advisory_lock($1::bigint)", {key}, "SELECT pg_catalog.pg_advisory_unlock($1::bigint)",
            [&](Session&) { job.nap(job.pick(40000ms, 60000ms)); });
    job.nap(job.pick(200ms, 600ms));
}

struct JobSpec {
    std::string label;
    std::string role;
    std::size_t pool_size;
    std::function<void(Job&)> body;  // builds its locks, then runs the job's cycles
};

int run_demo(const DemoOptions& options, const GlobalOptions& global) {
    // Before any thread exists (pools, lost-lock watchers, civetweb): they inherit the mask.
    SignalStop signals;

    std::optional<std::chrono::nanoseconds> run_for;
    if (!options.run_for.empty()) run_for = parse_duration(options.run_for);

    std::string catalog_path = options.catalog;
    if (catalog_path.empty()) {
        catalog_path = default_catalog_path();
        if (catalog_path.empty())
            throw std::runtime_error("the sample catalog (share/pglock/sample-catalog.txt) is not installed; "
                                     "pass --catalog FILE with at least 12 names");
    }
    const Catalog catalog = [&] {
        // A FIFO or a slow disk blocks in open()/read(), where no stop token reaches.
        const auto on_signal = signals.exit_on_signal("reading the catalog " + catalog_path);
        return load_catalog(catalog_path);
    }();
    if (catalog.size() < names_needed)
        throw std::runtime_error("catalog " + catalog_path + ": the demo needs " + std::to_string(names_needed) +
                                 " names, it has " + std::to_string(catalog.size()));
    const auto& n = catalog.names();

    std::stop_source demo_stop;
    std::stop_callback on_signal(signals.token(), [&] { demo_stop.request_stop(); });

    DemoShared shared;
    shared.dsn = global.dsn;
    shared.pooler_check = global.pooler_check;
    shared.stop = demo_stop.get_token();
    if (global.verbose) shared.logger = make_stderr_logger(LogLevel::debug);
    std::unique_ptr<MetricsServer> server;
#if !PGLOCK_WITH_PROMETHEUS
    if (options.metrics_given)
#endif
    {
        server = MetricsServer::start(options.metrics);
        shared.metrics = std::make_shared<SharedNameMetrics>(server->metrics());
    }

    // Fail fast, with one clear line, when the server is unreachable or a standby.
    const PoolOptions pool_opts = pool_options_for(global.dsn, 1);
    try {
        Session probe = Session::connect(conninfo_with_app(global.dsn, "pglock-demo"),
                                         Context{signals.token(), Clock::now() + pool_opts.connect_timeout});
        if (probe.in_recovery())
            throw Error(Errc::on_standby, "the server is a standby in recovery: advisory locks there protect nothing");
        shared.table = made_demo_table(probe, Context{signals.token(), Clock::now() + 10s});
    } catch (const Error&) {
        if (signals.signal()) return report_interrupted(signals.signal(), "before the demo started");
        throw;
    }
    if (server) shared.line(std::cout, "demo: metrics on " + server->url());

    std::string suffix;
    {
        std::mt19937 rng(std::random_device{}());
        const char* hex = "0123456789abcdef";
        for (int i = 0; i < 6; ++i) suffix += hex[rng() % 16];
    }
    const std::string adhoc = "adhoc.reindex-" + suffix;
    // Beyond the twelve: the catalog's next names when it has them (the sample one does).
    const std::string row_chain = n.size() > 12 ? n[12] : "demo.row-chain";
    const std::string orphan = n.size() > 13 ? n[13] : "demo.forgotten-job";

    auto cron = [&](const std::string& name, const std::string& label) {
        return JobSpec{label, "cron: try_acquire every 1-4s, hold 100ms-8s", 1, [name](Job& job) {
                           Lock lock = job.lock(name);
                           job.run("on " + quoted(name), [&](Job& j) { cron_cycle(j, lock); });
                       }};
    };
    std::vector<JobSpec> specs = {
        cron(n[0], n[0]),
        cron(n[1], n[1]),
        cron(n[2], n[2]),
        cron(n[3], n[3]),
        cron(n[4], n[4] + "-a"),
        cron(n[4], n[4] + "-b"),
        {n[5], "chain head: acquire (wait up to 10s), hold 2-5s", 1,
         [name = n[5]](Job& job) {
             Lock lock = job.lock(name);
             job.run("on " + quoted(name), [&](Job& j) { waiting_cycle(j, lock, 10s, 2000ms, 5000ms, 300ms, 1500ms); });
         }},
        {n[6], "chain middle: holds its lock while it waits for " + n[5], 2,
         [outer = n[6], inner = n[5]](Job& job) {
             Lock a = job.lock(outer), b = job.lock(inner);
             job.run("on " + quoted(outer), [&](Job& j) { chain_cycle(j, a, b); });
         }},
        {n[7], "chain tail: waits (up to 8s) for " + n[6], 1,
         [name = n[6]](Job& job) {
             Lock lock = job.lock(name);
             job.run("on " + quoted(name), [&](Job& j) { waiting_cycle(j, lock, 8s, 200ms, 1000ms, 500ms, 2000ms); });
         }},
        {n[8], "long holder, idle in transaction for 20-40s", 1,
         [name = n[8]](Job& job) {
             Lock lock = job.lock(name);
             job.run("on " + quoted(name), [&](Job& j) { idle_in_transaction_cycle(j, lock); });
         }},
        {n[9], "transaction-level lock: try_acquire_xact, commit after 2-4s", 1,
         [name = n[9]](Job& job) {
             Lock lock = job.lock(name);
             job.run("on " + quoted(name), [&](Job& j) { xact_cycle(j, lock); });
         }},
        {n[10] + "-a", "shared lock, hold 2-5s", 1,
         [name = n[10]](Job& job) {
             Lock lock = job.lock(name, Mode::shared);
             job.run("on " + quoted(name), [&](Job& j) { waiting_cycle(j, lock, 5s, 2000ms, 5000ms, 100ms, 500ms); });
         }},
        {n[10] + "-b", "shared lock, hold 2-5s", 1,
         [name = n[10]](Job& job) {
             Lock lock = job.lock(name, Mode::shared);
             job.run("on " + quoted(name), [&](Job& j) { waiting_cycle(j, lock, 5s, 2000ms, 5000ms, 100ms, 500ms); });
         }},
        {n[11] + "-a", "queues for its lock (up to 3s), hold 0.5-3s", 1,
         [name = n[11]](Job& job) {
             Lock lock = job.lock(name);
             job.run("on " + quoted(name), [&](Job& j) { waiting_cycle(j, lock, 3s, 500ms, 3000ms, 500ms, 2000ms); });
         }},
        {n[11] + "-b", "queues for its lock (up to 3s), hold 0.5-3s", 1,
         [name = n[11]](Job& job) {
             Lock lock = job.lock(name);
             job.run("on " + quoted(name), [&](Job& j) { waiting_cycle(j, lock, 3s, 500ms, 3000ms, 500ms, 2000ms); });
         }},
        {"adhoc", "a name in no catalog, try_acquire every 1-4s", 1,
         [name = adhoc](Job& job) {
             Lock lock = job.lock(name);
             job.run("on " + quoted(name), [&](Job& j) { cron_cycle(j, lock); });
         }},
        {"rails-migrate", "Rails' migration lock (pg_try_advisory_lock), hold 6-12s", 1,
         [](Job& job) { job.run("on this database's Rails migration lock", [](Job& j) { rails_migration_cycle(j); }); }},
        {"golang-migrate", "golang-migrate's lock (pg_advisory_lock), hold 6-12s", 1,
         [](Job& job) { job.run("on this database's golang-migrate lock", [](Job& j) { golang_migrate_cycle(j); }); }},
        {"row-owner", "updates a row of pglock_demo_rows, idle in transaction 15-25s", 1,
         [](Job& job) { job.run("on pglock_demo_rows id=1", [](Job& j) { row_owner_cycle(j); }); }},
        {row_chain, "holds its lock while it waits for the row-owner's row lock", 1,
         [name = row_chain](Job& job) {
             Lock lock = job.lock(name);
             job.run("on " + quoted(name), [&](Job& j) { row_chain_cycle(j, lock); });
         }},
        {row_chain + "-waiter", "waits (up to 20s) for " + row_chain, 1,
         [name = row_chain](Job& job) {
             Lock lock = job.lock(name);
             job.run("on " + quoted(name), [&](Job& j) { waiting_cycle(j, lock, 20s, 200ms, 600ms, 300ms, 800ms); });
         }},
        {"forgotten-job", "an orphan: holds its lock idle, not in a transaction, 40-60s", 1,
         [name = orphan](Job& job) { job.run("on " + quoted(name), [&](Job& j) { idle_orphan_cycle(j, name); }); }},
        {"forgotten-job-waiter", "waits (up to 30s) for " + orphan, 1,
         [name = orphan](Job& job) {
             Lock lock = job.lock(name);
             job.run("on " + quoted(name), [&](Job& j) { waiting_cycle(j, lock, 30s, 200ms, 600ms, 300ms, 800ms); });
         }},
    };

    const auto started = Clock::now();
    std::vector<std::unique_ptr<Job>> jobs;
    std::vector<std::thread> threads;
    // On every way out, including a failure while starting the jobs: stop them and wait for them
    // (their guards release on the way), then close the pools.
    struct Joiner {
        std::stop_source& stop;
        std::vector<std::thread>& threads;
        std::vector<std::unique_ptr<Job>>& jobs;
        ~Joiner() {
            stop.request_stop();
            for (auto& t : threads)
                if (t.joinable()) t.join();
            jobs.clear();
        }
    } joiner{demo_stop, threads, jobs};
    jobs.reserve(specs.size());
    threads.reserve(specs.size());
    for (auto& spec : specs) {
        jobs.push_back(std::make_unique<Job>(shared, spec.label, spec.role, spec.pool_size));
        threads.emplace_back([&shared, job = jobs.back().get(), body = spec.body] {
            try {
                body(*job);
            } catch (const std::exception& e) {  // building the job's locks failed: report, never terminate
                ++shared.errors;
                shared.line(std::cerr, std::string("demo: job failed: ") + display_line(e.what()));
            }
        });
    }

    if (run_for) sleep_until(started + *run_for, shared.stop);
    else wait_for_stop(shared.stop);
    demo_stop.request_stop();
    for (auto& t : threads) t.join();
    jobs.clear();  // closes every pool: nothing of the demo stays on the server
    threads.clear();
    try {  // the row-lock chain's table; another demo on this database may still use it: then it stays
        Session cleanup = Session::connect(conninfo_with_app(global.dsn, "pglock-demo"), Job::cleanup());
        cleanup.exec("SET lock_timeout = '1s'", {}, Job::cleanup());
        cleanup.exec("DROP TABLE IF EXISTS " + shared.table, {}, Job::cleanup());
    } catch (const Error&) {
    }

    std::string why = signals.signal() ? std::string(signal_name(signals.signal()))
                                       : "after " + duration_text(Clock::now() - started);
    shared.line(std::cout, "demo: stopped (" + why + "): " + std::to_string(shared.acquired.load()) + " acquired, " +
                               std::to_string(shared.contended.load()) + " contended, " +
                               std::to_string(shared.timed_out.load()) + " gave up waiting, " +
                               std::to_string(shared.errors.load()) + " errors; every lock released");
    return exit_ok;
}

}  // namespace

void register_demo(CLI::App& app, const GlobalOptions& global, VerbRun& run) {
    auto options = std::make_shared<DemoOptions>();
    auto* cmd = app.add_subcommand(
        "demo", "Run a realistic contention workload (cron jobs, waiters, a blocking chain, idle in transaction, "
                "transaction-level and shared locks, Rails and golang-migrate migration locks, an advisory holder "
                "behind a row lock, an orphaned holder) until SIGINT/SIGTERM or --for.");
    auto* metrics = cmd->add_option("--metrics", options->metrics,
                                    "serve Prometheus metrics on HOST:PORT/metrics (default 127.0.0.1:0: any free port)")
                        ->type_name("HOST:PORT");
    cmd->add_option("--catalog", options->catalog,
                    "take the 12 job names from FILE, in order (default: the sample catalog)")
        ->type_name("FILE");
    cmd->add_option("--for", options->run_for, "stop after this long (default: until a signal)")
        ->check(duration_check());
    cmd->callback([options, metrics, &global, &run] {
        options->metrics_given = metrics->count() > 0;
        run = [options, &global] { return run_demo(*options, global); };
    });
}

}  // namespace pglock::cli
