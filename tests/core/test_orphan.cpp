// Orphan evidence on a real server: a holder idle (not in a transaction) while another session
// waits; the same pooled backend seen under two applications through a real PgBouncer in
// transaction mode (tests/pg/pgbouncer), where a session lock stays behind on the backend.
#include <libpq-fe.h>

#include <QtTest>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>

#include "core_test_util.hpp"
#include "pglock/orphan.hpp"

using namespace std::chrono_literals;
using pgt::guarded;
using pgt::RawConn;
using pgt::wait_until;
namespace mon = pglock::monitor;

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

bool has(const std::vector<mon::OrphanEvidence>* e, mon::OrphanSign sign, const std::string& part = {}) {
    if (!e) return false;
    for (const auto& x : *e)
        if (x.sign == sign && x.text.find(part) != std::string::npos) return true;
    return false;
}

std::string shown(const std::vector<mon::OrphanEvidence>* e) {
    std::string out;
    if (e)
        for (const auto& x : *e) out += std::string(mon::sign_name(x.sign)) + ": " + x.text + "\n";
    return out.empty() ? "(no evidence)" : out;
}

// A session waiting on `key` (pg_advisory_lock sent, not read): cancelled and closed on scope exit.
struct AsyncWaiter {
    std::unique_ptr<RawConn> conn;
    AsyncWaiter(const std::string& dsn, std::int64_t key) : conn(std::make_unique<RawConn>(dsn)) {
        const std::string k = std::to_string(key);
        const char* v[] = {k.c_str()};
        if (!PQsendQueryParams(conn->get(), "SELECT pg_advisory_lock($1::bigint)", 1, nullptr, v, nullptr, nullptr, 0))
            throw std::runtime_error("send failed");
    }
    ~AsyncWaiter() {
        if (PGcancel* c = PQgetCancel(conn->get())) {
            char err[256];
            PQcancel(c, err, sizeof err);
            PQfreeCancel(c);
        }
    }
};

}  // namespace

class TestOrphan : public QObject {
    Q_OBJECT

    std::string dsn_;
    std::unique_ptr<RawConn> obs_;

    mon::Snapshot poll(const std::string& dsn) {
        auto s = pglock::Session::connect(dsn);
        return mon::poll(s);
    }

private slots:
    void initTestCase() {
        PGT_REQUIRE_DSN(dsn_);
        guarded([&] { obs_ = std::make_unique<RawConn>(dsn_); });
    }
    void cleanupTestCase() { obs_.reset(); }

    void pooler_hints_from_what_the_server_shows() {
        mon::Backend b;
        b.application_name = "PgBouncer";
        QVERIFY(mon::pooler_hint(b).find("pgbouncer") != std::string::npos);
        b.application_name = "billing";
        b.client_hostname = "pgpool-1.internal";
        QVERIFY(mon::pooler_hint(b).find("pgpool") != std::string::npos);
        b.client_hostname.clear();
        b.state = "idle";
        b.query = "DISCARD ALL";
        QVERIFY(mon::pooler_hint(b).find("DISCARD ALL") != std::string::npos);
        b.query = "SELECT 1";
        QVERIFY(mon::pooler_hint(b).empty());
    }

    void idle_holder_with_a_waiter_is_flagged_with_its_evidence() {
        guarded([&] {
            const std::int64_t key = pglock::key_of(pgt::unique_name("orphan-idle"));
            RawConn holder(dsn_);
            holder.query("SET application_name = 'forgotten-job'");
            holder.lock(key);  // then idle: nobody will release it
            mon::OrphanWatch watch({.idle_seconds = 0.3});

            // Nobody waits yet: an idle holder harms no one.
            QVERIFY(wait_until([&] { return obs_->boolean("SELECT now() - state_change > interval '400 ms' FROM pg_stat_activity WHERE pid = $1::int", {std::to_string(holder.pid())}); }, 10s));
            watch.update(poll(dsn_));
            QVERIFY2(!has(watch.evidence(holder.pid()), mon::OrphanSign::idle_holder), shown(watch.evidence(holder.pid())).c_str());

            AsyncWaiter waiter(dsn_, key);
            QVERIFY(wait_until([&] { return !pgt::waiting_pids(*obs_, key).empty(); }, 10s));
            watch.update(poll(dsn_));
            const auto* e = watch.evidence(holder.pid());
            QVERIFY2(has(e, mon::OrphanSign::idle_holder, "idle (not in a transaction) for"), shown(e).c_str());
            QVERIFY2(has(e, mon::OrphanSign::idle_holder, "while 1 session waits on its locks"), shown(e).c_str());
            QVERIFY(!watch.pooled(holder.pid()));
        });
    }

    void holder_in_a_transaction_is_not_idle_evidence() {
        guarded([&] {
            const std::int64_t key = pglock::key_of(pgt::unique_name("orphan-xact"));
            RawConn holder(dsn_);
            holder.query("BEGIN");
            holder.lock(key);
            AsyncWaiter waiter(dsn_, key);
            QVERIFY(wait_until([&] { return !pgt::waiting_pids(*obs_, key).empty(); }, 10s));
            QVERIFY(wait_until([&] { return obs_->boolean("SELECT now() - state_change > interval '400 ms' FROM pg_stat_activity WHERE pid = $1::int", {std::to_string(holder.pid())}); }, 10s));
            mon::OrphanWatch watch({.idle_seconds = 0.3});
            watch.update(poll(dsn_));
            QVERIFY2(!has(watch.evidence(holder.pid()), mon::OrphanSign::idle_holder), shown(watch.evidence(holder.pid())).c_str());
            holder.query("ROLLBACK");
        });
    }

    // This library's holder identity changes application_name with every lock it takes or lets
    // go ("worker" while waiting, "worker pglock:NAME" while holding): the same client, no pooler.
    void holder_identity_is_not_another_application() {
        mon::Snapshot s;
        s.server_now = 100;
        mon::LockEntry e;
        e.key = 1;
        e.holders.push_back({7, false});
        s.locks.push_back(e);
        mon::Backend b;
        b.pid = 7;
        b.backend_start = 1;
        b.state = "active";
        mon::OrphanWatch watch;
        for (const char* app : {"billing-worker", "billing-worker pglock:orders.daily", "billing-work pglock:a-very-long-name%",
                                "billing-worker pglock:other"}) {
            b.application_name = app;
            s.backends[7] = b;
            watch.update(s);
        }
        QVERIFY2(!has(watch.evidence(7), mon::OrphanSign::pooled_backend), shown(watch.evidence(7)).c_str());
        QCOMPARE(watch.names_seen(7), std::vector<std::string>{"billing-worker"});
        b.application_name = "reports pglock:orders.daily";
        s.backends[7] = b;
        watch.update(s);
        QVERIFY2(has(watch.evidence(7), mon::OrphanSign::pooled_backend, "\"billing-worker\", \"reports\""), shown(watch.evidence(7)).c_str());
    }

    // Through PgBouncer in transaction mode: client A's session lock stays on server backend X;
    // client B is later served by X. The monitor sees X under A's name, then under B's.
    void pooled_backend_through_a_real_pgbouncer() {
        if (std::getenv("PGLOCK_TEST_DSN")) QSKIP("PGLOCK_TEST_DSN is set: this test puts a PgBouncer before the private cluster only");
        char dir[] = "/tmp/pglock-orphan-bouncer.XXXXXX";
        QVERIFY(::mkdtemp(dir) != nullptr);
        const std::string script = std::string(PGLOCK_TEST_SOURCE_DIR) + "/tests/pg/pgbouncer";
        const std::string bouncer_dir = dir;
        const auto stop = qScopeGuard([&] { std::system((script + " stop " + bouncer_dir + " && rm -rf " + bouncer_dir).c_str()); });
        const std::string bouncer = run_capture(script + " start " + bouncer_dir + " '" + pgt::conninfo_value(dsn_, "host") +
                                                "' " + pgt::conninfo_value(dsn_, "port"));
        QVERIFY2(!bouncer.empty(), "PgBouncer did not start (is it installed? scripts/setup installs it)");
        const std::string direct = dsn_ + " dbname=postgres";  // the database the bouncer serves
        guarded([&] {
            const std::int64_t key = pglock::key_of(pgt::unique_name("orphan-pooled"));
            RawConn a(bouncer + " application_name=svc-a");
            a.query("SELECT pg_advisory_lock($1::bigint)", {std::to_string(key)});
            RawConn obs(direct);
            const int x = std::stoi(obs.scalar(
                "SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND objsubid = 1 AND classid = $1::oid AND objid = $2::oid",
                pgt::tag_params(key)));
            mon::OrphanWatch watch;
            watch.update(poll(direct));
            QCOMPARE(watch.names_seen(x), std::vector<std::string>{"svc-a"});
            QVERIFY(!has(watch.evidence(x), mon::OrphanSign::pooled_backend));

            // Client B until the pooler hands it backend X (round robin over the idle ones).
            RawConn b(bouncer + " application_name=svc-b");
            QVERIFY2(wait_until([&] { return std::stoi(b.scalar("SELECT pg_backend_pid()")) == x; }, 20s, 10ms),
                     "PgBouncer never gave client B the backend that holds A's lock");
            watch.update(poll(direct));
            const auto* e = watch.evidence(x);
            QVERIFY2(has(e, mon::OrphanSign::pooled_backend, "\"svc-a\", \"svc-b\""), shown(e).c_str());
            QVERIFY(watch.pooled(x));
            obs.query("SELECT pg_terminate_backend($1::int)", {std::to_string(x)});  // the lock goes with it
        });
    }

    // The claims join's confirmed leaks become "unclaimed" evidence of their holder; ghosts (their
    // pid holds nothing) and leaks not yet confirmed do not, and "unclaimed" is no pooler sign.
    void unclaimed_evidence_from_confirmed_leaks() {
        namespace claims = pglock::claims;
        std::map<int, std::vector<mon::OrphanEvidence>> flags;
        const std::vector<claims::Disagreement> found{
            {claims::Kind::leak, "http://app:9/metrics", 41, 7, "jobs.a", 100, 2, 1},
            {claims::Kind::leak, "http://app:9/metrics", 42, 8, "", 100, 1, 1},   // one poll only
            {claims::Kind::ghost, "http://app:9/metrics", 43, 9, "jobs.b", 100, 2, 1},
        };
        mon::add_unclaimed(flags, found, 165);
        QCOMPARE(flags.size(), std::size_t{1});
        const auto* e = &flags.at(41);
        QVERIFY2(has(e, mon::OrphanSign::unclaimed, "its application (http://app:9/metrics) does not claim key 7 (jobs.a), "
                                                    "which this backend holds (for 1m5s)"),
                 shown(e).c_str());
        // About the unclaimed key's lock only; a backend-wide sign is about every lock.
        mon::LockEntry seven, eight;
        seven.key = 7;
        eight.key = 8;
        QVERIFY(mon::about_lock(e->at(0), seven));
        QVERIFY(!mon::about_lock(e->at(0), eight));
        QVERIFY(mon::about_lock({mon::OrphanSign::idle_holder, "idle"}, eight));
        QVERIFY(!mon::pooler_sign(mon::OrphanSign::unclaimed));
        QCOMPARE(mon::sign_name(mon::OrphanSign::unclaimed), std::string_view("unclaimed"));
    }
};

QTEST_GUILESS_MAIN(TestOrphan)
#include "test_orphan.moc"
