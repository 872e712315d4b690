// Shared helpers of the core tests: a plain libpq session (the "other replica" and the observer,
// independent of pglock), pg_locks / pg_stat_activity probes, a bounded wait_until, unique lock
// names, and a wrapper that turns an unexpected exception into a test failure with its message.
#pragma once

#include <libpq-fe.h>

#include <QByteArray>
#include <QString>
#include <QUuid>
#include <QtTest>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <condition_variable>
#include <mutex>
#include <cstdint>
#include <exception>
#include <memory>
#include <optional>
#include <source_location>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>
#include <thread>
#include <vector>

#include "pg_test_env.hpp"
#include "stopped_backend.hpp"
#include "pglock/pglock.hpp"

namespace pglock {
// QCOMPARE prints codes by name.
inline char* toString(Errc code) {
    return qstrdup(std::string(code_string(code)).c_str());
}
}  // namespace pglock

namespace pgt {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

struct PGconnDeleter {
    void operator()(PGconn* conn) const noexcept { PQfinish(conn); }
};
struct PGresultDeleter {
    void operator()(PGresult* res) const noexcept { PQclear(res); }
};
using ResultPtr = std::unique_ptr<PGresult, PGresultDeleter>;

// A plain libpq session that knows nothing of pglock. Throws std::runtime_error on failure (the
// guarded() wrapper turns that into a test failure with the message).
class RawConn {
public:
    explicit RawConn(const std::string& dsn) : conn_(PQconnectdb(dsn.c_str())) {
        if (!conn_ || PQstatus(conn_.get()) != CONNECTION_OK)
            throw std::runtime_error("RawConn: connect failed: " + error());
    }

    PGconn* get() const noexcept { return conn_.get(); }
    int pid() const noexcept { return PQbackendPID(conn_.get()); }
    std::string error() const { return conn_ ? std::string(PQerrorMessage(conn_.get())) : "out of memory"; }

    ResultPtr query(const std::string& sql, const std::vector<std::string>& params = {}) {
        std::vector<const char*> values;
        values.reserve(params.size());
        for (const auto& p : params) values.push_back(p.c_str());
        ResultPtr res(PQexecParams(conn_.get(), sql.c_str(), static_cast<int>(values.size()), nullptr,
                                   values.empty() ? nullptr : values.data(), nullptr, nullptr, 0));
        const auto status = PQresultStatus(res.get());
        if (status != PGRES_TUPLES_OK && status != PGRES_COMMAND_OK)
            throw std::runtime_error("RawConn: `" + sql + "` failed: " + error());
        return res;
    }
    std::string scalar(const std::string& sql, const std::vector<std::string>& params = {}) {
        auto res = query(sql, params);
        if (PQntuples(res.get()) < 1 || PQnfields(res.get()) < 1)
            throw std::runtime_error("RawConn: `" + sql + "` returned no value");
        return PQgetvalue(res.get(), 0, 0);
    }
    long long integer(const std::string& sql, const std::vector<std::string>& params = {}) {
        return std::stoll(scalar(sql, params));
    }
    bool boolean(const std::string& sql, const std::vector<std::string>& params = {}) {
        return scalar(sql, params) == "t";
    }

    bool try_lock(std::int64_t key) { return boolean("SELECT pg_try_advisory_lock($1::bigint)", {std::to_string(key)}); }
    bool try_lock_shared(std::int64_t key) {
        return boolean("SELECT pg_try_advisory_lock_shared($1::bigint)", {std::to_string(key)});
    }
    void lock(std::int64_t key) { query("SELECT pg_advisory_lock($1::bigint)", {std::to_string(key)}); }
    bool unlock(std::int64_t key) { return boolean("SELECT pg_advisory_unlock($1::bigint)", {std::to_string(key)}); }
    bool unlock_shared(std::int64_t key) {
        return boolean("SELECT pg_advisory_unlock_shared($1::bigint)", {std::to_string(key)});
    }

private:
    std::unique_ptr<PGconn, PGconnDeleter> conn_;
};

// The value of one keyword of a conninfo string ("" when absent or unparsable).
inline std::string conninfo_value(const std::string& dsn, const char* keyword) {
    std::string value;
    char* err = nullptr;
    if (PQconninfoOption* opts = PQconninfoParse(dsn.c_str(), &err)) {
        for (PQconninfoOption* o = opts; o->keyword; ++o)
            if (std::string(o->keyword) == keyword && o->val) value = o->val;
        PQconninfoFree(opts);
    }
    if (err) PQfreemem(err);
    return value;
}

inline std::vector<std::string> tag_params(std::int64_t key) {
    const auto tag = pglock::tag_of(key);
    return {std::to_string(tag.classid), std::to_string(tag.objid)};
}

inline std::vector<int> int_column(const ResultPtr& res) {
    std::vector<int> out;
    for (int i = 0; i < PQntuples(res.get()); ++i) out.push_back(std::stoi(PQgetvalue(res.get(), i, 0)));
    return out;
}

// PIDs with a granted pg_locks row for the bigint advisory key, sorted.
inline std::vector<int> granted_pids(RawConn& obs, std::int64_t key) {
    return int_column(obs.query(
        "SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND objsubid = 1 "
        "AND classid = $1::oid AND objid = $2::oid AND granted ORDER BY pid",
        tag_params(key)));
}

// PIDs waiting for the key: an ungranted pg_locks row and wait_event 'advisory' in
// pg_stat_activity, sorted.
inline std::vector<int> waiting_pids(RawConn& obs, std::int64_t key) {
    return int_column(obs.query(
        "SELECT l.pid FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid "
        "WHERE l.locktype = 'advisory' AND l.objsubid = 1 AND l.classid = $1::oid AND l.objid = $2::oid "
        "AND NOT l.granted AND a.wait_event_type = 'Lock' AND a.wait_event = 'advisory' ORDER BY l.pid",
        tag_params(key)));
}

// Every pg_locks row of the key (granted or not), as pids.
inline std::vector<int> any_lock_pids(RawConn& obs, std::int64_t key) {
    return int_column(obs.query(
        "SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND objsubid = 1 "
        "AND classid = $1::oid AND objid = $2::oid ORDER BY pid",
        tag_params(key)));
}

inline bool backend_exists(RawConn& obs, int pid) {
    return obs.boolean("SELECT EXISTS (SELECT 1 FROM pg_stat_activity WHERE pid = $1::int)", {std::to_string(pid)});
}

// Polls pred every `interval` until it is true or `timeout` has passed; returns its last value.
template <class Pred>
bool wait_until(Pred&& pred, std::chrono::milliseconds timeout, std::chrono::milliseconds interval = 10ms) {
    const auto end = Clock::now() + timeout;
    for (;;) {
        if (pred()) return true;
        if (Clock::now() >= end) return pred();
        std::this_thread::sleep_for(interval);
    }
}

// Ends the whole test process, with `what` on stderr, unless destroyed within `limit`: a test
// stuck in a deadlock or a hang fails fast (a thread stuck on a mutex can be neither joined nor
// stopped, so there is nothing gentler to do).
class Watchdog {
public:
    Watchdog(std::chrono::milliseconds limit, std::string what)
        : thread_([limit, what = std::move(what), this] {
              std::unique_lock lock(mutex_);
              if (!cv_.wait_for(lock, limit, [&] { return done_; })) {
                  std::fprintf(stderr, "FAIL! hang: %s still running after %lld ms\n", what.c_str(),
                               static_cast<long long>(limit.count()));
                  std::fflush(stderr);
                  std::_Exit(1);
              }
          }) {}
    ~Watchdog() {
        {
            std::lock_guard lock(mutex_);
            done_ = true;
        }
        cv_.notify_all();
        thread_.join();
    }
    Watchdog(const Watchdog&) = delete;
    Watchdog& operator=(const Watchdog&) = delete;

private:
    std::mutex mutex_;
    std::condition_variable cv_;
    bool done_ = false;
    std::thread thread_;
};

// Runs `body` under a Watchdog of `limit`.
template <class F>
void within(std::chrono::milliseconds limit, const char* what, F&& body) {
    Watchdog dog(limit, what);
    body();
}

// A lock name no other test (or run) uses.
inline std::string unique_name(const char* tag = nullptr) {
    std::string name = "pglock.test.";
    name += tag ? tag : (QTest::currentTestFunction() ? QTest::currentTestFunction() : "none");
    name += '.';
    name += QUuid::createUuid().toString(QUuid::WithoutBraces).toStdString();
    return name;
}

inline std::string describe(const pglock::Error& e) {
    std::string s = "pglock::Error{" + std::string(pglock::code_string(e.code()));
    if (!e.sqlstate().empty()) s += ", sqlstate " + e.sqlstate();
    s += "}: ";
    s += e.what();
    return s;
}

inline std::string describe(const std::error_code& ec) {
    if (!ec) return "success";
    return ec.category().name() + std::string(":") + std::to_string(ec.value()) + " (" + ec.message() + ")";
}

inline std::string describe(std::exception_ptr ep) {
    if (!ep) return "no exception";
    try {
        std::rethrow_exception(ep);
    } catch (const pglock::Error& e) {
        return describe(e);
    } catch (const std::exception& e) {
        return std::string("std::exception: ") + e.what();
    } catch (...) {
        return "unknown exception";
    }
}

// Runs a test body; an exception escaping it fails the test with its message (Qt Test 6.4
// would otherwise abort the whole executable with "Caught unhandled exception").
template <class F>
void guarded(F&& body, std::source_location loc = std::source_location::current()) {
    std::string failure;
    try {
        body();
        return;
    } catch (...) {
        failure = "unexpected exception: " + describe(std::current_exception());
    }
    QTest::qFail(failure.c_str(), loc.file_name(), static_cast<int>(loc.line()));
}

// Runs f, which is expected to throw pglock::Error; returns it, or nullopt when f returned.
// Other exceptions propagate.
template <class F>
std::optional<pglock::Error> catch_error(F&& f) {
    try {
        f();
    } catch (const pglock::Error& e) {
        return e;
    }
    return std::nullopt;
}

inline QByteArray qba(const std::string& s) { return QByteArray::fromStdString(s); }

// What the client sent, counted from a PQtrace log: Sync messages (one per extended-protocol
// statement), Parse (a statement prepared again) and Query (a simple-protocol statement).
struct FrontendCounts {
    int syncs = 0, parses = 0, queries = 0;
};
inline FrontendCounts count_frontend_messages(std::string_view trace) {
    FrontendCounts c;
    for (std::size_t line = 0; line < trace.size();) {
        const std::size_t end = trace.find('\n', line);
        const std::string_view l = trace.substr(line, (end == std::string_view::npos ? trace.size() : end) - line);
        if (l.find("F\t") == 0 || l.find("\tF\t") != std::string_view::npos) {
            if (l.find("\tSync") != std::string_view::npos) ++c.syncs;
            if (l.find("\tParse") != std::string_view::npos) ++c.parses;
            if (l.find("\tQuery") != std::string_view::npos) ++c.queries;
        }
        if (end == std::string_view::npos) break;
        line = end + 1;
    }
    return c;
}

}  // namespace pgt

// The test server's DSN; fails the test (in initTestCase) when there is none.
#define PGT_REQUIRE_DSN(var)                                                                           \
    do {                                                                                               \
        const auto pgt_dsn_ = ::pglock::test::test_dsn();                                              \
        QVERIFY2(pgt_dsn_.has_value(),                                                                 \
                 "no PostgreSQL test server: set PGLOCK_TEST_DSN or run through ctest (fixture pg)");  \
        var = *pgt_dsn_;                                                                               \
    } while (false)

// QVERIFY that a statement throws pglock::Error with the given code.
#define PGT_EXPECT_ERROR(stmt, expected_code)                                                          \
    do {                                                                                               \
        const auto pgt_err_ = ::pgt::catch_error([&] { (void)(stmt); });                               \
        QVERIFY2(pgt_err_.has_value(), "expected pglock::Error{" #expected_code "} from: " #stmt);     \
        QVERIFY2(pgt_err_->code() == (expected_code),                                                  \
                 ("wrong error from " #stmt ": " + ::pgt::describe(*pgt_err_)).c_str());               \
    } while (false)
