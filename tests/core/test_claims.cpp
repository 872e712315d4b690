// What a process believes it holds (lock_held_info, lock_lost_total) on a real prometheus-cpp
// registry, read back through core's exposition parser; and the join of those claims with the
// monitor's snapshots (pglock::claims): ghosts and leaks on a real server.
#include <QtTest>

#include <prometheus/registry.h>
#include <prometheus/text_serializer.h>

#include <memory>
#include <string>
#include <vector>

#include "core_test_util.hpp"
#include "pglock/claims.hpp"
#include "pglock/exposition.hpp"
#include "pglock/monitor.hpp"
#include "pglock/prometheus.hpp"

using pglock::Lock;
using pglock::exposition::HeldClaim;
namespace claims = pglock::claims;
using namespace std::chrono_literals;
using pgt::guarded;

namespace {

// The registry as a /metrics page, parsed back by the parser lockscope and `pglock status` use.
pglock::exposition::LockScrape scrape(prometheus::Registry& registry) {
    const std::string text = prometheus::TextSerializer().Serialize(registry.Collect());
    auto parsed = pglock::exposition::parse_lock_metrics(text);
    if (parsed.error) throw std::runtime_error("exposition does not parse: " + parsed.error->describe() + "\n" + text);
    return parsed.scrape;
}

// What the join needs before it confirms a disagreement: a poll, a scrape of the app's
// registry, and another poll, each a tick of the clock `t` later.
void poll_scrape_poll(claims::Join& join, double& t, pglock::Session& monitor_session, prometheus::Registry& registry) {
    join.poll(pglock::monitor::poll(monitor_session), ++t);
    join.scrape("app", scrape(registry).held, ++t);
    join.poll(pglock::monitor::poll(monitor_session), ++t);
}

std::string describe(const std::vector<HeldClaim>& held) {
    std::string s = "[";
    for (const auto& c : held) s += " {" + c.name + " " + std::to_string(c.key) + " pid " + std::to_string(c.pid) + "}";
    return s + " ]";
}

std::string describe(const std::vector<claims::Disagreement>& ds) {
    std::string s = "[";
    for (const auto& d : ds) {
        s += " {" + std::string(claims::kind_string(d.kind)) + " " + d.endpoint + " key " + std::to_string(d.key) +
             " pid " + std::to_string(d.pid) + " '" + d.name + "' polls " + std::to_string(d.polls) + " scrapes " +
             std::to_string(d.scrapes) + "}";
    }
    return s + " ]";
}

bool terminate(pgt::RawConn& admin, int pid) {
    return admin.boolean("SELECT pg_terminate_backend($1::int)", {std::to_string(pid)});
}

// A snapshot with one bigint lock held by each (key, pid), backends started at `start[pid]`.
pglock::monitor::Snapshot snapshot_of(const std::vector<std::pair<std::int64_t, int>>& held, double start = 100) {
    pglock::monitor::Snapshot s;
    for (const auto& [key, pid] : held) {
        pglock::monitor::LockEntry e;
        e.key = key;
        e.tag = pglock::tag_of(key);
        e.holders.push_back({pid, false});
        s.locks.push_back(e);
        s.backends[pid].pid = pid;
        s.backends[pid].backend_start = start;
    }
    return s;
}

}  // namespace

class TestClaims : public QObject {
    Q_OBJECT

    std::string dsn_;
    std::unique_ptr<pglock::Pool> pool_;

private slots:
    void initTestCase() {
        PGT_REQUIRE_DSN(dsn_);
        guarded([&] { pool_ = std::make_unique<pglock::Pool>(dsn_); });
    }
    void cleanupTestCase() { pool_.reset(); }

    // lock_held_info{name,key,pid} is there exactly while a guard holds the lock, with the pid of
    // the backend that holds it; shared guards are one series each.
    void held_info_follows_acquire_and_release() {
        guarded([&] {
            auto registry = std::make_shared<prometheus::Registry>();
            pglock::LockOptions opts;
            opts.metrics = pglock::make_prometheus_metrics(registry);
            opts.mode = pglock::Mode::shared;
            const auto name = pgt::unique_name("claims");
            Lock lk(*pool_, name, opts);
            pgt::RawConn obs(dsn_);

            QVERIFY2(scrape(*registry).held.empty(), describe(scrape(*registry).held).c_str());
            auto a = lk.try_acquire();
            auto b = lk.try_acquire();
            QVERIFY(a && b);
            std::vector<HeldClaim> expected{{name, lk.key(), a->backend_pid()}, {name, lk.key(), b->backend_pid()}};
            std::sort(expected.begin(), expected.end());
            QCOMPARE(describe(scrape(*registry).held), describe(expected));
            // The pids are the server's: the backends that hold the key.
            std::vector<int> pids{expected[0].pid, expected[1].pid};
            QCOMPARE(pgt::granted_pids(obs, lk.key()), pids);

            QVERIFY(!a->release());
            QCOMPARE(describe(scrape(*registry).held), describe({{name, lk.key(), b->backend_pid()}}));
            b.reset();  // the destructor releases
            QVERIFY2(scrape(*registry).held.empty(), describe(scrape(*registry).held).c_str());
            QCOMPARE(scrape(*registry).locks.at(name).lost, 0.0);
        });
    }

    // A lock found lost leaves the claims and counts in lock_lost_total{name}.
    void held_info_goes_when_the_lock_is_lost() {
        guarded([&] {
            auto registry = std::make_shared<prometheus::Registry>();
            pglock::LockOptions opts;
            opts.metrics = pglock::make_prometheus_metrics(registry);
            const auto name = pgt::unique_name("claims.lost");
            Lock lk(*pool_, name, opts);
            pgt::RawConn admin(dsn_);
            auto g = lk.try_acquire();
            QVERIFY(g);
            QCOMPARE(scrape(*registry).held.size(), std::size_t{1});
            QVERIFY(terminate(admin, g->backend_pid()));
            QVERIFY2(pgt::wait_until([&] { return g->lost(); }, 10s), "the guard was not told its lock was lost");
            QVERIFY2(scrape(*registry).held.empty(), describe(scrape(*registry).held).c_str());
            QCOMPARE(scrape(*registry).locks.at(name).lost, 1.0);
            QCOMPARE(g->release(), make_error_code(pglock::Errc::lock_lost));
            QCOMPARE(scrape(*registry).locks.at(name).lost, 1.0);  // counted once
        });
    }

    // The parser's side of lock_held_info: claims sorted without repeats, value 0 claims
    // nothing, a claim without a decimal key or a positive pid fails the page.
    void held_info_parses_strictly() {
        const auto ok = pglock::exposition::parse_lock_metrics(
            "lock_held_info{name=\"b\",key=\"-5\",pid=\"9\"} 1\n"
            "lock_held_info{name=\"a\",key=\"7\",pid=\"10\",instance=\"x\"} 1\n"
            "lock_held_info{name=\"a\",key=\"7\",pid=\"10\",instance=\"y\"} 1\n"
            "lock_held_info{name=\"c\",key=\"8\",pid=\"11\"} 0\n"
            "lock_lost_total{name=\"a\"} 2\n");
        QVERIFY(!ok.error);
        QCOMPARE(describe(ok.scrape.held), describe({{"a", 7, 10}, {"b", -5, 9}}));
        QCOMPARE(ok.scrape.locks.at("a").lost, 2.0);
        for (const char* bad : {"lock_held_info{name=\"a\",pid=\"10\"} 1\n", "lock_held_info{name=\"a\",key=\"0x7\",pid=\"10\"} 1\n",
                                "lock_held_info{name=\"a\",key=\"7\",pid=\"0\"} 1\n", "lock_held_info{key=\"7\",pid=\"1\"} 1\n"}) {
            const auto parsed = pglock::exposition::parse_lock_metrics(bad);
            QVERIFY2(parsed.error && parsed.scrape.held.empty(), bad);
        }
    }

    // Skew: a disagreement is reported only after two polls and one scrape have shown it, and a
    // scrape taken before a release cannot confirm a ghost alone.
    void join_needs_two_polls_and_a_scrape() {
        claims::Join join;
        const HeldClaim claim{"jobs.a", 42, 1001};
        join.poll(snapshot_of({{42, 1001}}), 1);
        join.scrape("app", {claim}, 2);
        QVERIFY(join.candidates().empty());
        // Released on the server; the last scrape (stale) still claims it.
        join.poll(snapshot_of({}), 3);
        join.poll(snapshot_of({}), 4);
        QCOMPARE(join.candidates().size(), std::size_t{1});
        QVERIFY2(join.confirmed().empty(), describe(join.candidates()).c_str());
        join.scrape("app", {}, 5);  // the app released it too: no ghost
        QVERIFY(join.candidates().empty());

        // A real ghost: claimed on, held by nobody, across scrape, poll, poll.
        join.scrape("app", {claim}, 6);
        QVERIFY(join.confirmed().empty());
        join.poll(snapshot_of({}), 7);
        QVERIFY(join.confirmed().empty());
        join.poll(snapshot_of({}), 8);
        const auto ghosts = join.confirmed();
        QCOMPARE(ghosts.size(), std::size_t{1});
        QCOMPARE(int(ghosts[0].kind), int(claims::Kind::ghost));
        QCOMPARE(ghosts[0].since, 6.0);
        QCOMPARE(ghosts[0].name, std::string("jobs.a"));
        QCOMPARE(ghosts[0].endpoint, std::string("app"));
    }

    // A backend the app claimed before stays the app's while it lives (same backend_start): a
    // key it holds with no claim is a leak; the same pid reused by another backend is not.
    void join_remembers_the_apps_backends() {
        claims::Join join;
        join.poll(snapshot_of({{42, 1001}}), 1);
        join.scrape("app", {{"jobs.a", 42, 1001}}, 2);
        // The guard released, but its session went back to the pool still holding key 7.
        for (double t : {3.0, 4.0}) join.poll(snapshot_of({{7, 1001}}), t);
        QVERIFY(join.confirmed().empty());  // two polls, no scrape yet
        join.scrape("app", {}, 5);          // claims nothing now: 1001 is still the app's backend
        auto leaks = join.confirmed();
        QCOMPARE(leaks.size(), std::size_t{1});
        QCOMPARE(int(leaks[0].kind), int(claims::Kind::leak));
        QCOMPARE(leaks[0].key, std::int64_t{7});
        QCOMPARE(leaks[0].pid, 1001);
        QCOMPARE(leaks[0].since, 3.0);
        // Pid 1001 now another backend: not the app's.
        join.poll(snapshot_of({{7, 1001}}, 200), 8);
        QVERIFY2(join.candidates().empty(), describe(join.candidates()).c_str());
    }

    // A transaction-level lock taken through the library is the process's too: while the
    // transaction lasts lock_held_info claims it on the transaction's backend, and its commit
    // ends the claim. Without that, a pooled backend the app claimed a moment before (so the join
    // counts it as the app's) shows the transaction's lock as a leak: a false alarm.
    void xact_lock_is_claimed_not_a_leak() {
        guarded([&] {
            auto registry = std::make_shared<prometheus::Registry>();
            pglock::LockOptions opts;
            opts.metrics = pglock::make_prometheus_metrics(registry);
            pglock::Pool one(dsn_, {.max_size = 1});  // the transaction gets the guard's backend back
            const auto session_name = pgt::unique_name("claims.session");
            const auto xact_name = pgt::unique_name("claims.xact");
            Lock session_lock(one, session_name, opts);
            Lock xact_lock(one, xact_name, opts);
            auto monitor_session = pglock::Session::connect(dsn_);
            claims::Join join;
            double t = 0;
            auto observe = [&] { poll_scrape_poll(join, t, monitor_session, *registry); };

            auto g = session_lock.try_acquire();
            QVERIFY(g);
            const int pid = g->backend_pid();
            observe();
            QVERIFY(!g->release());
            pglock::Transaction tx(one);
            QVERIFY(tx.session().backend_pid() == pid);
            QVERIFY(xact_lock.try_acquire_xact(&tx));
            observe();
            QVERIFY2(join.confirmed().empty(), describe(join.confirmed()).c_str());
            QCOMPARE(describe(scrape(*registry).held), describe({{xact_name, xact_lock.key(), pid}}));
            tx.commit();
            QVERIFY2(scrape(*registry).held.empty(), describe(scrape(*registry).held).c_str());
        });
    }

    // End to end on the server: a guard whose lost-lock notice is held back by a session lease
    // (the watcher leaves a leased session alone) while its backend is terminated is a ghost; a
    // lock taken on a guard's session behind its back is a leak.
    void ghost_and_leak_on_a_real_server() {
        guarded([&] {
            auto registry = std::make_shared<prometheus::Registry>();
            pglock::LockOptions opts;
            opts.metrics = pglock::make_prometheus_metrics(registry);
            const auto ghost_name = pgt::unique_name("claims.ghost");
            const auto leak_name = pgt::unique_name("claims.leak");
            const auto extra_key = pglock::key_of(pgt::unique_name("claims.extra"));
            Lock ghost_lock(*pool_, ghost_name, opts);
            Lock leak_lock(*pool_, leak_name, opts);
            pgt::RawConn admin(dsn_);
            auto monitor_session = pglock::Session::connect(dsn_);
            claims::Join join;
            double t = 0;
            auto observe = [&] { poll_scrape_poll(join, t, monitor_session, *registry); };

            auto g = ghost_lock.try_acquire();
            auto h = leak_lock.try_acquire();
            QVERIFY(g && h);
            observe();
            QVERIFY2(join.candidates().empty(), describe(join.candidates()).c_str());

            {
                auto lease = g->session();  // the watcher cannot tell the guard while this lasts
                QVERIFY(terminate(admin, g->backend_pid()));
                QVERIFY(pgt::wait_until([&] { return !pgt::backend_exists(admin, g->backend_pid()); }, 10s));
                auto extra = h->session();
                extra->exec("SELECT pg_advisory_lock($1::bigint)", {std::to_string(extra_key)});
                observe();
                const auto found = join.confirmed();
                QCOMPARE(found.size(), std::size_t{2});
                const auto& ghost = found[0].kind == claims::Kind::ghost ? found[0] : found[1];
                const auto& leak = found[0].kind == claims::Kind::leak ? found[0] : found[1];
                QVERIFY2(ghost.kind == claims::Kind::ghost && leak.kind == claims::Kind::leak, describe(found).c_str());
                QCOMPARE(ghost.key, ghost_lock.key());
                QCOMPARE(ghost.pid, g->backend_pid());
                QCOMPARE(ghost.name, ghost_name);
                QCOMPARE(leak.key, extra_key);
                QCOMPARE(leak.pid, h->backend_pid());
                QCOMPARE(ghost.since, 1.0 + 3);
            }
            // The leases ended: the guard learns it lost its lock, and its claim goes.
            QVERIFY2(pgt::wait_until([&] { return g->lost(); }, 10s), "the guard was not told after the lease");
            QVERIFY(!h->release());  // its unlock drops the extra level too
            observe();
            QVERIFY2(join.candidates().empty(), describe(join.candidates()).c_str());
        });
    }
};

QTEST_GUILESS_MAIN(TestClaims)
#include "test_claims.moc"
