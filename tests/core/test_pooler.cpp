// Behind a transaction-mode pooler (PgBouncer pool_mode=transaction) consecutive statements of one
// client connection run on different server backends, so a session-level advisory lock stays
// behind on whichever backend took it. The library must say so (Errc::session_changed) instead of
// reporting a clean release, and PoolOptions::refuse_transaction_pooler must refuse the pooler up
// front. The test starts its own PgBouncer (tests/pg/pgbouncer) in front of the test cluster.
#include <QtTest>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core_test_util.hpp"

using namespace std::chrono_literals;
using pglock::Context;
using pglock::Errc;
using pglock::Lock;
using pgt::granted_pids;
using pgt::conninfo_value;
using pgt::guarded;
using pgt::RawConn;

namespace {

std::string run_capture(const std::string& cmd);

// A PgBouncer of one test function (tests/pg/pgbouncer), stopped and removed with it: in
// transaction mode a backend keeps what the last client left on it, so a test that needs
// backends no client has used starts its own.
class Bouncer {
public:
    Bouncer(const std::string& server_dsn, const std::string& options) {
        char tmpl[] = "/tmp/pglock-bouncer.XXXXXX";
        if (!::mkdtemp(tmpl)) return;
        dir_ = tmpl;
        dsn_ = run_capture(script() + " start " + dir_ + " '" + conninfo_value(server_dsn, "host") + "' " +
                           conninfo_value(server_dsn, "port") + " " + options);
    }
    ~Bouncer() {
        if (!dir_.empty()) std::system((script() + " stop " + dir_ + " && rm -rf " + dir_).c_str());
    }
    Bouncer(const Bouncer&) = delete;
    Bouncer& operator=(const Bouncer&) = delete;
    const std::string& dsn() const { return dsn_; }

private:
    static std::string script() { return std::string(PGLOCK_TEST_SOURCE_DIR) + "/tests/pg/pgbouncer"; }
    std::string dir_, dsn_;
};

std::string run_capture(const std::string& cmd) {
    std::string out;
    FILE* p = ::popen(cmd.c_str(), "r");
    if (!p) return out;
    char buf[512];
    while (std::fgets(buf, sizeof buf, p)) out += buf;
    if (::pclose(p) != 0) return {};
    while (!out.empty() && (out.back() == '\n' || out.back() == '\r')) out.pop_back();
    return out;
}


struct Counting : pglock::Metrics {
    std::shared_ptr<std::atomic<int>> session_changes = std::make_shared<std::atomic<int>>(0);
    struct Series : pglock::LockMetrics {
        std::shared_ptr<std::atomic<int>> changes;
        void count_acquire(pglock::Outcome) override {}
        void observe_hold(double) override {}
        void count_session_changed() override { ++*changes; }
    };
    std::unique_ptr<pglock::LockMetrics> register_lock(std::string_view) override {
        auto s = std::make_unique<Series>();
        s->changes = session_changes;
        return s;
    }
};

struct Messages : pglock::Logger {
    std::mutex mutex;
    std::vector<std::string> lines;
    void log(pglock::LogLevel, std::string_view message, std::span<const pglock::LogAttr> attrs) override {
        std::string line(message);
        for (const auto& a : attrs) line += " " + std::string(a.key) + "=" + a.value;
        std::lock_guard lock(mutex);
        lines.push_back(std::move(line));
    }
    // Lines that start with `prefix` and contain `part`.
    int count(std::string_view prefix, std::string_view part = {}) {
        std::lock_guard lock(mutex);
        int n = 0;
        for (const auto& l : lines) n += l.rfind(prefix, 0) == 0 && l.find(part) != std::string::npos;
        return n;
    }
};

}  // namespace

class TestPooler : public QObject {
    Q_OBJECT

    std::string dsn_;          // the server itself
    std::string bouncer_dir_;  // the PgBouncer's temp dir
    std::string bouncer_dsn_;  // through PgBouncer, pool_mode=transaction
    // PgBouncer's own defaults, quiet: transaction mode, 3 server connections, the one used last
    // goes to the next client (no round robin), so one client sees one backend for every
    // statement, and so does the next client.
    static constexpr const char* kQuiet = "--mode transaction --pool-size 3 --lifo";
    std::unique_ptr<RawConn> obs_;

private slots:
    void initTestCase() {
        PGT_REQUIRE_DSN(dsn_);
        if (std::getenv("PGLOCK_TEST_DSN")) QSKIP("PGLOCK_TEST_DSN is set: this test puts a PgBouncer before the private cluster only");
        guarded([&] { obs_ = std::make_unique<RawConn>(dsn_); });
        char dir[] = "/tmp/pglock-bouncer.XXXXXX";
        QVERIFY(::mkdtemp(dir) != nullptr);
        bouncer_dir_ = dir;
        const std::string script = std::string(PGLOCK_TEST_SOURCE_DIR) + "/tests/pg/pgbouncer";
        bouncer_dsn_ = run_capture(script + " start " + bouncer_dir_ + " '" + conninfo_value(dsn_, "host") + "' " +
                                   conninfo_value(dsn_, "port"));
        QVERIFY2(!bouncer_dsn_.empty(), "PgBouncer did not start (is it installed? scripts/setup installs it)");

        // Make the pooler open three server connections (three transactions open at once), so
        // that with server_round_robin consecutive statements of one client go to different ones.
        std::vector<std::unique_ptr<RawConn>> clients;
        guarded([&] {
            for (int i = 0; i < 3; ++i) {
                clients.push_back(std::make_unique<RawConn>(bouncer_dsn_));
                clients.back()->query("BEGIN");
                clients.back()->query("SELECT pg_backend_pid()");
            }
            for (auto& c : clients) c->query("COMMIT");
        });
    }

    void cleanupTestCase() {
        obs_.reset();
        if (!bouncer_dir_.empty()) {
            const std::string script = std::string(PGLOCK_TEST_SOURCE_DIR) + "/tests/pg/pgbouncer";
            std::system((script + " stop " + bouncer_dir_ + " && rm -rf " + bouncer_dir_).c_str());
        }
    }

    // The quiet setup shares backends the way the attack needs: one client keeps one backend,
    // and a second client is handed the same one.
    void quiet_pooler_lends_one_backend_to_two_clients() {
        Bouncer quiet(dsn_, kQuiet);
        QVERIFY2(!quiet.dsn().empty(), "PgBouncer did not start");
        guarded([&] {
            RawConn a(quiet.dsn());
            const auto first = a.integer("SELECT pg_backend_pid()");
            QCOMPARE(a.integer("SELECT pg_backend_pid()"), first);
            RawConn b(quiet.dsn());
            QVERIFY2(b.integer("SELECT pg_backend_pid()") == first, "the quiet pool proves nothing: two backends");
        });
    }

    // The check finds a quiet transaction pooler too, before any lock: its three pid probes
    // used to see one backend and let the pool lend the session.
    void check_refuses_a_quiet_transaction_pooler() {
        Bouncer quiet(dsn_, kQuiet);
        QVERIFY2(!quiet.dsn().empty(), "PgBouncer did not start");
        guarded([&] {
            pglock::Pool pool(quiet.dsn(), {.max_size = 2});  // the check is on by default
            QVERIFY(pool.options().refuse_transaction_pooler);
            const auto err = pgt::catch_error([&] { (void)pool.acquire(Context::with_timeout(10s)); });
            QVERIFY2(err.has_value(), "the pool lent a session behind a quiet transaction-mode pooler");
            QCOMPARE(err->code(), Errc::session_changed);
            QVERIFY2(std::string(err->what()).find("pool_mode=transaction") != std::string::npos, err->what());
            Lock lock(pool, pgt::unique_name());
            PGT_EXPECT_ERROR(lock.try_acquire(Context::with_timeout(10s)), Errc::session_changed);
            QVERIFY(granted_pids(*obs_, lock.key()).empty());
        });
    }

    // With the check off, a second client behind the same quiet pooler lands on the first one's
    // backend, where pg_try_advisory_lock would grant the first one's lock again (reentrant per
    // session) and pg_advisory_unlock_all would drop it. It is refused instead, every time, and
    // the first client's lock stays held and is released cleanly.
    void second_client_is_never_granted_behind_a_quiet_pooler() {
        Bouncer quiet(dsn_, kQuiet);
        QVERIFY2(!quiet.dsn().empty(), "PgBouncer did not start");
        guarded([&] {
            const std::string name = pgt::unique_name();
            pglock::Pool first(quiet.dsn(), {.max_size = 1, .refuse_transaction_pooler = false});
            Lock holder(first, name);
            auto guard = holder.try_acquire(Context::with_timeout(10s));
            QVERIFY2(guard.has_value(), "the first client could not take the lock");
            const int backend = guard->backend_pid();
            QCOMPARE(granted_pids(*obs_, holder.key()), std::vector<int>{backend});
            for (int round = 0; round < 4; ++round) {
                pglock::Pool second(quiet.dsn(), {.max_size = 1, .refuse_transaction_pooler = false});
                Lock other(second, name);
                std::optional<pglock::Guard> stolen;
                const auto err = pgt::catch_error([&] { stolen = other.try_acquire(Context::with_timeout(10s)); });
                QVERIFY2(!stolen.has_value(), "a second client was granted a lock the first one holds");
                QVERIFY2(err && err->code() == Errc::session_changed, err ? pgt::describe(*err).c_str() : "no error");
                QCOMPARE(granted_pids(*obs_, holder.key()), std::vector<int>{backend});
            }
            QCOMPARE(guard->release(), std::error_code());
            QVERIFY(granted_pids(*obs_, holder.key()).empty());
        });
    }

    // A transaction-mode pooler does not reset a backend between clients: a backend a client
    // that has gone marked is refused to the next, whatever the check says.
    void a_backend_marked_by_a_gone_client_is_refused() {
        Bouncer quiet(dsn_, kQuiet);
        QVERIFY2(!quiet.dsn().empty(), "PgBouncer did not start");
        guarded([&] {
            {
                pglock::Pool gone(quiet.dsn(), {.max_size = 1, .refuse_transaction_pooler = false});
                (void)gone.acquire(Context::with_timeout(10s));
            }
            pglock::Pool next(quiet.dsn(), {.max_size = 1, .refuse_transaction_pooler = false});
            const auto err = pgt::catch_error([&] { (void)next.acquire(Context::with_timeout(10s)); });
            QVERIFY2(err && err->code() == Errc::session_changed, err ? pgt::describe(*err).c_str() : "lent");
            QVERIFY2(std::string(err->what()).find("another client's session") != std::string::npos, err->what());
        });
    }

    // No false alarm behind a session-mode pooler (it resets each backend between clients), and
    // locks there exclude each other; a client that has gone leaves nothing behind either.
    void session_mode_pooler_works() {
        Bouncer session(dsn_, "--mode session --pool-size 3");
        QVERIFY2(!session.dsn().empty(), "PgBouncer did not start");
        guarded([&] {
            {
                pglock::Pool gone(session.dsn(), {.max_size = 1});
                (void)gone.acquire(Context::with_timeout(10s));
            }
            const std::string name = pgt::unique_name();
            pglock::Pool a(session.dsn(), {.max_size = 1});
            pglock::Pool b(session.dsn(), {.max_size = 1});
            Lock la(a, name), lb(b, name);
            auto guard = la.try_acquire(Context::with_timeout(10s));
            QVERIFY(guard.has_value());
            QVERIFY(!lb.try_acquire(Context::with_timeout(10s)).has_value());
            QCOMPARE(granted_pids(*obs_, la.key()), std::vector<int>{guard->backend_pid()});
            QCOMPARE(guard->release(), std::error_code());
            auto next = lb.try_acquire(Context::with_timeout(10s));
            QVERIFY(next.has_value());
            QCOMPARE(next->release(), std::error_code());
        });
    }

    // The setup really is a transaction pooler: one client connection, different backends.
    void bouncer_moves_statements_between_backends() {
        guarded([&] {
            RawConn c(bouncer_dsn_);
            const auto a = c.integer("SELECT pg_backend_pid()");
            const auto b = c.integer("SELECT pg_backend_pid()");
            QVERIFY2(a != b, "PgBouncer gave one backend twice in a row: the test setup proves nothing");
        });
    }

    // No false alarm against the server itself.
    void check_passes_on_a_direct_connection() {
        guarded([&] {
            pglock::Pool pool(dsn_, {.max_size = 2, .refuse_transaction_pooler = true});
            Lock lock(pool, pgt::unique_name());
            auto guard = lock.try_acquire(Context::with_timeout(10s));
            QVERIFY(guard.has_value());
            QCOMPARE(granted_pids(*obs_, lock.key()), std::vector<int>{guard->backend_pid()});
            QCOMPARE(guard->release(), std::error_code());
            QVERIFY(granted_pids(*obs_, lock.key()).empty());
        });
    }

    // The pool check refuses the pooler before any prepared statement can fail confusingly.
    void check_refuses_the_pooler() {
        guarded([&] {
            pglock::Pool pool(bouncer_dsn_, {.max_size = 2, .refuse_transaction_pooler = true});
            const auto err = pgt::catch_error([&] { (void)pool.acquire(Context::with_timeout(10s)); });
            QVERIFY2(err.has_value(), "the pool lent a session behind a transaction-mode pooler");
            QCOMPARE(err->code(), Errc::session_changed);
            QVERIFY2(std::string(err->what()).find("pool_mode=transaction") != std::string::npos, err->what());

            Lock lock(pool, pgt::unique_name());
            PGT_EXPECT_ERROR(lock.try_acquire(Context::with_timeout(10s)), Errc::session_changed);
            PGT_EXPECT_ERROR(lock.acquire(Context::with_timeout(10s)), Errc::session_changed);
            QVERIFY(granted_pids(*obs_, lock.key()).empty());
        });
    }

    // Without the check, every lock through the pooler either fails with session_changed (at the
    // lock statement or at the release) or was truly taken and released on one backend; a lock
    // statement that reaches a backend without the connection's mark locks nothing there. A
    // release that reports session_changed tells the truth: the lock is still held by the backend
    // that took it. (Each round uses its own name, since such locks stay behind until PgBouncer
    // stops.)
    void locks_through_the_pooler_are_never_pretended() {
        guarded([&] {
            pglock::Pool pool(bouncer_dsn_, {.max_size = 2, .refuse_transaction_pooler = false});
            auto metrics = std::make_shared<Counting>();
            auto logger = std::make_shared<Messages>();
            int at_acquire = 0, at_release = 0, clean = 0;
            for (int round = 0; round < 16; ++round) {
                Lock lock(pool, pgt::unique_name(), {.logger = logger, .metrics = metrics});
                std::optional<pglock::Guard> guard;
                const auto err = pgt::catch_error([&] { guard = lock.try_acquire(Context::with_timeout(10s)); });
                if (err) {
                    QVERIFY2(err->code() == Errc::session_changed, pgt::describe(*err).c_str());
                    QVERIFY2(std::string(err->what()).find("transaction-mode pooler") != std::string::npos, err->what());
                    QVERIFY(granted_pids(*obs_, lock.key()).empty());
                    ++at_acquire;
                    continue;
                }
                QVERIFY2(guard.has_value(), "contended on a fresh name");
                const int lock_pid = guard->backend_pid();
                // The pid the lock statement reported is the server's (PQbackendPID is PgBouncer's).
                QCOMPARE(granted_pids(*obs_, lock.key()), std::vector<int>{lock_pid});
                const std::error_code ec = guard->release();
                if (ec == Errc::session_changed) {
                    QCOMPARE(granted_pids(*obs_, lock.key()), std::vector<int>{lock_pid});
                    ++at_release;
                } else {
                    QVERIFY2(!ec, pgt::describe(ec).c_str());
                    QVERIFY(granted_pids(*obs_, lock.key()).empty());
                    ++clean;
                }
            }
            qInfo("16 rounds through PgBouncer: %d refused at the lock statement, %d at the release, %d clean",
                  at_acquire, at_release, clean);
            QVERIFY2(at_acquire + at_release > 0, "the pooler went unnoticed");
            QCOMPARE(metrics->session_changes->load(), at_acquire + at_release);
            QCOMPARE(logger->count("lock: session changed name=", " lock_pid="), at_release);
            QCOMPARE(logger->count("lock: acquire failed name="), at_acquire);
        });
    }
};

QTEST_GUILESS_MAIN(TestPooler)
#include "test_pooler.moc"
