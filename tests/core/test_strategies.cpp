// AcquireStrategy::queue (pg_advisory_lock, the default) against AcquireStrategy::poll
// (pg_try_advisory_lock with backoff): both get the lock once it is free and both honour stop and
// deadline; the point of poll is that its session holds no snapshot while it waits, whereas a
// queued pg_advisory_lock pins backend_xmin (and with it VACUUM's horizon) for the whole wait.
#include <QtTest>

#include <unistd.h>

#include <future>
#include <stop_token>
#include <string>
#include <vector>

#include "core_test_util.hpp"

using namespace std::chrono_literals;
using pglock::AcquireStrategy;
using pglock::Context;
using pglock::Errc;
using pglock::Lock;
using pgt::granted_pids;
using pgt::guarded;
using pgt::RawConn;
using pgt::wait_until;

namespace {

// What pg_stat_activity says of the waiter's session right now.
struct Sample {
    std::string state;
    bool has_xmin = false;
};

Sample sample(RawConn& obs, const std::string& app) {
    auto res = obs.query("SELECT state, backend_xmin IS NOT NULL FROM pg_stat_activity WHERE application_name = $1",
                         {app});
    if (PQntuples(res.get()) != 1) return {"(no session)", false};
    return {PQgetvalue(res.get(), 0, 0), std::string(PQgetvalue(res.get(), 0, 1)) == "t"};
}

// Requests stop when the test leaves the scope by any path (a failed QVERIFY returns early), so
// a waiter ends at once instead of holding the test until its deadline. Declare it after the
// future it ends: it runs first.
struct StopOnExit {
    std::stop_source& source;
    ~StopOnExit() { source.request_stop(); }
};

// Every waiter's context: its stop source, and a deadline well past what any check waits for.
Context stoppable(const std::stop_source& source) { return Context{source.get_token(), pglock::Clock::now() + 30s}; }

pglock::LockOptions poll_options() {
    return {.strategy = AcquireStrategy::poll, .poll = {.initial = 5ms, .max = 100ms}};
}

}  // namespace

class TestStrategies : public QObject {
    Q_OBJECT

    std::string dsn_;
    std::unique_ptr<RawConn> obs_;
    std::unique_ptr<RawConn> holder_;

    // A pool whose sessions carry `app` as application_name, so the test can find them.
    pglock::Pool pool_for(const std::string& app) {
        return pglock::Pool(dsn_, {.max_size = 2, .overrides = {{"application_name", app}}});
    }

private slots:
    void initTestCase() {
        PGT_REQUIRE_DSN(dsn_);
        guarded([&] {
            obs_ = std::make_unique<RawConn>(dsn_);
            holder_ = std::make_unique<RawConn>(dsn_);
        });
    }

    void cleanupTestCase() {
        holder_.reset();
        obs_.reset();
    }

    void poll_acquires_after_the_holder_releases() {
        guarded([&] {
            pglock::Pool pool(dsn_, {.max_size = 2});
            Lock lock(pool, pgt::unique_name(), poll_options());
            QVERIFY(holder_->try_lock(lock.key()));
            auto waiter = std::async(std::launch::async, [&] { return lock.acquire(Context::with_timeout(20s)); });
            QCOMPARE(waiter.wait_for(300ms), std::future_status::timeout);
            // A poller is never in the server's queue: no ungranted pg_locks row.
            QVERIFY(pgt::waiting_pids(*obs_, lock.key()).empty());
            const auto released = pgt::Clock::now();
            QVERIFY(holder_->unlock(lock.key()));
            QCOMPARE(waiter.wait_for(5s), std::future_status::ready);
            const auto late = pgt::Clock::now() - released;
            pglock::Guard guard = waiter.get();
            QCOMPARE(granted_pids(*obs_, lock.key()), std::vector<int>{guard.backend_pid()});
            // Granted within one capped pause (100 ms) plus the try's round trip.
            QVERIFY2(late < 1s, "the poller took far longer than its backoff cap to notice the release");
            QCOMPARE(guard.release(), std::error_code());
            QVERIFY(granted_pids(*obs_, lock.key()).empty());
        });
    }

    void poll_honours_stop() {
        guarded([&] {
            pglock::Pool pool(dsn_, {.max_size = 2});
            Lock lock(pool, pgt::unique_name(), poll_options());
            QVERIFY(holder_->try_lock(lock.key()));
            std::stop_source stop;
            auto waiter = std::async(std::launch::async, [&] {
                return pgt::catch_error([&] { (void)lock.acquire(stoppable(stop)); });
            });
            StopOnExit stop_waiter{stop};
            QCOMPARE(waiter.wait_for(200ms), std::future_status::timeout);
            const auto asked = pgt::Clock::now();
            stop.request_stop();
            QCOMPARE(waiter.wait_for(2s), std::future_status::ready);
            QVERIFY(pgt::Clock::now() - asked < 500ms);
            const auto err = waiter.get();
            QVERIFY(err.has_value());
            QCOMPARE(err->code(), Errc::canceled);
            QCOMPARE(granted_pids(*obs_, lock.key()), std::vector<int>{holder_->pid()});
            QVERIFY(holder_->unlock(lock.key()));
        });
    }

    void poll_honours_deadline() {
        guarded([&] {
            pglock::Pool pool(dsn_, {.max_size = 2});
            Lock lock(pool, pgt::unique_name(), poll_options());
            QVERIFY(holder_->try_lock(lock.key()));
            const auto start = pgt::Clock::now();
            PGT_EXPECT_ERROR(lock.acquire(Context::with_timeout(400ms)), Errc::deadline_exceeded);
            const auto took = pgt::Clock::now() - start;
            QVERIFY2(took >= 390ms && took < 1500ms, "the deadline was not kept");
            QCOMPARE(granted_pids(*obs_, lock.key()), std::vector<int>{holder_->pid()});
            QVERIFY(holder_->unlock(lock.key()));
        });
    }

    // The point of poll: between tries the waiting session is idle, with no snapshot, so it does
    // not hold back the xmin horizon. A queued pg_advisory_lock does, for the whole wait.
    void poll_pins_no_xmin_while_queue_does() {
        guarded([&] {
            const std::string name = pgt::unique_name();
            const std::int64_t key = pglock::key_of(name);
            QVERIFY(holder_->try_lock(key));

            // poll
            const std::string poll_app = "pglock-test-poll-" + std::to_string(::getpid());
            pglock::Pool poll_pool = pool_for(poll_app);
            Lock poller(poll_pool, name, poll_options());
            std::stop_source stop_poll;
            auto polling = std::async(std::launch::async, [&] {
                return pgt::catch_error([&] { (void)poller.acquire(stoppable(stop_poll)); });
            });
            StopOnExit stop_poller{stop_poll};
            QVERIFY(wait_until([&] { return sample(*obs_, poll_app).state != "(no session)"; }, 5s));
            int idle = 0, idle_with_xmin = 0;
            for (int i = 0; i < 40; ++i) {
                const Sample s = sample(*obs_, poll_app);
                if (s.state == "idle") {
                    ++idle;
                    idle_with_xmin += s.has_xmin;
                }
                std::this_thread::sleep_for(15ms);
            }
            qInfo("poll: %d of 40 samples idle between tries, %d of them with a backend_xmin", idle, idle_with_xmin);
            QVERIFY2(idle >= 30, "the polling session was not idle between tries");
            QCOMPARE(idle_with_xmin, 0);

            // The monitor sees the same: no xmin on the polling session.
            pglock::Session mon = pglock::Session::connect(dsn_);
            const pglock::monitor::Snapshot snap = pglock::monitor::poll(mon);
            for (const auto& e : snap.locks)
                if (e.key == key) QVERIFY2(e.waiters.empty(), "a poller showed up as a pg_locks waiter");

            stop_poll.request_stop();
            QCOMPARE(polling.wait_for(2s), std::future_status::ready);
            QCOMPARE(polling.get()->code(), Errc::canceled);

            // queue
            const std::string queue_app = "pglock-test-queue-" + std::to_string(::getpid());
            pglock::Pool queue_pool = pool_for(queue_app);
            Lock queued(queue_pool, name);  // AcquireStrategy::queue is the default
            std::stop_source stop_queue;
            auto queueing = std::async(std::launch::async, [&] {
                return pgt::catch_error([&] { (void)queued.acquire(stoppable(stop_queue)); });
            });
            StopOnExit stop_queuer{stop_queue};
            QVERIFY(wait_until([&] { return pgt::waiting_pids(*obs_, key).size() == 1; }, 5s));
            for (int i = 0; i < 10; ++i) {
                const Sample s = sample(*obs_, queue_app);
                QCOMPARE(s.state, std::string("active"));
                QVERIFY2(s.has_xmin, "a waiting pg_advisory_lock had no backend_xmin");
                std::this_thread::sleep_for(15ms);
            }
            // And the monitor's waiter row carries it, which is what lockscope flags.
            std::this_thread::sleep_for(1100ms);  // so that the pinned time is visibly > 1 s
            const pglock::monitor::Snapshot queued_snap = pglock::monitor::poll(mon);
            bool seen = false;
            for (const auto& e : queued_snap.locks) {
                if (e.key != key) continue;
                QCOMPARE(e.waiters.size(), std::size_t(1));
                const auto& w = e.waiters.front();
                QVERIFY(w.xmin_age.has_value());
                QVERIFY(w.xmin_since.has_value());
                const auto pinned = pglock::monitor::xmin_pinned_seconds(w, queued_snap.server_now);
                QVERIFY(pinned.has_value());
                QVERIFY2(*pinned >= 1.0 && *pinned < 30.0, qPrintable(QString::number(*pinned)));
                seen = true;
            }
            QVERIFY(seen);

            stop_queue.request_stop();
            QCOMPARE(queueing.wait_for(5s), std::future_status::ready);
            QCOMPARE(queueing.get()->code(), Errc::canceled);
            QVERIFY(holder_->unlock(key));
        });
    }
};

QTEST_GUILESS_MAIN(TestStrategies)
#include "test_strategies.moc"
