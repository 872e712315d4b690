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
            QVERIFY2(std::string(err->what()).find("transaction-mode pooler") != std::string::npos, err->what());

            Lock lock(pool, pgt::unique_name());
            PGT_EXPECT_ERROR(lock.try_acquire(Context::with_timeout(10s)), Errc::session_changed);
            PGT_EXPECT_ERROR(lock.acquire(Context::with_timeout(10s)), Errc::session_changed);
            QVERIFY(granted_pids(*obs_, lock.key()).empty());
        });
    }

    // Without the check, every lock through the pooler either fails with session_changed (at the
    // lock statement or at the release) or was truly taken and released on one backend. A release
    // that reports session_changed tells the truth: the lock is still held by the backend that took
    // it. (Each round uses its own name, since such locks stay behind until PgBouncer stops.)
    void locks_through_the_pooler_are_never_pretended() {
        guarded([&] {
            pglock::Pool pool(bouncer_dsn_, {.max_size = 2});
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
            QVERIFY2(at_release > 0, "no round reached the release check");
            QCOMPARE(metrics->session_changes->load(), at_acquire + at_release);
            QCOMPARE(logger->count("lock: session changed name=", " lock_pid="), at_release);
            QCOMPARE(logger->count("lock: acquire failed name="), at_acquire);
        });
    }
};

QTEST_GUILESS_MAIN(TestPooler)
#include "test_pooler.moc"
