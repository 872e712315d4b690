// The poller on its worker thread against a real server: it delivers snapshots with the locks
// that exist, drops results of a replaced connection, and recovers by itself when its session is
// terminated or the server restarts, saying "disconnected" meanwhile.
#include <QSignalSpy>
#include <QtTest>

#include <libpq-fe.h>

#include <cstdlib>

#include "pg_conn.hpp"
#include "pg_test_env.hpp"
#include "models/lock_summary.hpp"
#include "pglock/key.hpp"
#include "poller/poller.hpp"
#include "poller_wait.hpp"

using namespace std::chrono_literals;
using lockscope::PollResultPtr;
using lockscope::PollState;

namespace {

using Conn = pglock::test::PgConn;

bool holds(const PollResultPtr& r, std::int64_t key, int pid) {
    if (!r || !r->snapshot) return false;
    const auto tag = pglock::tag_of(key);
    for (const auto& lock : r->snapshot->locks) {
        if (lock.form != pglock::monitor::KeyForm::bigint || !(lock.tag == tag)) continue;
        for (const auto& h : lock.holders) {
            if (h.pid == pid) return true;
        }
    }
    return false;
}

}  // namespace

class TestPoller : public QObject {
    Q_OBJECT
    std::string dsn_;

    PollResultPtr waitFor(lockscope::Poller& poller, const std::function<bool(const PollResultPtr&)>& pred,
                          std::chrono::milliseconds timeout) {
        return pglock::test::waitForResult(this, poller, pred, timeout);
    }

private slots:
    void initTestCase() {
        auto dsn = pglock::test::test_dsn();
        QVERIFY2(dsn.has_value(), "no test server");
        dsn_ = *dsn;
    }

    void delivers_held_lock_and_recovers_after_terminate() {
        Conn holder(dsn_);
        QVERIFY(holder.ok());
        const std::int64_t key = pglock::key_of("poller.test.held");
        holder.one("SELECT pg_advisory_lock(" + std::to_string(key) + ")");
        const int pid = std::atoi(holder.one("SELECT pg_backend_pid()").c_str());

        lockscope::Poller poller;
        poller.setInterval(250ms);
        QSignalSpy states(&poller, &lockscope::Poller::stateChanged);
        poller.start(QString::fromStdString(dsn_ + " application_name=lockscope-poller-test"));
        PollResultPtr first = waitFor(poller, [&](const PollResultPtr& r) { return holds(r, key, pid); }, 10s);
        QVERIFY2(first, "no snapshot showed the held lock");
        QVERIFY(first->heldSince({pglock::monitor::KeyForm::bigint, pglock::tag_of(key)}, pid).has_value());
        QCOMPARE(poller.state(), PollState::connected);

        // Kill the poller's own session: it must say so and come back without help.
        Conn admin(dsn_);
        admin.one("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'lockscope-poller-test'");
        QTRY_VERIFY_WITH_TIMEOUT(std::any_of(states.begin(), states.end(),
                                             [](const QList<QVariant>& args) {
                                                 return args.at(0).value<PollState>() == PollState::disconnected;
                                             }),
                                 10000);
        QVERIFY2(waitFor(poller, [&](const PollResultPtr& r) { return holds(r, key, pid); }, 15s),
                 "no snapshot after the poller's session was terminated");
        QCOMPARE(poller.state(), PollState::connected);
    }

    void recovers_after_server_restart() {
        const auto dir = pglock::test::private_cluster_dir();
        if (!dir) QSKIP("PGLOCK_TEST_DSN is set: not restarting someone else's server");
        lockscope::Poller poller;
        poller.setInterval(250ms);
        QSignalSpy states(&poller, &lockscope::Poller::stateChanged);
        poller.start(QString::fromStdString(dsn_));
        QVERIFY(waitFor(poller, [](const PollResultPtr& r) { return r && r->snapshot; }, 10s));

        const std::string cmd = pglock::test::cluster_script() + " restart " + *dir;
        QCOMPARE(std::system(cmd.c_str()), 0);

        Conn holder(dsn_);
        QVERIFY(holder.ok());
        const std::int64_t key = pglock::key_of("poller.test.after-restart");
        holder.one("SELECT pg_advisory_lock(" + std::to_string(key) + ")");
        const int pid = std::atoi(holder.one("SELECT pg_backend_pid()").c_str());
        QVERIFY2(waitFor(poller, [&](const PollResultPtr& r) { return holds(r, key, pid); }, 20s),
                 "no snapshot after the server restart");
        const bool sawDisconnect = std::any_of(states.begin(), states.end(), [](const QList<QVariant>& args) {
            return args.at(0).value<PollState>() == PollState::disconnected;
        });
        QVERIFY2(sawDisconnect, "the restart went unnoticed: no disconnected state was reported");
    }

    // The summary strip's numbers come with each result, computed on the poll thread with the
    // thresholds given, the same as the GUI thread would compute them from the result.
    void results_carry_their_summary_once_thresholds_are_set() {
        Conn holder(dsn_);
        QVERIFY(holder.ok());
        const std::int64_t key = pglock::key_of("poller.test.summary");
        holder.one("SELECT pg_advisory_lock(" + std::to_string(key) + ")");
        const int pid = std::atoi(holder.one("SELECT pg_backend_pid()").c_str());

        lockscope::Poller poller;
        poller.setInterval(100ms);
        poller.start(QString::fromStdString(dsn_));
        const PollResultPtr before = waitFor(poller, [&](const PollResultPtr& r) { return holds(r, key, pid); }, 10s);
        QVERIFY2(before, "no snapshot showed the held lock");
        QVERIFY2(!before->summary, "a summary without thresholds");

        lockscope::SummaryThresholds t;
        t.longHold = 0;  // every held lock counts as a long hold
        t.longWait = 123;
        poller.setSummaryThresholds(t);
        const PollResultPtr after = waitFor(
            poller, [&](const PollResultPtr& r) { return holds(r, key, pid) && r->summary; }, 10s);
        QVERIFY2(after, "no result carried a summary after the thresholds were set");
        QVERIFY(after->summary->thresholds == t);
        QVERIFY(after->summary->summary == lockscope::summarize(*after->snapshot, after->held_since, t));
        QVERIFY(after->summary->summary.locksHeld >= 1);
        QVERIFY(after->summary->summary.longHolds >= 1);
    }

    void replaced_connection_results_are_dropped() {
        lockscope::Poller poller;
        poller.setInterval(250ms);
        poller.start(QString::fromStdString(dsn_));
        QVERIFY(waitFor(poller, [](const PollResultPtr& r) { return r && r->snapshot; }, 10s));
        const quint64 before = poller.generation();
        // Point it at a server that does not exist: nothing from the old connection may arrive.
        QSignalSpy results(&poller, &lockscope::Poller::resultReady);
        poller.start(QStringLiteral("host=127.0.0.1 port=1 connect_timeout=2"));
        QVERIFY(poller.generation() > before);
        QTRY_COMPARE_WITH_TIMEOUT(poller.state(), PollState::disconnected, 10000);
        QCOMPARE(results.count(), 0);
    }
};

QTEST_GUILESS_MAIN(TestPoller)
#include "test_poller.moc"
