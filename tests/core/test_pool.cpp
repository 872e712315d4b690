// The session pool and Session itself: bounds, reuse rules, cancellation, connection errors.
#include <QElapsedTimer>
#include <QUrl>
#include <QtTest>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <optional>
#include <stop_token>
#include <string>
#include <thread>
#include <vector>

#include "core_test_util.hpp"

using namespace std::chrono_literals;
using pglock::Context;
using pglock::Errc;
using pglock::Pool;
using pglock::PoolOptions;
using pglock::PooledSession;
using pgt::guarded;
using pgt::qba;
using pgt::RawConn;
using pgt::wait_until;

namespace {

// The options of a conninfo string, parsed by libpq itself.
std::map<std::string, std::string> parse_conninfo(const std::string& conninfo) {
    char* err = nullptr;
    PQconninfoOption* opts = PQconninfoParse(conninfo.c_str(), &err);
    if (!opts) {
        std::string msg = err ? err : "out of memory";
        PQfreemem(err);
        throw std::runtime_error("PQconninfoParse: " + msg);
    }
    std::map<std::string, std::string> out;
    for (auto* o = opts; o->keyword; ++o)
        if (o->val && *o->val) out[o->keyword] = o->val;
    PQconninfoFree(opts);
    return out;
}

// The same server as a postgresql:// URI (host may be a socket directory: percent-encoded).
std::string to_uri(const std::string& conninfo) {
    auto o = parse_conninfo(conninfo);
    auto enc = [](const std::string& s) { return QUrl::toPercentEncoding(QString::fromStdString(s)).toStdString(); };
    std::string uri = "postgresql://";
    if (o.count("user")) uri += enc(o["user"]) + "@";
    if (o.count("host")) uri += enc(o["host"]);
    if (o.count("port")) uri += ":" + o["port"];
    uri += "/";
    if (o.count("dbname")) uri += enc(o["dbname"]);
    std::string query;
    for (const auto& [k, v] : o) {
        if (k == "user" || k == "host" || k == "port" || k == "dbname") continue;
        query += (query.empty() ? "?" : "&") + k + "=" + enc(v);
    }
    return uri + query;
}

const std::string kUnreachable = "host=127.0.0.1 port=1 connect_timeout=2";

}  // namespace

class TestPool : public QObject {
    Q_OBJECT

    std::string dsn_;
    std::unique_ptr<RawConn> obs_;

private slots:
    void initTestCase() {
        PGT_REQUIRE_DSN(dsn_);
        guarded([&] { obs_ = std::make_unique<RawConn>(dsn_); });
    }
    void cleanupTestCase() { obs_.reset(); }

    void lazy_and_counts() {
        guarded([&] {
            Pool pool(dsn_, PoolOptions{3, std::chrono::milliseconds(5000)});
            QCOMPARE(qba(pool.conninfo()), qba(dsn_));
            QCOMPARE(pool.options().max_size, std::size_t{3});
            QCOMPARE(pool.open_count(), std::size_t{0});  // no connection before the first acquire
            {
                auto s = pool.acquire();
                QVERIFY(bool(s));
                QVERIFY(s->ok());
                QVERIFY(s->reusable());
                QCOMPARE(pool.open_count(), std::size_t{1});
                QCOMPARE(pool.idle_count(), std::size_t{0});
                QCOMPARE(static_cast<int>(s->exec("SELECT pg_backend_pid()").get_int64(0, 0)), s->backend_pid());
            }
            QCOMPARE(pool.open_count(), std::size_t{1});
            QCOMPARE(pool.idle_count(), std::size_t{1});
        });
    }

    void max_size_respected() {
        guarded([&] {
            Pool pool(dsn_, PoolOptions{2, std::chrono::milliseconds(5000)});
            auto a = pool.acquire(Context::with_timeout(10s));
            auto b = pool.acquire(Context::with_timeout(10s));
            QVERIFY(a->backend_pid() != b->backend_pid());
            QCOMPARE(pool.open_count(), std::size_t{2});

            QElapsedTimer timer;
            timer.start();
            const auto err = pgt::catch_error([&] { (void)pool.acquire(Context::with_timeout(200ms)); });
            const auto elapsed = timer.elapsed();
            QVERIFY2(err.has_value(), "a third session was lent by a pool of 2");
            QCOMPARE(err->code(), Errc::deadline_exceeded);
            QVERIFY2(elapsed >= 180 && elapsed < 5000, qPrintable(QStringLiteral("waited %1 ms").arg(elapsed)));
            QCOMPARE(pool.open_count(), std::size_t{2});

            const int a_pid = a->backend_pid();
            a.reset();
            QVERIFY(!bool(a));
            auto c = pool.acquire(Context::with_timeout(2s));
            QCOMPARE(c->backend_pid(), a_pid);  // the returned one, reused
            QCOMPARE(pool.open_count(), std::size_t{2});
        });
    }

    void returned_session_wakes_a_waiter() {
        guarded([&] {
            Pool pool(dsn_, PoolOptions{1, std::chrono::milliseconds(5000)});
            auto a = pool.acquire(Context::with_timeout(10s));
            const int pid = a->backend_pid();
            std::atomic<bool> returned_early{false};
            std::atomic<bool> given_back{false};
            int got_pid = 0;
            std::exception_ptr err;
            std::jthread t([&](std::stop_token st) {
                try {
                    auto s = pool.acquire(Context{st, pglock::Clock::now() + 20s});
                    if (!given_back) returned_early = true;
                    got_pid = s->backend_pid();
                } catch (...) {
                    err = std::current_exception();
                }
            });
            QElapsedTimer timer;
            given_back = true;
            timer.start();
            a.reset();
            t.join();
            QVERIFY2(!err, pgt::describe(err).c_str());
            QVERIFY(!returned_early.load());
            QCOMPARE(got_pid, pid);
            QVERIFY2(timer.elapsed() < 5000, "the waiter was not woken by the returned session");
        });
    }

    void stop_cancels_wait_for_slot() {
        guarded([&] {
            Pool pool(dsn_, PoolOptions{1, std::chrono::milliseconds(5000)});
            auto a = pool.acquire(Context::with_timeout(10s));
            std::stop_source stop;
            std::optional<pglock::Error> err;
            std::exception_ptr other;
            bool got = false;
            std::jthread t([&] {
                try {
                    auto s = pool.acquire(Context{stop.get_token(), pglock::Clock::now() + 30s});
                    got = true;
                } catch (const pglock::Error& e) {
                    err = e;
                } catch (...) {
                    other = std::current_exception();
                }
            });
            QElapsedTimer timer;
            timer.start();
            stop.request_stop();
            t.join();
            QVERIFY2(!other, pgt::describe(other).c_str());
            QVERIFY2(!got, "acquired a slot of a full pool");
            QVERIFY2(err.has_value(), "no error");
            QCOMPARE(err->code(), Errc::canceled);
            QVERIFY2(timer.elapsed() < 5000, "stop did not end the wait promptly");
            // The pool still works afterwards.
            const int pid = a->backend_pid();
            a.reset();
            auto b = pool.acquire(Context::with_timeout(2s));
            QCOMPARE(b->backend_pid(), pid);
        });
    }

    void open_transaction_not_reused() {
        guarded([&] {
            Pool pool(dsn_, PoolOptions{1, std::chrono::milliseconds(5000)});
            int pid = 0;
            {
                auto s = pool.acquire(Context::with_timeout(10s));
                pid = s->backend_pid();
                s->exec("BEGIN");
                s->exec("CREATE TEMP TABLE pool_leak_check (x int)");
                QVERIFY(!s->reusable());
            }
            auto s = pool.acquire(Context::with_timeout(10s));
            QVERIFY2(s->backend_pid() != pid, "a session left in an open transaction was lent again");
            QCOMPARE(PQtransactionStatus(s->native_handle()), PQTRANS_IDLE);
            QCOMPARE(s->exec("SELECT 1").get_int64(0, 0), std::int64_t{1});
            QVERIFY(wait_until([&] { return !pgt::backend_exists(*obs_, pid); }, 5s));
            QVERIFY(pool.open_count() <= 1);
        });
    }

    void aborted_transaction_not_reused() {
        guarded([&] {
            Pool pool(dsn_, PoolOptions{1, std::chrono::milliseconds(5000)});
            int pid = 0;
            {
                auto s = pool.acquire(Context::with_timeout(10s));
                pid = s->backend_pid();
                s->exec("BEGIN");
                const auto err = pgt::catch_error([&] { (void)s->exec("SELECT 1/0"); });
                QVERIFY(err.has_value());
                QCOMPARE(err->code(), Errc::query_failed);
                QCOMPARE(qba(err->sqlstate()), QByteArray("22012"));
                QCOMPARE(PQtransactionStatus(s->native_handle()), PQTRANS_INERROR);
                QVERIFY(!s->reusable());
            }
            auto s = pool.acquire(Context::with_timeout(10s));
            QVERIFY2(s->backend_pid() != pid, "a session in an aborted transaction was lent again");
            QCOMPARE(s->exec("SELECT 2").get_int64(0, 0), std::int64_t{2});
        });
    }

    // The advisory locks a pooled session holds (any key, shared or exclusive), asked on the
    // session itself.
    static long long own_advisory_locks(PooledSession& s) {
        return s->exec("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND pid = pg_backend_pid()")
            .get_int64(0, 0);
    }

    // Work done on a guard's own session takes the guard's key again (advisory locks are
    // reentrant per session) and another key: release() must leave the session holding nothing,
    // or the pool lends it to the next caller with the locks still granted.
    void release_leaves_no_lock_on_a_reentered_session() {
        guarded([&] {
            for (const auto mode : {pglock::Mode::exclusive, pglock::Mode::shared}) {
                Pool pool(dsn_, {.max_size = 1});
                pglock::LockOptions options;
                options.mode = mode;
                pglock::Lock lk(pool, pgt::unique_name(), options);
                const std::int64_t other_key = pglock::key_of(pgt::unique_name("other"));
                auto g = lk.acquire_conn(Context::with_timeout(10s));
                const int pid = g.backend_pid();
                {
                    auto s = g.session();
                    s->exec(mode == pglock::Mode::shared ? "SELECT pg_advisory_lock_shared($1::bigint)"
                                                         : "SELECT pg_advisory_lock($1::bigint)",
                            {lk.key()});
                    s->exec("SELECT pg_advisory_lock($1::bigint)", {other_key});
                }
                QCOMPARE(g.release(), std::error_code());
                QCOMPARE(pgt::any_lock_pids(*obs_, lk.key()), std::vector<int>{});
                QCOMPARE(pgt::any_lock_pids(*obs_, other_key), std::vector<int>{});
                auto s = pool.acquire(Context::with_timeout(10s));
                QCOMPARE(s->backend_pid(), pid);  // the same session, lent again: and clean
                QCOMPARE(own_advisory_locks(s), 0LL);
            }
        });
    }

    // A session lent by the pool (directly, or through a Transaction) that took session-level
    // advisory locks comes back without them: the pool never lends a session holding one.
    void given_back_session_holds_no_advisory_lock() {
        guarded([&] {
            Pool pool(dsn_, {.max_size = 1});
            const std::int64_t key = pglock::key_of(pgt::unique_name());
            int pid = 0;
            {
                auto s = pool.acquire(Context::with_timeout(10s));
                pid = s->backend_pid();
                s->exec("SELECT pg_advisory_lock($1::bigint), pg_advisory_lock($1::bigint)", {key});
                s->exec("SELECT pg_advisory_lock_shared($1::bigint + 1)", {key});
            }
            QCOMPARE(pgt::any_lock_pids(*obs_, key), std::vector<int>{});
            QCOMPARE(pgt::any_lock_pids(*obs_, key + 1), std::vector<int>{});
            {
                pglock::Transaction tx(pool, Context::with_timeout(10s));
                QCOMPARE(tx.session().backend_pid(), pid);
                tx.session().exec("SELECT pg_advisory_lock($1::bigint)", {key});
                tx.commit();
            }
            QCOMPARE(pgt::any_lock_pids(*obs_, key), std::vector<int>{});
            auto s = pool.acquire(Context::with_timeout(10s));
            QCOMPARE(s->backend_pid(), pid);
            QCOMPARE(own_advisory_locks(s), 0LL);
        });
    }

    // What leaving nothing behind costs, counted on the wire: a try + release pair stays two
    // statements (the unlock statement drops every advisory lock itself); a session given back
    // after exec() gets one more, pg_advisory_unlock_all(), and then none until exec() runs again.
    void dropping_advisory_locks_costs_no_extra_statement_per_lock() {
        guarded([&] {
            Pool pool(dsn_, {.max_size = 1});
            pglock::Lock lk(pool, pgt::unique_name());
            { auto warm = lk.try_acquire(); }  // prepares the statements, once per session
            char* buffer = nullptr;
            std::size_t size = 0;
            FILE* trace = open_memstream(&buffer, &size);
            QVERIFY(trace);
            {
                auto s = pool.acquire();
                PQtrace(s->native_handle(), trace);
                PQsetTraceFlags(s->native_handle(), PQTRACE_SUPPRESS_TIMESTAMPS);
            }
            auto count = [&] {
                std::fflush(trace);
                return pgt::count_frontend_messages(std::string_view(buffer, size));
            };
            for (int i = 0; i < 3; ++i) {
                auto g = lk.try_acquire();
                QVERIFY(g.has_value());
                QVERIFY(!g->release());
            }
            const auto pairs = count();
            QCOMPARE(pairs.syncs, 6);
            QCOMPARE(pairs.queries + pairs.parses, 0);
            { QCOMPARE(pool.acquire()->exec("SELECT 1").get_int64(0, 0), std::int64_t{1}); }
            const auto after_exec = count();
            QCOMPARE(after_exec.syncs - pairs.syncs, 2);  // SELECT 1, then pg_advisory_unlock_all()
            { auto idle = pool.acquire(); }
            QCOMPARE(count().syncs, after_exec.syncs);  // nothing ran: nothing to drop
            {
                auto s = pool.acquire();
                PQuntrace(s->native_handle());
            }
            std::fclose(trace);
            std::free(buffer);
        });
    }

    // A Lock keeps its pool's state alive: the Pool object may move (a vector growing) or go
    // away before the Lock.
    void lock_survives_its_pool_moving_or_dying() {
        guarded([&] {
            std::vector<Pool> pools;
            pools.reserve(1);
            pools.emplace_back(dsn_, PoolOptions{.max_size = 1});
            pglock::Lock lk(pools[0], pgt::unique_name());
            pools.emplace_back(dsn_, PoolOptions{.max_size = 1});  // reallocates: pools[0] moved
            {
                auto g = lk.try_acquire(Context::with_timeout(10s));
                QVERIFY(g.has_value());
                QCOMPARE(pgt::granted_pids(*obs_, lk.key()), std::vector<int>{g->backend_pid()});
            }
            QCOMPARE(pools[0].open_count(), std::size_t{1});  // the moved pool is the Lock's pool
            pools.clear();
            auto g = lk.try_acquire(Context::with_timeout(10s));
            QVERIFY(g.has_value());
            QCOMPARE(g->release(), std::error_code());
        });
    }

    // A thread gets back the session it gave back, not the one another thread gave back after
    // it: a client thread then keeps talking to one backend (see take_idle_locked in pool.cpp).
    void thread_gets_back_its_own_session() {
        guarded([&] {
            Pool pool(dsn_, PoolOptions{2, std::chrono::milliseconds(5000)});
            auto own = pool.acquire(Context::with_timeout(10s));
            auto other = pool.acquire(Context::with_timeout(10s));
            const int own_pid = own->backend_pid();
            const int other_pid = other->backend_pid();
            QVERIFY(own_pid != other_pid);
            own.reset();                                 // given back by this thread ...
            std::thread([&] { other.reset(); }).join();  // ... then another thread's, last
            QCOMPARE(pool.idle_count(), std::size_t{2});
            for (int i = 0; i < 3; ++i) {
                auto again = pool.acquire(Context::with_timeout(10s));  // plain LIFO: other_pid
                QCOMPARE(again->backend_pid(), own_pid);
            }
            // With none of its own idle, a thread takes the one given back last.
            auto first = pool.acquire(Context::with_timeout(10s));
            QCOMPARE(first->backend_pid(), own_pid);
            auto second = pool.acquire(Context::with_timeout(10s));
            QCOMPARE(second->backend_pid(), other_pid);
            QCOMPARE(pool.open_count(), std::size_t{2});
        });
    }

    void discarded_session_not_reused() {
        guarded([&] {
            Pool pool(dsn_, PoolOptions{1, std::chrono::milliseconds(5000)});
            int pid = 0;
            {
                auto s = pool.acquire(Context::with_timeout(10s));
                pid = s->backend_pid();
                s->exec("SET application_name = 'dirty'");
                s.discard();
                QVERIFY(!bool(s));
            }
            auto s = pool.acquire(Context::with_timeout(10s));
            QVERIFY(s->backend_pid() != pid);
            QVERIFY(qba(std::string(s->exec("SHOW application_name").get(0, 0))) != QByteArray("dirty"));
        });
    }

    // An idle session whose backend died meanwhile is not lent (checked alive on acquire).
    void dead_idle_session_not_lent() {
        guarded([&] {
            Pool pool(dsn_, PoolOptions{2, std::chrono::milliseconds(5000)});
            int pid = 0;
            {
                auto s = pool.acquire(Context::with_timeout(10s));
                pid = s->backend_pid();
            }
            QCOMPARE(pool.idle_count(), std::size_t{1});
            QVERIFY(obs_->boolean("SELECT pg_terminate_backend($1::int)", {std::to_string(pid)}));
            QVERIFY(wait_until([&] { return !pgt::backend_exists(*obs_, pid); }, 5s));
            auto s = pool.acquire(Context::with_timeout(10s));
            QVERIFY2(s->backend_pid() != pid, "the pool lent a session whose backend was terminated");
            QCOMPARE(s->exec("SELECT 1").get_int64(0, 0), std::int64_t{1});
        });
    }

    void exec_deadline_cancels_on_server() {
        guarded([&] {
            Pool pool(dsn_);
            auto s = pool.acquire(Context::with_timeout(10s));
            const auto marker = pgt::unique_name();
            const std::string sql = "SELECT pg_sleep(30) /* " + marker + " */";
            QElapsedTimer timer;
            timer.start();
            const auto err = pgt::catch_error([&] { (void)s->exec(sql, {}, Context::with_timeout(200ms)); });
            const auto elapsed = timer.elapsed();
            QVERIFY2(err.has_value(), "pg_sleep(30) with a 200 ms deadline returned normally");
            QCOMPARE(err->code(), Errc::deadline_exceeded);
            QVERIFY2(elapsed >= 180 && elapsed < 5000, qPrintable(QStringLiteral("returned after %1 ms").arg(elapsed)));
            const auto running = obs_->integer(
                "SELECT count(*) FROM pg_stat_activity WHERE state = 'active' AND query LIKE '%' || $1 || '%' "
                "AND pid <> pg_backend_pid()",
                {marker});
            QVERIFY2(running == 0, "pg_sleep still running on the server after exec() returned");
            // The session is still usable.
            QCOMPARE(s->exec("SELECT 7").get_int64(0, 0), std::int64_t{7});
            QVERIFY(s->reusable());
        });
    }

    void exec_stop_cancels_on_server() {
        guarded([&] {
            auto session = pglock::Session::connect(dsn_, Context::with_timeout(10s));
            const auto marker = pgt::unique_name();
            const std::string sql = "SELECT pg_sleep(30) /* " + marker + " */";
            std::stop_source stop;
            std::optional<pglock::Error> err;
            std::exception_ptr other;
            std::jthread t([&] {
                try {
                    (void)session.exec(sql, {}, Context{stop.get_token(), pglock::Clock::now() + 60s});
                } catch (const pglock::Error& e) {
                    err = e;
                } catch (...) {
                    other = std::current_exception();
                }
            });
            const int pid = session.backend_pid();
            QVERIFY2(wait_until([&] {
                         return obs_->integer("SELECT count(*) FROM pg_stat_activity WHERE pid = $1::int AND "
                                              "state = 'active' AND query LIKE '%' || $2 || '%'",
                                              {std::to_string(pid), marker}) == 1;
                     }, 10s),
                     "the statement never ran");
            QElapsedTimer timer;
            timer.start();
            stop.request_stop();
            t.join();
            QVERIFY2(!other, pgt::describe(other).c_str());
            QVERIFY2(err.has_value(), "no error");
            QCOMPARE(err->code(), Errc::canceled);
            QVERIFY2(timer.elapsed() < 5000, "stop did not end the statement promptly");
            QCOMPARE(obs_->integer("SELECT count(*) FROM pg_stat_activity WHERE state = 'active' AND "
                                   "query LIKE '%' || $1 || '%' AND pid <> pg_backend_pid()",
                                   {marker}),
                     0LL);
            QCOMPARE(session.exec("SELECT 8").get_int64(0, 0), std::int64_t{8});
        });
    }

    void server_error_has_sqlstate() {
        guarded([&] {
            auto session = pglock::Session::connect(dsn_);
            const auto err = pgt::catch_error([&] { (void)session.exec("SELECT * FROM no_such_table_pglock"); });
            QVERIFY(err.has_value());
            QCOMPARE(err->code(), Errc::query_failed);
            QCOMPARE(qba(err->sqlstate()), QByteArray("42P01"));
            QVERIFY2(std::string(err->what()).find("no_such_table_pglock") != std::string::npos, err->what());
            QVERIFY(session.reusable());
            // Parameters are text and NULL-able.
            auto r = session.exec("SELECT $1::text, $2::text IS NULL, $3::bigint", {"a'b", nullptr, std::int64_t{-5}});
            QCOMPARE(qba(std::string(r.get(0, 0))), QByteArray("a'b"));
            QVERIFY(r.get_bool(0, 1));
            QCOMPARE(r.get_int64(0, 2), std::int64_t{-5});
            QVERIFY(r.is_null(0, 0) == false);
            QCOMPARE(r.column_index("int8"), 2);
        });
    }

    void bad_conninfo_connection_failed() {
        guarded([&] {
            // Nobody listens: libpq's message comes through.
            {
                Pool pool(kUnreachable);
                const auto err = pgt::catch_error([&] { (void)pool.acquire(Context::with_timeout(20s)); });
                QVERIFY2(err.has_value(), "acquire from an unreachable server succeeded");
                QCOMPARE(err->code(), Errc::connection_failed);
                QVERIFY2(std::string(err->what()).find("Connection refused") != std::string::npos, err->what());
                QCOMPARE(pool.open_count(), std::size_t{0});
            }
            // A malformed conninfo: the exact libpq parse error.
            {
                const std::string bad = "host=localhost this_is_not_an_option";
                char* perr = nullptr;
                PQconninfoOption* parsed = PQconninfoParse(bad.c_str(), &perr);
                QVERIFY(parsed == nullptr && perr != nullptr);
                std::string expected = perr;
                PQfreemem(perr);
                while (!expected.empty() && (expected.back() == '\n' || expected.back() == ' ')) expected.pop_back();

                const auto err = pgt::catch_error([&] { (void)pglock::Session::connect(bad); });
                QVERIFY(err.has_value());
                QCOMPARE(err->code(), Errc::connection_failed);
                QVERIFY2(std::string(err->what()).find(expected) != std::string::npos,
                         ("expected libpq's \"" + expected + "\" in: " + err->what()).c_str());
            }
            // A database that does not exist: the server's message comes through.
            if (dsn_.find("://") == std::string::npos) {
                Pool pool(dsn_ + " dbname=pglock_no_such_db");
                const auto err = pgt::catch_error([&] { (void)pool.acquire(Context::with_timeout(10s)); });
                QVERIFY(err.has_value());
                QCOMPARE(err->code(), Errc::connection_failed);
                QVERIFY2(std::string(err->what()).find("pglock_no_such_db") != std::string::npos, err->what());
            }
        });
    }

    void uri_form_works() {
        guarded([&] {
            const std::string uri = to_uri(dsn_);
            QVERIFY2(uri.rfind("postgresql://", 0) == 0, uri.c_str());
            const auto opts = parse_conninfo(dsn_);
            Pool pool(uri);
            auto s = pool.acquire(Context::with_timeout(10s));
            if (opts.count("dbname"))
                QCOMPARE(qba(std::string(s->exec("SELECT current_database()").get(0, 0))), qba(opts.at("dbname")));
            if (opts.count("port"))
                QCOMPARE(qba(std::string(s->exec("SELECT current_setting('port')").get(0, 0))), qba(opts.at("port")));
            // The same server: a lock taken through the URI pool is seen by the DSN observer.
            pglock::Lock lk(pool, pgt::unique_name());
            auto g = lk.try_acquire();
            QVERIFY(g.has_value());
            QCOMPARE(pgt::granted_pids(*obs_, lk.key()), std::vector<int>{g->backend_pid()});
        });
    }
};

QTEST_GUILESS_MAIN(TestPool)
#include "test_pool.moc"
