// What terminating a backend would do, read from a real server before doing it.
#include <libpq-fe.h>

#include <QtTest>

#include <memory>
#include <string>

#include "core_test_util.hpp"
#include "pglock/backend_impact.hpp"

using namespace std::chrono_literals;
using pgt::guarded;
using pgt::RawConn;
using pgt::wait_until;
namespace mon = pglock::monitor;

class TestBackendImpact : public QObject {
    Q_OBJECT

    std::string dsn_;
    std::unique_ptr<RawConn> obs_;

    bool has_lock(const mon::BackendImpact& i, const std::string& object_part, bool granted = true) {
        for (const auto& l : i.locks)
            if (l.granted == granted && l.object.find(object_part) != std::string::npos) return true;
        return false;
    }
    std::string locks_text(const mon::BackendImpact& i) {
        std::string out;
        for (const auto& l : i.locks) out += l.object + " " + l.mode + (l.granted ? "" : " (waiting)") + "\n";
        return out;
    }

private slots:
    void initTestCase() {
        PGT_REQUIRE_DSN(dsn_);
        guarded([&] {
            obs_ = std::make_unique<RawConn>(dsn_);
            obs_->query("CREATE TABLE IF NOT EXISTS impact_rows (id int PRIMARY KEY, v int)");
        });
    }
    void cleanupTestCase() { obs_.reset(); }

    void a_writing_holder_shows_its_locks_waiters_and_work() {
        guarded([&] {
            const std::int64_t key = pglock::key_of(pgt::unique_name("impact"));
            RawConn holder(dsn_);
            holder.lock(key);  // a session-level advisory lock
            holder.query("BEGIN");
            holder.query("INSERT INTO impact_rows VALUES ((random() * 1e9)::int, 1)");

            RawConn waiter(dsn_);
            const std::string k = std::to_string(key);
            const char* v[] = {k.c_str()};
            QVERIFY(PQsendQueryParams(waiter.get(), "SELECT pg_advisory_lock($1::bigint)", 1, nullptr, v, nullptr, nullptr, 0));
            QVERIFY(wait_until([&] { return !pgt::waiting_pids(*obs_, key).empty(); }, 10s));

            auto s = pglock::Session::connect(dsn_);
            const mon::BackendImpact i = mon::backend_impact(s, holder.pid());
            QVERIFY(i.found);
            QCOMPARE(i.state, std::string("idle in transaction"));
            QVERIFY2(has_lock(i, "advisory key " + std::to_string(key)), locks_text(i).c_str());
            QVERIFY2(has_lock(i, "relation public.impact_rows"), locks_text(i).c_str());
            QVERIFY2(has_lock(i, "transactionid "), locks_text(i).c_str());
            QCOMPARE(i.locks.front().advisory_key.value_or(0), key);  // advisory locks first
            QCOMPARE(i.waiting_pids, std::vector<int>{waiter.pid()});
            QVERIFY(i.wrote);
            QVERIFY(i.transaction_age().has_value() && *i.transaction_age() >= 0);

            holder.query("ROLLBACK");
            holder.unlock(key);
            // The waiter's lock result, then the end of its query: both freed (the asan preset's
            // leak check saw the first kept).
            while (PGresult* r = PQgetResult(waiter.get())) PQclear(r);
        });
    }

    void an_idle_reader_rolls_back_nothing_and_a_gone_pid_is_not_found() {
        guarded([&] {
            const std::int64_t key = pglock::key_of(pgt::unique_name("impact-idle"));
            RawConn holder(dsn_);
            holder.lock(key);
            auto s = pglock::Session::connect(dsn_);
            const mon::BackendImpact i = mon::backend_impact(s, holder.pid());
            QVERIFY(i.found);
            QVERIFY(!i.wrote);
            QVERIFY(!i.transaction_age());
            QVERIFY(i.waiting_pids.empty());
            QVERIFY2(has_lock(i, "advisory key " + std::to_string(key)), locks_text(i).c_str());
            QVERIFY(!mon::backend_impact(s, 0x7ffffff0).found);
        });
    }
};

QTEST_GUILESS_MAIN(TestBackendImpact)
#include "test_backend_impact.moc"
