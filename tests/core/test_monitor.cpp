// The monitor engine against a real server: what one poll shows of holders, waiters, blocking
// chains, transaction-level and int4-pair locks, and how the hold tracker turns successive
// snapshots into holds. Holders and waiters are plain libpq sessions (pgt::RawConn), the monitor
// has its own pglock::Session, as the CLI and the app do.
#include <QRandomGenerator>
#include <QtTest>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "core_test_util.hpp"
#include "pglock/monitor.hpp"
#include "pglock/sqlstate.hpp"

using namespace std::chrono_literals;
using pglock::LockTag;
using pglock::monitor::Hold;
using pglock::monitor::HoldTracker;
using pglock::monitor::KeyForm;
using pglock::monitor::LockEntry;
using pglock::monitor::LockId;
using pglock::monitor::Snapshot;
using pglock::monitor::Wait;
using pglock::monitor::WaitTracker;
using pgt::guarded;
using pgt::RawConn;

namespace {

const LockEntry* find_lock(const Snapshot& s, KeyForm form, LockTag tag) {
    for (const auto& e : s.locks)
        if (e.form == form && e.tag == tag) return &e;
    return nullptr;
}
const LockEntry* find_key(const Snapshot& s, std::int64_t key) {
    return find_lock(s, KeyForm::bigint, pglock::tag_of(key));
}

std::vector<int> holder_pids(const LockEntry& e) {
    std::vector<int> out;
    for (const auto& h : e.holders) out.push_back(h.pid);
    return out;
}

std::vector<int> sorted(std::vector<int> v) {
    std::sort(v.begin(), v.end());
    return v;
}

// Sends a statement without waiting for it (a lock wait), and later collects its result.
void send(RawConn& c, const std::string& sql) {
    if (!PQsendQuery(c.get(), sql.c_str())) throw std::runtime_error("PQsendQuery: " + c.error());
}
// Waits for the statement sent with send() to end; true when it succeeded.
bool finish(RawConn& c) {
    bool ok = true;
    while (PGresult* r = PQgetResult(c.get())) {
        const auto st = PQresultStatus(r);
        if (st != PGRES_TUPLES_OK && st != PGRES_COMMAND_OK) ok = false;
        PQclear(r);
    }
    return ok;
}
void cancel(RawConn& c) {
    PGcancel* cn = PQgetCancel(c.get());
    char err[256];
    PQcancel(cn, err, sizeof err);
    PQfreeCancel(cn);
}

std::string k(std::int64_t key) { return std::to_string(key); }

std::int64_t fresh_key() { return pglock::key_of(pgt::unique_name()); }

// A synthetic snapshot: one exclusive holder per (key, pid), at server time `now`.
Snapshot synthetic(double now, const std::vector<std::pair<std::int64_t, int>>& holds) {
    Snapshot s;
    s.server_now = now;
    for (auto [key, pid] : holds) {
        LockEntry e;
        e.key = key;
        e.tag = pglock::tag_of(key);
        e.holders.push_back({pid, false});
        s.locks.push_back(e);
        s.backends[pid].pid = pid;
        s.backends[pid].application_name = "app-" + std::to_string(pid);
    }
    return s;
}

// Adds a waiter on `key` (creating the lock entry when missing) to a synthetic snapshot.
void add_waiter(Snapshot& s, std::int64_t key, int pid, std::optional<double> wait_start, std::vector<int> blocked_by) {
    auto it = std::find_if(s.locks.begin(), s.locks.end(), [&](const LockEntry& e) { return e.key == key; });
    if (it == s.locks.end()) {
        LockEntry e;
        e.key = key;
        e.tag = pglock::tag_of(key);
        s.locks.push_back(e);
        it = s.locks.end() - 1;
    }
    it->waiters.push_back({pid, false, wait_start, std::move(blocked_by)});
    s.backends[pid].pid = pid;
    s.backends[pid].application_name = "app-" + std::to_string(pid);
    s.backends[pid].usename = "user-" + std::to_string(pid);
}

Snapshot waiting(double now, std::int64_t key, int pid, std::optional<double> wait_start, std::vector<int> blocked_by) {
    Snapshot s = synthetic(now, {});
    add_waiter(s, key, pid, wait_start, std::move(blocked_by));
    return s;
}

}  // namespace

class TestMonitor : public QObject {
    Q_OBJECT

    std::string dsn_;
    std::optional<pglock::Session> mon_;  // the monitor's own session

    Snapshot poll() { return pglock::monitor::poll(*mon_); }

    // `s` with only the lock of `key`: other tests share the server and their waits come and go
    // between two polls, which a tracker fed the whole snapshot would count too.
    static Snapshot only_key(Snapshot s, std::int64_t key) {
        std::erase_if(s.locks, [&](const LockEntry& e) { return e.form != KeyForm::bigint || e.key != key; });
        return s;
    }

    // Polls until pred(snapshot) holds (bounded); returns the last snapshot.
    Snapshot poll_until(const std::function<bool(const Snapshot&)>& pred, std::chrono::milliseconds timeout = 10s) {
        const auto end = pgt::Clock::now() + timeout;
        for (;;) {
            Snapshot s = poll();
            if (pred(s) || pgt::Clock::now() >= end) return s;
            std::this_thread::sleep_for(10ms);
        }
    }

private slots:
    void initTestCase() {
        PGT_REQUIRE_DSN(dsn_);
        guarded([&] { mon_.emplace(pglock::Session::connect(dsn_)); });
    }
    void cleanupTestCase() { mon_.reset(); }

    void held_bigint_lock_shows_key_tag_holder_and_state() {
        guarded([&] {
            const std::int64_t key = fresh_key();
            RawConn a(dsn_);
            a.query("SET application_name = 'pglock-test-monitor-a'");
            a.lock(key);

            const Snapshot s = poll();
            QVERIFY(s.server_version >= 140000);
            QVERIFY(!s.in_recovery);
            // Where the poll's session is: the test server's host and port.
            if (const auto host = pgt::conninfo_value(dsn_, "host"); !host.empty()) QCOMPARE(s.host, host);
            if (const auto port = pgt::conninfo_value(dsn_, "port"); !port.empty()) QCOMPARE(s.port, std::stoi(port));
            QVERIFY(!s.host.empty());
            QVERIFY(s.port > 0);
            QVERIFY(s.server_now > 1.6e9);  // epoch seconds, from the server's clock
            QVERIFY(s.latency_ms > 0);
            const LockEntry* e = find_key(s, key);
            QVERIFY2(e, "the held key is missing from the snapshot");
            QCOMPARE(e->form, KeyForm::bigint);
            QCOMPARE(e->key, key);
            QCOMPARE(e->tag.classid, pglock::tag_of(key).classid);
            QCOMPARE(e->tag.objid, pglock::tag_of(key).objid);
            // The same numbers pg_locks shows to an operator.
            RawConn obs(dsn_);
            const auto tag_row = obs.query(
                "SELECT classid::int8, objid::int8 FROM pg_locks WHERE locktype = 'advisory' AND objsubid = 1 AND pid = $1",
                {std::to_string(a.pid())});
            QCOMPARE(PQntuples(tag_row.get()), 1);
            QCOMPARE(std::stoull(PQgetvalue(tag_row.get(), 0, 0)), std::uint64_t(e->tag.classid));
            QCOMPARE(std::stoull(PQgetvalue(tag_row.get(), 0, 1)), std::uint64_t(e->tag.objid));

            QCOMPARE(holder_pids(*e), std::vector<int>{a.pid()});
            QVERIFY(!e->holders[0].shared);  // exclusive
            QVERIFY(e->waiters.empty());
            QVERIFY(s.backends.count(a.pid()) == 1);
            const auto& b = s.backends.at(a.pid());
            QCOMPARE(b.state, std::string("idle"));
            QCOMPARE(b.application_name, std::string("pglock-test-monitor-a"));
            QVERIFY(!b.usename.empty());
            QVERIFY(b.backend_start.has_value());
            QVERIFY(!b.xact_start.has_value());  // a session lock outside any transaction
            // The monitor's own session holds nothing and is not a lock backend.
            QVERIFY(s.backends.count(mon_->backend_pid()) == 0);

            QVERIFY(a.unlock(key));
            QVERIFY2(!find_key(poll(), key), "a released lock still shows");
        });
    }

    void shared_lock_with_two_holders() {
        guarded([&] {
            const std::int64_t key = fresh_key();
            RawConn a(dsn_), b(dsn_);
            QVERIFY(a.try_lock_shared(key));
            QVERIFY(b.try_lock_shared(key));
            const Snapshot s = poll();
            const LockEntry* e = find_key(s, key);
            QVERIFY(e);
            QCOMPARE(holder_pids(*e), sorted({a.pid(), b.pid()}));  // sorted by pid
            for (const auto& h : e->holders) QVERIFY(h.shared);
            QVERIFY(e->waiters.empty());
            QVERIFY(a.unlock_shared(key));
            QVERIFY(b.unlock_shared(key));
        });
    }

    // Each waiter's blockers as the poll reports them and as the server's pg_blocking_pids(),
    // asked while nothing moves, says them: hard blocks (a conflicting holder) and soft ones (a
    // conflicting request ahead in the queue). The reference for any poll that works them out
    // another way (see docs/performance.md, what watching costs the watched server).
    void blockers_match_pg_blocking_pids() {
        guarded([&] {
            const std::int64_t key = fresh_key();
            RawConn holder(dsn_), excl1(dsn_), excl2(dsn_), shared1(dsn_), observer(dsn_);
            QVERIFY(holder.try_lock_shared(key));
            // In this order: an exclusive request waits for the shared holder; a second exclusive
            // one for both; a shared one, which the holder alone would not block, queues behind
            // the two exclusive requests.
            std::vector<RawConn*> queue{&excl1, &excl2, &shared1};
            std::size_t n = 0;  // requests sent so far
            for (RawConn* c : queue) {
                const bool shared = c == &shared1;
                send(*c, std::string("SELECT pg_advisory_lock") + (shared ? "_shared(" : "(") + k(key) + ")");
                ++n;
                (void)poll_until([&](const Snapshot& s) {  // queue them one at a time: a known order
                    const LockEntry* e = find_key(s, key);
                    if (!e || e->waiters.size() != n) return false;
                    for (const auto& w : e->waiters) if (!w.wait_start) return false;
                    return true;
                });
            }
            const Snapshot s = poll();
            const LockEntry* e = find_key(s, key);
            QVERIFY(e);
            QCOMPARE(e->waiters.size(), std::size_t{3});
            for (const auto& w : e->waiters) {
                const std::string server = observer.scalar("SELECT array_to_string(ARRAY(SELECT unnest(pg_blocking_pids(" +
                                                           std::to_string(w.pid) + ")) ORDER BY 1), ',')");
                std::string ours;
                for (int pid : w.blocked_by) ours += (ours.empty() ? "" : ",") + std::to_string(pid);
                QCOMPARE(pgt::qba(ours), pgt::qba(server));
            }
            const auto blockers_of = [&](int pid) {
                for (const auto& w : e->waiters) if (w.pid == pid) return w.blocked_by;
                return std::vector<int>{-1};
            };
            QCOMPARE(blockers_of(excl1.pid()), std::vector<int>{holder.pid()});
            QCOMPARE(blockers_of(excl2.pid()), sorted({holder.pid(), excl1.pid()}));
            QCOMPARE(blockers_of(shared1.pid()), sorted({excl1.pid(), excl2.pid()}));

            QVERIFY(holder.unlock_shared(key));
            QVERIFY(finish(excl1));
            QVERIFY(excl1.unlock(key));
            QVERIFY(finish(excl2));
            QVERIFY(excl2.unlock(key));
            QVERIFY(finish(shared1));
            QVERIFY(shared1.unlock_shared(key));
        });
    }

    void waiter_chain_of_three_sessions() {
        guarded([&] {
            const std::int64_t k1 = fresh_key(), k2 = fresh_key();
            RawConn a(dsn_), b(dsn_), c(dsn_);
            a.lock(k1);
            b.lock(k2);
            send(b, "SELECT pg_advisory_lock(" + k(k1) + ")");  // B holds k2, waits for k1
            send(c, "SELECT pg_advisory_lock(" + k(k2) + ")");  // C waits for k2
            const Snapshot s = poll_until([&](const Snapshot& s) {
                const LockEntry* e1 = find_key(s, k1);
                const LockEntry* e2 = find_key(s, k2);
                // waitstart may be NULL for a moment after the wait began (PostgreSQL's docs).
                return e1 && e2 && e1->waiters.size() == 1 && e2->waiters.size() == 1 &&
                       e1->waiters[0].wait_start && e2->waiters[0].wait_start;
            });
            const LockEntry* e1 = find_key(s, k1);
            const LockEntry* e2 = find_key(s, k2);
            QVERIFY(e1 && e2);
            QCOMPARE(holder_pids(*e1), std::vector<int>{a.pid()});
            QCOMPARE(holder_pids(*e2), std::vector<int>{b.pid()});
            QCOMPARE(e1->waiters.size(), std::size_t(1));
            QCOMPARE(e2->waiters.size(), std::size_t(1));
            QCOMPARE(e1->waiters[0].pid, b.pid());
            QCOMPARE(e1->waiters[0].blocked_by, std::vector<int>{a.pid()});
            QCOMPARE(e2->waiters[0].pid, c.pid());
            QCOMPARE(e2->waiters[0].blocked_by, std::vector<int>{b.pid()});
            QVERIFY(e1->waiters[0].wait_start.has_value());  // PostgreSQL 14+
            QVERIFY(*e1->waiters[0].wait_start <= s.server_now);
            QVERIFY(!e1->waiters[0].shared);
            // B is both a holder and a waiter; its backend row says it waits for an advisory lock.
            const auto& bb = s.backends.at(b.pid());
            QCOMPARE(bb.wait_event_type, std::string("Lock"));
            QCOMPARE(bb.wait_event, std::string("advisory"));
            QCOMPARE(bb.state, std::string("active"));
            QVERIFY(s.backends.count(c.pid()) == 1);

            // Unwind: A lets go, B gets k1 and lets both go, C gets k2.
            QVERIFY(a.unlock(k1));
            QVERIFY(finish(b));
            QVERIFY(b.unlock(k1));
            QVERIFY(b.unlock(k2));
            QVERIFY(finish(c));
            QVERIFY(c.unlock(k2));
            const Snapshot after = poll();
            QVERIFY(!find_key(after, k1) && !find_key(after, k2));
        });
    }

    void xact_lock_holder_is_idle_in_transaction() {
        guarded([&] {
            const std::int64_t key = fresh_key();
            RawConn a(dsn_);
            a.query("BEGIN");
            a.query("SELECT pg_advisory_xact_lock($1::bigint)", {k(key)});
            const Snapshot s = poll();
            const LockEntry* e = find_key(s, key);
            QVERIFY(e);
            QCOMPARE(holder_pids(*e), std::vector<int>{a.pid()});
            const auto& b = s.backends.at(a.pid());
            QCOMPARE(b.state, std::string("idle in transaction"));
            QVERIFY(b.xact_start.has_value());
            a.query("COMMIT");
            QVERIFY2(!find_key(poll(), key), "the commit did not end the transaction-level lock");
        });
    }

    void int4_pair_lock_is_not_a_bigint_key() {
        guarded([&] {
            // A negative first half checks the int4 <- oid conversion.
            const auto first = -static_cast<std::int32_t>(QRandomGenerator::global()->bounded(1, 1 << 30));
            const auto second = static_cast<std::int32_t>(QRandomGenerator::global()->bounded(1, 1 << 30));
            const LockTag tag{static_cast<std::uint32_t>(first), static_cast<std::uint32_t>(second)};
            const std::int64_t same_bits = pglock::key_of(tag);  // the bigint with the same classid/objid
            RawConn a(dsn_), b(dsn_);
            a.query("SELECT pg_advisory_lock($1::int4, $2::int4)", {std::to_string(first), std::to_string(second)});
            b.lock(same_bits);  // a different lock: objsubid 1, not 2

            const Snapshot s = poll();
            const LockEntry* pair = find_lock(s, KeyForm::int_pair, tag);
            QVERIFY2(pair, "the int4-pair lock is missing");
            QCOMPARE(pair->form, KeyForm::int_pair);
            QCOMPARE(pair->pair_first, first);
            QCOMPARE(pair->pair_second, second);
            QCOMPARE(holder_pids(*pair), std::vector<int>{a.pid()});
            const LockEntry* big = find_key(s, same_bits);
            QVERIFY2(big, "the bigint lock with the same classid/objid is missing");
            QVERIFY(big != pair);
            QCOMPARE(holder_pids(*big), std::vector<int>{b.pid()});  // not merged with the pair's holder
            QVERIFY(!(pglock::monitor::id_of(*big) == pglock::monitor::id_of(*pair)));
            // Bigint locks come first in the snapshot, int pairs after.
            QVERIFY(big < pair);

            QCOMPARE(a.scalar("SELECT pg_advisory_unlock($1::int4, $2::int4)",
                              {std::to_string(first), std::to_string(second)}),
                     std::string("t"));
            QVERIFY(b.unlock(same_bits));
        });
    }

    void negative_and_positive_keys_round_trip() {
        guarded([&] {
            // Names whose keys are negative and positive, plus the extremes.
            std::optional<std::int64_t> neg, pos;
            for (int i = 0; !(neg && pos); ++i) {
                const std::int64_t key = pglock::key_of(pgt::unique_name(("sign" + std::to_string(i)).c_str()));
                (key < 0 ? neg : pos) = key;
            }
            const std::vector<std::int64_t> keys = {*neg, *pos, std::numeric_limits<std::int64_t>::min(),
                                                    std::numeric_limits<std::int64_t>::max(), -1};
            RawConn a(dsn_);
            for (auto key : keys) QVERIFY2(a.try_lock(key), ("key " + k(key) + " is held elsewhere").c_str());
            const Snapshot s = poll();
            for (auto key : keys) {
                const LockEntry* e = find_key(s, key);
                QVERIFY2(e, ("key " + k(key) + " is missing").c_str());
                QCOMPARE(e->key, key);
                QCOMPARE(holder_pids(*e), std::vector<int>{a.pid()});
            }
            // Ordered by the signed key, negative ones first.
            std::vector<std::int64_t> order;
            for (const auto& e : s.locks)
                if (e.form == KeyForm::bigint) order.push_back(e.key);
            QVERIFY(std::is_sorted(order.begin(), order.end()));
            for (auto key : keys) QVERIFY(a.unlock(key));
        });
    }

    void state_change_between_polls() {
        guarded([&] {
            const std::int64_t key = fresh_key();
            RawConn a(dsn_);
            a.lock(key);
            send(a, "SELECT pg_sleep(60)");
            const Snapshot busy = poll_until([&](const Snapshot& s) {
                auto it = s.backends.find(a.pid());
                return find_key(s, key) && it != s.backends.end() && it->second.state == "active";
            });
            QCOMPARE(busy.backends.at(a.pid()).state, std::string("active"));
            QVERIFY(busy.backends.at(a.pid()).query.find("pg_sleep") != std::string::npos);
            cancel(a);
            QVERIFY(!finish(a));  // canceled
            a.query("BEGIN");
            const Snapshot in_tx = poll();
            QVERIFY(find_key(in_tx, key));
            QCOMPARE(in_tx.backends.at(a.pid()).state, std::string("idle in transaction"));
            QVERIFY(in_tx.backends.at(a.pid()).state_change >= busy.backends.at(a.pid()).state_change);
            a.query("ROLLBACK");  // a session lock survives the rollback
            const Snapshot idle = poll();
            QVERIFY(find_key(idle, key));
            QCOMPARE(idle.backends.at(a.pid()).state, std::string("idle"));
            QVERIFY(a.unlock(key));
        });
    }

    void locks_of_another_database_do_not_show() {
        if (dsn_.rfind("postgres", 0) == 0) QSKIP("needs a keyword=value DSN to switch databases");
        guarded([&] {
            const std::string db = "pglock_monitor_" + std::to_string(QCoreApplication::applicationPid());
            RawConn admin(dsn_);
            admin.query("DROP DATABASE IF EXISTS " + db);
            admin.query("CREATE DATABASE " + db);
            const std::int64_t key = fresh_key();
            {
                RawConn other(dsn_ + " dbname=" + db);
                other.lock(key);
                RawConn here(dsn_);
                here.lock(fresh_key());  // something of ours in this database, so the poll is not empty
                const Snapshot s = poll();
                QVERIFY2(!find_key(s, key), "a lock of another database shows");
                RawConn obs(dsn_);
                QCOMPARE(obs.integer("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND pid = $1",
                                     {std::to_string(other.pid())}),
                         1LL);  // it exists, only elsewhere
            }
            QVERIFY(pgt::wait_until(
                [&] {
                    return admin.integer("SELECT count(*) FROM pg_stat_activity WHERE datname = $1", {db}) == 0;
                },
                10s));
            admin.query("DROP DATABASE " + db);
        });
    }

    // A pending or granted AccessExclusiveLock on a relation the poll reads (here pg_locks
    // itself, by LOCK TABLE) makes a prepared monitor session's poll fail at once with
    // lock_not_available, where it would queue, and every session after it with it.
    void poll_gives_up_on_a_busy_catalog_lock_instead_of_queueing() {
        guarded([&] {
            RawConn locker(dsn_);
            locker.query("BEGIN");
            locker.query("LOCK TABLE pg_catalog.pg_locks IN ACCESS EXCLUSIVE MODE");
            auto session = pglock::Session::connect(dsn_);
            pglock::monitor::prepare_session(session);
            const auto t0 = pgt::Clock::now();
            std::string outcome = "the poll returned while pg_locks was locked";
            try {
                (void)pglock::monitor::poll(session, pglock::Context::with_timeout(5s));
            } catch (const pglock::Error& e) {
                outcome = e.sqlstate() == pglock::sqlstate::lock_not_available
                              ? "" : "the poll failed otherwise: " + std::string(e.what());
            }
            const auto took = pgt::Clock::now() - t0;
            locker.query("ROLLBACK");
            QVERIFY2(outcome.empty(), outcome.c_str());
            QVERIFY2(took < 2s, "the poll waited for the lock instead of giving up after lock_timeout");
            // The session is still usable once the lock is gone.
            QVERIFY(pglock::monitor::poll(session, pglock::Context::with_timeout(5s)).server_now > 0);
        });
    }

    void poll_query_without_waitstart_before_14() {
        QVERIFY(pglock::monitor::poll_query(150000).find("waitstart") != std::string::npos);
        QVERIFY(pglock::monitor::poll_query(130000).find("waitstart") == std::string::npos);
        QVERIFY(pglock::monitor::poll_query(130000).find("pg_blocking_pids") != std::string::npos);
    }

    // ---- HoldTracker ------------------------------------------------------------------------

    void tracker_records_start_and_end_from_live_polls() {
        guarded([&] {
            const std::int64_t key = fresh_key();
            RawConn a(dsn_);
            a.query("SET application_name = 'pglock-test-tracker'");
            a.lock(key);
            HoldTracker tracker;
            const Snapshot s1 = poll();
            QCOMPARE(tracker.update(s1), std::size_t(0));
            const LockEntry* e = find_key(s1, key);
            QVERIFY(e);
            const LockId id = pglock::monitor::id_of(*e);
            QCOMPARE(tracker.held_since(id, a.pid()), std::optional<double>(s1.server_now));

            const Snapshot s2 = poll_until([&](const Snapshot& s) { return s.server_now > s1.server_now; });
            QVERIFY(s2.server_now > s1.server_now);
            tracker.update(s2);
            QCOMPARE(tracker.held_since(id, a.pid()), std::optional<double>(s1.server_now));  // since first seen

            QVERIFY(a.unlock(key));
            const Snapshot s3 = poll();
            QVERIFY(tracker.update(s3) >= 1);
            QVERIFY(!tracker.held_since(id, a.pid()));
            const std::vector<Hold> done = tracker.take_finished();
            const auto it = std::find_if(done.begin(), done.end(), [&](const Hold& h) { return h.key == key; });
            QVERIFY2(it != done.end(), "the released hold did not finish");
            QCOMPARE(it->pid, a.pid());
            QCOMPARE(it->start, s1.server_now);
            QCOMPARE(it->end, std::optional<double>(s3.server_now));
            QVERIFY(it->duration() > 0);
            QCOMPARE(it->application_name, std::string("pglock-test-tracker"));
            QVERIFY(!it->shared);
            QVERIFY(tracker.take_finished().empty());  // taken
        });
    }

    void tracker_keeps_at_most_max_finished() {
        HoldTracker tracker(3);
        for (int i = 0; i < 10; ++i) {
            QCOMPARE(tracker.update(synthetic(i, {{1000 + i, 10 + i}})), std::size_t(i == 0 ? 0 : 1));
        }
        QCOMPARE(tracker.update(synthetic(10, {})), std::size_t(1));
        QCOMPARE(tracker.open().size(), std::size_t(0));
        const auto done = tracker.take_finished();
        QCOMPARE(done.size(), std::size_t(3));  // the newest three, oldest first
        QCOMPARE(done[0].key, std::int64_t(1007));
        QCOMPARE(done[1].key, std::int64_t(1008));
        QCOMPARE(done[2].key, std::int64_t(1009));
        QCOMPARE(done[2].start, 9.0);
        QCOMPARE(done[2].end, std::optional<double>(10.0));
        QCOMPARE(done[2].application_name, std::string("app-19"));
    }

    void tracker_same_pid_on_two_locks_and_unchanged_polls() {
        HoldTracker tracker;
        QCOMPARE(tracker.update(synthetic(1, {{1, 7}, {2, 7}})), std::size_t(0));
        QCOMPARE(tracker.open().size(), std::size_t(2));
        QCOMPARE(tracker.update(synthetic(2, {{1, 7}, {2, 7}})), std::size_t(0));
        QCOMPARE(tracker.update(synthetic(3, {{2, 7}})), std::size_t(1));
        const auto done = tracker.take_finished();
        QCOMPARE(done.size(), std::size_t(1));
        QCOMPARE(done[0].key, std::int64_t(1));
        QCOMPARE(done[0].start, 1.0);
        QCOMPARE(done[0].end, std::optional<double>(3.0));
        // A hold that ends and comes back is a new hold, starting at its return.
        tracker.update(synthetic(4, {{1, 7}, {2, 7}}));
        QCOMPARE(tracker.held_since({KeyForm::bigint, pglock::tag_of(1)}, 7), std::optional<double>(4.0));
        QCOMPARE(tracker.held_since({KeyForm::bigint, pglock::tag_of(2)}, 7), std::optional<double>(1.0));
    }

    void tracker_close_all_ends_every_open_hold() {
        HoldTracker tracker;
        tracker.update(synthetic(5, {{1, 7}, {2, 8}}));
        tracker.close_all(100);
        QVERIFY(tracker.open().empty());
        const auto done = tracker.take_finished();
        QCOMPARE(done.size(), std::size_t(2));
        for (const auto& h : done) {
            QCOMPARE(h.start, 5.0);
            QCOMPARE(h.end, std::optional<double>(100.0));
            QCOMPARE(h.duration(), 95.0);
        }
        // After a reconnect the same holds start afresh.
        QCOMPARE(tracker.update(synthetic(101, {{1, 7}})), std::size_t(0));
        QCOMPARE(tracker.held_since({KeyForm::bigint, pglock::tag_of(1)}, 7), std::optional<double>(101.0));
    }

    // The monitor's own session was lost after the poll at t=5 and is back at t=8: the same
    // session (pid and backend_start) in the same mode holds on as one hold, the gap counted as
    // unseen; a pid reused by another session, a changed mode, or a gap past max_gap ends the
    // hold at 5, the last time it was seen.
    void tracker_suspend_bridges_only_the_same_session_and_mode() {
        auto snap = [](double now, bool shared7, double start9) {
            Snapshot s = synthetic(now, {{1, 7}, {2, 8}, {3, 9}});
            s.locks[0].holders[0].shared = shared7;
            s.backends[7].backend_start = 1.0;
            s.backends[8].backend_start = 1.0;
            s.backends[9].backend_start = start9;
            return s;
        };
        HoldTracker tracker;
        tracker.update(snap(4, false, 1.0));
        tracker.update(snap(5, false, 1.0));
        tracker.suspend(5, 30);
        tracker.suspend(6, 30);  // a second failed attempt keeps the first last_seen
        Snapshot back = snap(8, true, 2.0);  // 7 now shared, 9 another session on a reused pid
        QCOMPARE(tracker.update(back), std::size_t(2));
        auto done = tracker.take_finished();
        QCOMPARE(done.size(), std::size_t(2));
        for (const auto& h : done) {
            QVERIFY(h.pid == 7 || h.pid == 9);
            QCOMPARE(h.start, 4.0);
            QCOMPARE(h.end, std::optional<double>(5.0));
        }
        QCOMPARE(tracker.held_since({KeyForm::bigint, pglock::tag_of(2)}, 8), std::optional<double>(4.0));
        QCOMPARE(tracker.held_since({KeyForm::bigint, pglock::tag_of(1)}, 7), std::optional<double>(8.0));
        tracker.update(synthetic(9, {}));
        done = tracker.take_finished();
        const auto it = std::find_if(done.begin(), done.end(), [](const Hold& h) { return h.pid == 8; });
        QVERIFY(it != done.end());
        QCOMPARE(it->start, 4.0);
        QCOMPARE(it->unseen, 3.0);

        HoldTracker late;
        late.update(snap(4, false, 1.0));
        late.suspend(4, 30);
        QCOMPARE(late.update(snap(40, false, 1.0)), std::size_t(3));  // 36 s > max_gap: all ended at 4
        for (const auto& h : late.take_finished()) QCOMPARE(h.end, std::optional<double>(4.0));
    }

    // ---- WaitTracker ------------------------------------------------------------------------

    void wait_tracker_records_a_live_wait_with_its_blocker() {
        guarded([&] {
            const std::int64_t key = fresh_key();
            RawConn a(dsn_), b(dsn_);
            b.query("SET application_name = 'pglock-test-waiter'");
            a.lock(key);
            send(b, "SELECT pg_advisory_lock(" + k(key) + ")");
            WaitTracker tracker;
            const Snapshot s1 = poll_until([&](const Snapshot& s) {
                const LockEntry* e = find_key(s, key);
                return e && e->waiters.size() == 1 && e->waiters[0].wait_start;
            });
            QCOMPARE(tracker.update(only_key(s1, key)), std::size_t(0));
            const LockEntry* e = find_key(s1, key);
            QVERIFY(e && e->waiters.size() == 1);
            const auto open_key = std::make_pair(pglock::monitor::id_of(*e), b.pid());
            QCOMPARE(tracker.open().count(open_key), std::size_t(1));
            const double server_start = *e->waiters[0].wait_start;

            QVERIFY(a.unlock(key));  // B is granted: its wait ends, its hold begins
            QVERIFY(finish(b));
            const Snapshot s2 = poll_until([&](const Snapshot& s) {
                const LockEntry* e2 = find_key(s, key);
                return e2 && e2->waiters.empty();
            });
            QCOMPARE(tracker.update(only_key(s2, key)), std::size_t(1));
            QVERIFY(tracker.open().empty());
            const std::vector<Wait> done = tracker.take_finished();
            QCOMPARE(done.size(), std::size_t(1));
            const Wait& w = done[0];
            QCOMPARE(w.key, key);
            QCOMPARE(w.pid, b.pid());
            QVERIFY(!w.shared);
            QVERIFY(w.start_from_server);
            QCOMPARE(w.start, server_start);  // the server's waitstart, not the first poll's time
            QCOMPARE(w.end, std::optional<double>(s2.server_now));
            QVERIFY(w.duration() > 0);
            QCOMPARE(w.blocked_by, std::vector<int>{a.pid()});
            QCOMPARE(w.application_name, std::string("pglock-test-waiter"));
            QVERIFY(!w.usename.empty());
            QVERIFY(b.unlock(key));
        });
    }

    void wait_tracker_unions_blockers_and_takes_late_waitstart() {
        WaitTracker tracker;
        // waitstart is NULL in the first snapshot; the poll time stands in until the server's shows.
        QCOMPARE(tracker.update(waiting(10, 1, 7, std::nullopt, {3})), std::size_t(0));
        QCOMPARE(tracker.open().begin()->second.start, 10.0);
        QVERIFY(!tracker.open().begin()->second.start_from_server);
        QCOMPARE(tracker.update(waiting(11, 1, 7, 9.5, {5, 3})), std::size_t(0));
        QCOMPARE(tracker.update(waiting(12, 1, 7, 9.5, {4})), std::size_t(0));
        QCOMPARE(tracker.update(synthetic(13, {{1, 7}})), std::size_t(1));  // granted
        const auto done = tracker.take_finished();
        QCOMPARE(done.size(), std::size_t(1));
        QCOMPARE(done[0].start, 9.5);
        QVERIFY(done[0].start_from_server);
        QCOMPARE(done[0].end, std::optional<double>(13.0));
        QCOMPARE(done[0].duration(), 3.5);
        QCOMPARE(done[0].blocked_by, (std::vector<int>{3, 4, 5}));  // every blocker seen, sorted, once
        QCOMPARE(done[0].application_name, std::string("app-7"));
        QCOMPARE(done[0].usename, std::string("user-7"));
        QVERIFY(tracker.take_finished().empty());
    }

    void wait_tracker_splits_a_wait_restarted_between_polls() {
        WaitTracker tracker;
        tracker.update(waiting(10, 1, 7, 9.0, {3}));
        // Same (lock, pid) still waiting, but with a later waitstart: granted, released and
        // waiting again between the polls. Two waits, not one long one.
        QCOMPARE(tracker.update(waiting(20, 1, 7, 18.0, {4})), std::size_t(1));
        QCOMPARE(tracker.open().size(), std::size_t(1));
        QCOMPARE(tracker.open().begin()->second.start, 18.0);
        QCOMPARE(tracker.open().begin()->second.blocked_by, std::vector<int>{4});
        const auto done = tracker.take_finished();
        QCOMPARE(done.size(), std::size_t(1));
        QCOMPARE(done[0].start, 9.0);
        QCOMPARE(done[0].end, std::optional<double>(18.0));
        QCOMPARE(done[0].blocked_by, std::vector<int>{3});
    }

    void wait_tracker_two_waiters_bounded_and_close_all() {
        WaitTracker tracker(2);
        Snapshot s = waiting(1, 1, 7, std::nullopt, {6});
        add_waiter(s, 1, 8, std::nullopt, {6});
        add_waiter(s, 2, 9, std::nullopt, {6});
        tracker.update(s);
        QCOMPARE(tracker.open().size(), std::size_t(3));
        tracker.close_all(5);
        QVERIFY(tracker.open().empty());
        const auto done = tracker.take_finished();
        QCOMPARE(done.size(), std::size_t(2));  // only the newest max_finished are kept
        for (const auto& w : done) {
            QCOMPARE(w.start, 1.0);
            QCOMPARE(w.end, std::optional<double>(5.0));
        }
        // After a reconnect the same wait starts afresh.
        QCOMPARE(tracker.update(waiting(6, 1, 7, std::nullopt, {6})), std::size_t(0));
        QCOMPARE(tracker.open().begin()->second.start, 6.0);
    }

    void wait_tracker_session_gone_ends_the_wait() {
        WaitTracker tracker;
        tracker.update(waiting(1, 1, 7, 0.5, {6}));
        QCOMPARE(tracker.update(synthetic(2, {{1, 6}})), std::size_t(1));  // 7 is gone, 6 still holds
        const auto done = tracker.take_finished();
        QCOMPARE(done.size(), std::size_t(1));
        QCOMPARE(done[0].pid, 7);
        QCOMPARE(done[0].end, std::optional<double>(2.0));
    }
};

QTEST_GUILESS_MAIN(TestMonitor)
#include "test_monitor.moc"
