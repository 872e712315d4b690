// summarize() (no server): the oldest hold of each lock, counted against the long-hold threshold,
// whatever the order of the snapshot's locks, with shared holders and a hold start time of a
// session that no longer holds the lock (which must not count).
#include <QtTest>

#include <memory>

#include "models/lock_summary.hpp"
#include "poller/poll_result.hpp"

namespace {

namespace mon = pglock::monitor;

mon::LockEntry lock(std::uint32_t objid, std::vector<int> pids) {
    mon::LockEntry e;
    e.tag = {0, objid};
    e.key = objid;
    for (int pid : pids) e.holders.push_back({pid, pids.size() > 1});
    return e;
}

// Locks 1..4 at server time 1000; the oldest hold of each: 1 -> 100 s, 2 -> 900 s (shared, the
// older of two), 3 -> 10 s (pid 33's older start time is stale: 33 holds nothing now), 4 -> none.

lockscope::PollResult result(bool sorted) {
    auto snap = std::make_shared<mon::Snapshot>();
    snap->server_now = 1000;
    std::vector<mon::LockEntry> locks{lock(1, {11}), lock(2, {21, 22}), lock(3, {31}), lock(4, {41})};
    if (!sorted) std::swap(locks[0], locks[3]), std::swap(locks[1], locks[2]);
    snap->locks = locks;
    lockscope::PollResult r;
    const auto id = [](std::uint32_t objid) { return mon::LockId{mon::KeyForm::bigint, {0, objid}}; };
    r.held_since = {{{id(1), 11}, 900.0}, {{id(2), 21}, 500.0}, {{id(2), 22}, 100.0},
                    {{id(3), 31}, 990.0}, {{id(3), 33}, 0.0}};
    r.snapshot = snap;
    return r;
}

}  // namespace

class TestLockSummary : public QObject {
    Q_OBJECT

private slots:
    void the_oldest_hold_per_lock_in_any_order() {
        for (const bool sorted : {true, false}) {
            lockscope::SummaryThresholds t;
            t.longHold = 50;
            const lockscope::LockSummary s = lockscope::summarize(result(sorted), t);
            QCOMPARE(s.locksHeld, 4);
            QCOMPARE(s.longHolds, 2);  // locks 1 (100 s) and 2 (900 s); not 3 (10 s), not 4 (no start)
            QVERIFY(s.longestHold);
            QCOMPARE(*s.longestHold, 900.0);
        }
    }

    // The poll thread's summary is the answer for its own thresholds (the GUI thread walks
    // nothing); any other thresholds (a setting changed since that poll) are computed afresh.
    void a_result_s_own_summary_answers_for_its_thresholds_only() {
        lockscope::PollResult r = result(true);
        lockscope::SummaryThresholds polled;
        polled.longHold = 50;
        lockscope::LockSummary marked = lockscope::summarize(*r.snapshot, r.held_since, polled);
        QCOMPARE(marked.longHolds, 2);
        marked.locksHeld = 99;  // tells the stored summary from a fresh one
        r.summary = lockscope::PollResult::Summary{polled, marked};
        QCOMPARE(lockscope::summarize(r, polled).locksHeld, 99);

        lockscope::SummaryThresholds changed = polled;
        changed.longHold = 500;
        const lockscope::LockSummary fresh = lockscope::summarize(r, changed);
        QCOMPARE(fresh.locksHeld, 4);
        QCOMPARE(fresh.longHolds, 1);  // only lock 2 (900 s)
    }
};

QTEST_MAIN(TestLockSummary)
#include "test_lock_summary.moc"
