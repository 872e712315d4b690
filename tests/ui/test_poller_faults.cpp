// The poller through a silently cut network (a frozen TCP relay in a private network namespace,
// tests/support/tcp_relay.hpp): it reports "disconnected" within its poll deadline plus the
// bounded cancel instead of hanging in a poll, and once the network is back it connects again and
// delivers the same locks, each once.
#include <QElapsedTimer>
#include <QSignalSpy>
#include <QtTest>

#include <cstdio>
#include <cstdlib>

#include "pg_conn.hpp"
#include "pg_test_env.hpp"
#include "pglock/key.hpp"
#include "poller/poller.hpp"
#include "poller_wait.hpp"
#include "tcp_relay.hpp"

using namespace std::chrono_literals;
using lockscope::PollResultPtr;
using lockscope::PollState;
using pglock::test::TcpRelay;

namespace {

// How many times (lock key, pid) appears among the snapshot's holders.
int holdCount(const PollResultPtr& r, std::int64_t key, int pid) {
    if (!r || !r->snapshot) return 0;
    const auto tag = pglock::tag_of(key);
    int n = 0;
    for (const auto& lock : r->snapshot->locks) {
        if (lock.form != pglock::monitor::KeyForm::bigint || !(lock.tag == tag)) continue;
        for (const auto& h : lock.holders) n += h.pid == pid ? 1 : 0;
    }
    return n;
}

}  // namespace

class TestPollerFaults : public QObject {
    Q_OBJECT
    std::string dsn_;
    std::string no_private_network_;

    PollResultPtr waitFor(lockscope::Poller& poller, const std::function<bool(const PollResultPtr&)>& pred,
                          std::chrono::milliseconds timeout) {
        return pglock::test::waitForResult(this, poller, pred, timeout);
    }

private slots:
    void initTestCase() {
        auto dsn = pglock::test::test_dsn();
        QVERIFY2(dsn.has_value(), "no test server");
        dsn_ = *dsn;
        // First thing: every thread started later (the poller's) lives in the private network.
        no_private_network_ = dsn_.find("host=/") != std::string::npos
                                  ? pglock::test::enter_private_network()
                                  : std::string("the test server is not reached through a unix socket");
    }

    void freeze_reports_disconnected_then_recovers() {
        if (!no_private_network_.empty())
            QSKIP(qPrintable(QString::fromStdString("a silent cut needs a private network namespace: " + no_private_network_)));
        TcpRelay relay(TcpRelay::target_of(dsn_));
        pglock::test::PgConn holder(dsn_);  // through the unix socket: not cut
        QVERIFY(holder.ok());
        const std::int64_t key = pglock::key_of("poller.faults.held");
        holder.one("SELECT pg_advisory_lock(" + std::to_string(key) + ")");
        const int pid = std::atoi(holder.one("SELECT pg_backend_pid()").c_str());

        lockscope::Poller poller;
        poller.setInterval(250ms);
        QSignalSpy states(&poller, &lockscope::Poller::stateChanged);
        poller.start(QString::fromStdString(relay.dsn_via(dsn_)));
        QVERIFY2(waitFor(poller, [&](const PollResultPtr& r) { return holdCount(r, key, pid) == 1; }, 10s),
                 "no snapshot through the relay");
        QCOMPARE(poller.state(), PollState::connected);

        QElapsedTimer timer;
        timer.start();
        relay.freeze();
        // The poll deadline (5 s at this interval) plus at most 2 s for the cancel request.
        QTRY_VERIFY_WITH_TIMEOUT(poller.state() == PollState::disconnected, 12000);
        const auto detected = timer.elapsed();
        std::printf("MEASURE poller: disconnected %lld ms after the freeze\n", static_cast<long long>(detected));
        QVERIFY2(detected <= 9000, qPrintable(QStringLiteral("disconnected after %1 ms").arg(detected)));

        // Back: the poller reconnects by itself and shows the lock once.
        timer.restart();
        relay.resume();
        PollResultPtr after = waitFor(poller, [&](const PollResultPtr& r) { return holdCount(r, key, pid) > 0; }, 20s);
        QVERIFY2(after, "no snapshot after the network came back");
        std::printf("MEASURE poller: first snapshot %lld ms after the resume\n", static_cast<long long>(timer.elapsed()));
        QCOMPARE(holdCount(after, key, pid), 1);
        QCOMPARE(poller.state(), PollState::connected);
        // The hold seen before the cut was closed at the cut; the one after is a new hold (its
        // start after the cut), never two open at once.
        QVERIFY(after->heldSince({pglock::monitor::KeyForm::bigint, pglock::tag_of(key)}, pid).has_value());
        std::size_t open = 0;
        for (const auto& [id, since] : after->held_since) open += id.first.tag == pglock::tag_of(key) ? 1 : 0;
        QCOMPARE(open, std::size_t{1});
        poller.stop();
        relay.drop();
    }
};

QTEST_GUILESS_MAIN(TestPollerFaults)
#include "test_poller_faults.moc"
