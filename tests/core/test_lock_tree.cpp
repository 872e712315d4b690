// The lock tree against a real server: a 5-deep chain across advisory, relation and transaction
// locks found to its root, shared/exclusive conflicts and a queue of waiters counted the way the
// lock manager grants (a waiter is blocked by conflicting granted holders, never by another
// waiter), and a deadlock in progress reported once without looping. Sessions are plain libpq
// connections (pgt::RawConn); the monitor has its own pglock::Session.
#include <QtTest>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "core_test_util.hpp"
#include "pglock/lock_tree.hpp"
#include "pglock/monitor.hpp"

using namespace std::chrono_literals;
using pglock::monitor::LockEntry;
using pglock::monitor::OtherWait;
using pglock::monitor::RootBlocker;
using pglock::monitor::Snapshot;
using pglock::monitor::TreeNode;
using pgt::guarded;
using pgt::RawConn;

namespace {

// A statement sent without waiting for it (a lock wait). Destroyed still running, it is canceled
// and drained, so a failing test leaves no session waiting on the server.
class Pending {
public:
    Pending(RawConn& conn, const std::string& sql) : conn_(conn) {
        if (!PQsendQuery(conn_.get(), sql.c_str())) throw std::runtime_error("PQsendQuery: " + conn_.error());
    }
    Pending(const Pending&) = delete;
    Pending& operator=(const Pending&) = delete;
    ~Pending() {
        if (done_) return;
        PGcancel* c = PQgetCancel(conn_.get());
        char err[256];
        if (c) PQcancel(c, err, sizeof err);
        PQfreeCancel(c);
        finish();
    }
    // Waits for the statement's end; true when it succeeded.
    bool finish() {
        bool ok = true;
        while (PGresult* r = PQgetResult(conn_.get())) {
            const auto st = PQresultStatus(r);
            if (st != PGRES_TUPLES_OK && st != PGRES_COMMAND_OK) ok = false;
            PQclear(r);
        }
        done_ = true;
        return ok;
    }
    void cancel() {
        PGcancel* c = PQgetCancel(conn_.get());
        char err[256];
        if (c) PQcancel(c, err, sizeof err);
        PQfreeCancel(c);
    }

private:
    RawConn& conn_;
    bool done_ = false;
};

std::string k(std::int64_t key) { return std::to_string(key); }
std::int64_t fresh_key() { return pglock::key_of(pgt::unique_name()); }

const RootBlocker* root_at(const std::vector<RootBlocker>& roots, int pid) {
    for (const auto& r : roots)
        if (r.pid == pid) return &r;
    return nullptr;
}

// The tree as text with the test's names for pids: "R{A<lock>{B<lock>}}", children in order;
// "^" marks a repeated node, "~" a queued one.
std::string shape(const TreeNode& n, const std::map<int, std::string>& names) {
    const auto it = names.find(n.pid);
    std::string out = (it == names.end() ? std::to_string(n.pid) : it->second) + "<" + n.lock + ">";
    if (n.queued) out += "~";
    if (n.repeated) out += "^";
    if (!n.children.empty()) {
        out += "{";
        for (std::size_t i = 0; i < n.children.size(); ++i) out += (i ? "," : "") + shape(n.children[i], names);
        out += "}";
    }
    return out;
}
std::string shape(const RootBlocker& r, const std::map<int, std::string>& names) {
    std::string out = names.count(r.pid) ? names.at(r.pid) : std::to_string(r.pid);
    out += "{";
    for (std::size_t i = 0; i < r.children.size(); ++i) out += (i ? "," : "") + shape(r.children[i], names);
    return out + "}";
}

// Names the test's keys; every other key by the default.
pglock::monitor::EdgeNamer namer(std::map<std::int64_t, std::string> keys) {
    return [keys = std::move(keys)](const LockEntry& e) {
        const auto it = keys.find(e.key);
        return it != keys.end() ? it->second : pglock::monitor::default_lock_name(e);
    };
}

std::vector<int> sorted(std::vector<int> v) {
    std::sort(v.begin(), v.end());
    return v;
}

// Is `pid` waiting on a lock (any type) by pg_stat_activity?
bool waiting(RawConn& obs, int pid) {
    return obs.scalar("SELECT coalesce(wait_event_type, '') FROM pg_stat_activity WHERE pid = $1",
                      {std::to_string(pid)}) == "Lock";
}
void wait_waiting(RawConn& obs, int pid) {
    if (!pgt::wait_until([&] { return waiting(obs, pid); }, 10s))
        throw std::runtime_error("session " + std::to_string(pid) + " never started waiting");
}

}  // namespace

class TestLockTree : public QObject {
    Q_OBJECT

    std::string dsn_;
    std::optional<pglock::Session> mon_;

    Snapshot poll() { return pglock::monitor::poll(*mon_); }
    Snapshot poll_until(const std::function<bool(const Snapshot&)>& pred) {
        const auto end = pgt::Clock::now() + 10s;
        for (;;) {
            Snapshot s = poll();
            if (pred(s) || pgt::Clock::now() >= end) return s;
            std::this_thread::sleep_for(20ms);
        }
    }

private slots:
    void initTestCase() {
        PGT_REQUIRE_DSN(dsn_);
        guarded([&] { mon_.emplace(pglock::Session::connect(dsn_)); });
    }
    void cleanupTestCase() { mon_.reset(); }

    void describes_other_lock_types_for_people() {
        OtherWait w;
        w.locktype = "tuple";
        w.relation = "public.invoices";
        w.page = 0;
        w.tuple = 3;
        QCOMPARE(pglock::monitor::describe_other_wait(w), std::string("row (0,3) of public.invoices"));
        w = {};
        w.locktype = "transactionid";
        w.transactionid = "1234";
        QCOMPARE(pglock::monitor::describe_other_wait(w), std::string("transaction 1234"));
        w = {};
        w.locktype = "relation";
        w.relation = "public.jobs";
        QCOMPARE(pglock::monitor::describe_other_wait(w), std::string("relation public.jobs"));
    }

    // D waits for advisory k3, held by C, which waits for a relation B has locked; B waits for
    // advisory k1, held by A, which waits for the row R updated (R's transaction). R holds no
    // advisory lock and waits on nothing: it is the root, four sessions deep.
    void five_deep_mixed_chain_is_followed_to_its_root() {
        guarded([&] {
            const std::string t = "lt_" + std::to_string(std::uint64_t(fresh_key()) % 1000000000);
            const std::int64_t k1 = fresh_key(), k3 = fresh_key();
            RawConn obs(dsn_);
            obs.query("CREATE TABLE " + t + " (id int PRIMARY KEY, v int)");
            obs.query("INSERT INTO " + t + " VALUES (1, 0)");
            obs.query("CREATE TABLE " + t + "_b (id int)");
            {
                RawConn r(dsn_), a(dsn_), b(dsn_), c(dsn_), d(dsn_);
                r.query("BEGIN");
                r.query("UPDATE " + t + " SET v = 1 WHERE id = 1");
                const std::string xid = r.scalar("SELECT pg_current_xact_id()::xid::text");
                a.lock(k1);
                a.query("BEGIN");
                Pending a_wait(a, "UPDATE " + t + " SET v = 2 WHERE id = 1");
                wait_waiting(obs, a.pid());
                b.query("BEGIN");
                b.query("LOCK TABLE " + t + "_b IN ACCESS EXCLUSIVE MODE");
                Pending b_wait(b, "SELECT pg_advisory_lock(" + k(k1) + ")");
                wait_waiting(obs, b.pid());
                c.lock(k3);
                Pending c_wait(c, "SELECT count(*) FROM " + t + "_b");
                wait_waiting(obs, c.pid());
                Pending d_wait(d, "SELECT pg_advisory_lock(" + k(k3) + ")");
                wait_waiting(obs, d.pid());

                const auto names = namer({{k1, "billing:k1"}, {k3, "billing:k3"}});
                const Snapshot s = poll_until([&](const Snapshot& s) {
                    const auto roots = pglock::monitor::lock_tree(s, names);
                    const RootBlocker* root = root_at(roots, r.pid());
                    return root && root->blocked_total == 4;
                });
                const auto roots = pglock::monitor::lock_tree(s, names);
                const RootBlocker* root = root_at(roots, r.pid());
                QVERIFY2(root, "the session holding the row is not a root blocker");
                const std::map<int, std::string> who{
                    {r.pid(), "R"}, {a.pid(), "A"}, {b.pid(), "B"}, {c.pid(), "C"}, {d.pid(), "D"}};
                QCOMPARE(shape(*root, who), "R{A<transaction " + xid + ">{B<billing:k1>{C<relation public." + t +
                                                "_b>{D<billing:k3>}}}}");
                QVERIFY(!root->cycle);
                QCOMPARE(root->blocked_directly, std::size_t(1));
                QCOMPARE(root->blocked_total, std::size_t(4));
                QCOMPARE(root->via, "transaction " + xid);
                QVERIFY(root->oldest_wait_start.has_value());
                // Nobody below the root is reported as a root of its own.
                for (int pid : {a.pid(), b.pid(), c.pid(), d.pid()}) QVERIFY(!root_at(roots, pid));
                // The root holds no advisory lock: it came from the chain, with its session's facts.
                QVERIFY(s.backends.contains(r.pid()));
                QCOMPARE(s.backends.at(r.pid()).state, std::string("idle in transaction"));

                // Unwind from the root: each statement goes through once the one above lets go.
                r.query("ROLLBACK");
                QVERIFY(a_wait.finish());
                a.query("ROLLBACK");
                QVERIFY(a.unlock(k1));
                QVERIFY(b_wait.finish());
                b.query("ROLLBACK");
                QVERIFY(c_wait.finish());
                QVERIFY(c.unlock(k3));
                QVERIFY(d_wait.finish());
                // No chain left: the next poll needs no second statement and finds no other wait.
                const Snapshot after = poll();
                for (const auto& o : after.other_waits)
                    QVERIFY(o.pid != a.pid() && o.pid != c.pid());
            }
            obs.query("DROP TABLE " + t + ", " + t + "_b");
        });
    }

    // Two shared holders; an exclusive waiter, then a shared one. The server names the exclusive
    // waiter as the shared waiter's blocker (a soft block: it is ahead in the queue); the tree
    // counts both under the holders, and the shared one as queued, never under the other waiter.
    void shared_and_exclusive_conflicts_and_soft_blocks() {
        guarded([&] {
            const std::int64_t key = fresh_key();
            RawConn obs(dsn_), h1(dsn_), h2(dsn_), w1(dsn_), w2(dsn_);
            QVERIFY(h1.try_lock_shared(key));
            QVERIFY(h2.try_lock_shared(key));
            Pending x(w1, "SELECT pg_advisory_lock(" + k(key) + ")");
            wait_waiting(obs, w1.pid());
            Pending s(w2, "SELECT pg_advisory_lock_shared(" + k(key) + ")");
            wait_waiting(obs, w2.pid());

            const Snapshot snap = poll();
            const auto server_says = [&](int pid) {
                for (const auto& e : snap.locks)
                    for (const auto& w : e.waiters)
                        if (w.pid == pid) return sorted(w.blocked_by);
                return std::vector<int>{-1};
            };
            QCOMPARE(server_says(w2.pid()), std::vector<int>{w1.pid()});  // the soft block
            QCOMPARE(pglock::monitor::blockers_of(snap, w1.pid()), sorted({h1.pid(), h2.pid()}));
            QCOMPARE(pglock::monitor::blockers_of(snap, w2.pid()), sorted({h1.pid(), h2.pid()}));

            const auto roots = pglock::monitor::lock_tree(snap, namer({{key, "K"}}));
            const std::map<int, std::string> who{{h1.pid(), "H1"}, {h2.pid(), "H2"}, {w1.pid(), "W1"}, {w2.pid(), "W2"}};
            for (int h : {h1.pid(), h2.pid()}) {
                const RootBlocker* root = root_at(roots, h);
                QVERIFY(root);
                QCOMPARE(shape(*root, who), who.at(h) + "{W1<K>,W2<K>~}");
                QCOMPARE(root->blocked_total, std::size_t(2));
            }
            QVERIFY(!root_at(roots, w1.pid()));

            // An exclusive holder blocks a shared waiter: mode matters both ways.
            const std::int64_t key2 = fresh_key();
            RawConn x2(dsn_), s2(dsn_);
            QVERIFY(x2.try_lock(key2));
            Pending sw(s2, "SELECT pg_advisory_lock_shared(" + k(key2) + ")");
            wait_waiting(obs, s2.pid());
            QCOMPARE(pglock::monitor::blockers_of(poll(), s2.pid()), std::vector<int>{x2.pid()});
            QVERIFY(x2.unlock(key2));
            QVERIFY(sw.finish());

            QVERIFY(h1.unlock_shared(key));
            QVERIFY(h2.unlock_shared(key));
            QVERIFY(x.finish());
            QVERIFY(w1.unlock(key));
            QVERIFY(s.finish());
        });
    }

    // One exclusive holder and three exclusive waiters queued one after another: all three are
    // blocked directly by the holder, none by the waiters ahead of it.
    void a_queue_of_waiters_hangs_off_the_holder() {
        guarded([&] {
            const std::int64_t key = fresh_key();
            RawConn obs(dsn_), h(dsn_), w1(dsn_), w2(dsn_), w3(dsn_);
            QVERIFY(h.try_lock(key));
            Pending p1(w1, "SELECT pg_advisory_lock(" + k(key) + ")");
            wait_waiting(obs, w1.pid());
            Pending p2(w2, "SELECT pg_advisory_lock(" + k(key) + ")");
            wait_waiting(obs, w2.pid());
            Pending p3(w3, "SELECT pg_advisory_lock(" + k(key) + ")");
            wait_waiting(obs, w3.pid());

            const Snapshot snap = poll();
            QCOMPARE(pglock::monitor::blockers_of(snap, w3.pid()), std::vector<int>{h.pid()});
            const auto roots = pglock::monitor::lock_tree(snap, namer({{key, "K"}}));
            const RootBlocker* root = root_at(roots, h.pid());
            QVERIFY(root);
            const std::map<int, std::string> who{{h.pid(), "H"}, {w1.pid(), "W1"}, {w2.pid(), "W2"}, {w3.pid(), "W3"}};
            QCOMPARE(shape(*root, who), std::string("H{W1<K>,W2<K>,W3<K>}"));  // oldest wait first
            QCOMPARE(root->blocked_directly, std::size_t(3));
            QCOMPARE(root->blocked_total, std::size_t(3));
            QCOMPARE(root->via, std::string("K"));

            QVERIFY(h.unlock(key));
            QVERIFY(p1.finish());
            QVERIFY(w1.unlock(key));
            QVERIFY(p2.finish());
            QVERIFY(w2.unlock(key));
            QVERIFY(p3.finish());
        });
    }

    // A and B each hold one key and wait for the other's, with the deadlock detector held off: the
    // cycle is one root, flagged, at its lowest pid, and the walk ends.
    void a_deadlock_in_progress_is_one_cycle_and_no_loop() {
        guarded([&] {
            const std::int64_t k1 = fresh_key(), k2 = fresh_key();
            RawConn obs(dsn_), a(dsn_), b(dsn_);
            a.query("SET deadlock_timeout = '5min'");
            b.query("SET deadlock_timeout = '5min'");
            a.lock(k1);
            b.lock(k2);
            Pending pa(a, "SELECT pg_advisory_lock(" + k(k2) + ")");
            wait_waiting(obs, a.pid());
            Pending pb(b, "SELECT pg_advisory_lock(" + k(k1) + ")");
            wait_waiting(obs, b.pid());

            const auto roots = pglock::monitor::lock_tree(poll(), namer({{k1, "K1"}, {k2, "K2"}}));
            const int low = std::min(a.pid(), b.pid()), high = std::max(a.pid(), b.pid());
            const RootBlocker* root = root_at(roots, low);
            QVERIFY2(root, "the cycle is not reported");
            QVERIFY(root->cycle);
            QVERIFY(!root_at(roots, high));
            QCOMPARE(root->blocked_total, std::size_t(1));
            const std::map<int, std::string> who{{low, "L"}, {high, "H"}};
            const std::string lk = low == a.pid() ? "K2" : "K1", hk = low == a.pid() ? "K1" : "K2";
            QCOMPARE(shape(*root, who), "L{H<" + hk + ">{L<" + lk + ">^}}");

            pa.cancel();
            QVERIFY(!pa.finish());  // canceled
            QVERIFY(a.unlock(k1));
            QVERIFY(pb.finish());
        });
    }

    // A cycle of three other-type waits with a tail hanging off it, and a waiter whose blocker is
    // gone: one cycle root, one visible top, and nothing loops.
    void synthetic_cycle_with_tail() {
        Snapshot s;
        const auto wait = [&](int pid, std::vector<int> by, double start) {
            OtherWait o;
            o.pid = pid;
            o.locktype = "transactionid";
            o.transactionid = std::to_string(900 + pid);
            o.description = "transaction " + o.transactionid;
            o.blocked_by = std::move(by);
            o.wait_start = start;
            s.other_waits.push_back(o);
        };
        wait(7, {5}, 10);  // 5 -> 6 -> 7 -> 5
        wait(5, {6}, 11);
        wait(6, {7}, 12);
        wait(8, {5}, 13);  // the tail, behind 5
        wait(9, {4}, 14);
        wait(4, {}, 15);  // waits, but its blocker is gone by now: the top of what can be seen
        const auto roots = pglock::monitor::lock_tree(s);
        QCOMPARE(roots.size(), std::size_t(2));
        QCOMPARE(roots[0].pid, 5);
        QVERIFY(roots[0].cycle);
        QCOMPARE(roots[0].blocked_total, std::size_t(3));  // 6, 7 and the tail 8
        QCOMPARE(*roots[0].oldest_wait_start, 10.0);
        QCOMPARE(roots[1].pid, 4);
        QVERIFY(!roots[1].cycle);
        QCOMPARE(roots[1].blocked_total, std::size_t(1));
    }
};

QTEST_GUILESS_MAIN(TestLockTree)
#include "test_lock_tree.moc"
