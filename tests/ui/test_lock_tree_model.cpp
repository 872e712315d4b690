// LockTreeModel: the Tree tab's rows for a chain through a row lock to its root, the edges named by
// the app's namer, the worst root's line for the status bar, and a poll of the same shape that
// updates cells without a reset (the view keeps selection and expansion).
#include <QAbstractItemModelTester>
#include <QSignalSpy>
#include <QtTest>

#include <memory>

#include "models/lock_tree_model.hpp"
#include "pglock/lock_tree.hpp"

using lockscope::LockTreeModel;
using lockscope::PollResult;
using namespace pglock::monitor;

namespace {

constexpr std::int64_t kKey = 4242;

// Session 5 (billing-cron) holds a row; 10 (billing-worker) holds kKey and waits for 5's
// transaction; 20 and 21 wait for kKey. With `extra`, 22 waits for kKey too.
lockscope::PollResultPtr result(double now, bool extra = false) {
    auto snap = std::make_shared<Snapshot>();
    snap->server_now = now;
    LockEntry e;
    e.key = kKey;
    e.tag = pglock::tag_of(kKey);
    e.holders.push_back({10, false});
    e.waiters.push_back({20, false, 1000.0, {10}});
    e.waiters.push_back({21, false, 1010.0, {10, 20}});
    if (extra) e.waiters.push_back({22, true, 1020.0, {10, 20, 21}});
    snap->locks.push_back(e);
    for (auto [pid, app] : std::vector<std::pair<int, const char*>>{
             {5, "billing-cron"}, {10, "billing-worker"}, {20, "invoicer"}, {21, "invoicer"}, {22, "mailer"}}) {
        snap->backends[pid].pid = pid;
        snap->backends[pid].application_name = app;
        snap->backends[pid].state = pid == 5 ? "idle in transaction" : "active";
    }
    OtherWait o;
    o.pid = 10;
    o.locktype = "transactionid";
    o.mode = "ShareLock";
    o.transactionid = "77";
    o.description = describe_other_wait(o);
    o.wait_start = 990.0;
    o.blocked_by = {5};
    snap->other_waits.push_back(o);
    auto out = std::make_shared<PollResult>();
    out->roots = lock_tree(*snap);
    out->snapshot = std::move(snap);
    return out;
}

QString cell(const LockTreeModel& m, const QModelIndex& row, int column) {
    return m.index(row.row(), column, row.parent()).data().toString();
}

}  // namespace

class TestLockTreeModel : public QObject {
    Q_OBJECT
private slots:
    void rows_names_and_the_worst_root() {
        LockTreeModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        model.setNamer([](const LockId&, std::int64_t key, const std::optional<HolderName>&) {
            return lockscope::LockName{key == kKey ? QStringLiteral("billing:invoice-run") : QStringLiteral("?"),
                                       lockscope::LockNameSource::catalog, std::nullopt};
        });
        QVERIFY(model.worstRootText().isEmpty());
        model.setResult(result(1030.0));

        QCOMPARE(model.rowCount(), 1);
        const QModelIndex root = model.index(0, 0);
        QCOMPARE(cell(model, root, LockTreeModel::Session), QString("PID 5 (billing-cron)"));
        QCOMPARE(cell(model, root, LockTreeModel::Blocks), QString("3 (1 directly)"));
        QCOMPARE(cell(model, root, LockTreeModel::Waiting), QString("40s"));  // the oldest wait below it
        QCOMPARE(cell(model, root, LockTreeModel::State), QString("idle in transaction"));
        QCOMPARE(model.rowCount(root), 1);
        const QModelIndex worker = model.index(0, 0, root);
        QCOMPARE(cell(model, worker, LockTreeModel::Session), QString("PID 10 (billing-worker)"));
        QCOMPARE(cell(model, worker, LockTreeModel::WaitsFor), QString("transaction 77"));
        QCOMPARE(cell(model, worker, LockTreeModel::Blocks), QString("2"));
        QCOMPARE(model.rowCount(worker), 2);
        QCOMPARE(cell(model, model.index(0, 0, worker), LockTreeModel::Session), QString("PID 20 (invoicer)"));
        QCOMPARE(cell(model, model.index(1, 0, worker), LockTreeModel::WaitsFor), QString("billing:invoice-run"));
        QCOMPARE(model.index(1, 0, worker).data(LockTreeModel::PidRole).toInt(), 21);
        QCOMPARE(model.worstRootText(), QString("PID 5 (billing-cron) blocks 3 sessions via transaction 77, 40s"));

        // The same shape a poll later: cells change, no reset.
        QSignalSpy resets(&model, &QAbstractItemModel::modelReset);
        QSignalSpy changes(&model, &QAbstractItemModel::dataChanged);
        model.setResult(result(1090.0));
        QCOMPARE(resets.count(), 0);
        QVERIFY(changes.count() > 0);
        QCOMPARE(cell(model, model.index(0, 0), LockTreeModel::Waiting), QString("1m40s"));

        // A new waiter (shared, queued behind the exclusive ones): a new shape.
        model.setResult(result(1100.0, true));
        QCOMPARE(resets.count(), 1);
        const QModelIndex worker2 = model.index(0, 0, model.index(0, 0));
        QCOMPARE(model.rowCount(worker2), 3);
        QCOMPARE(cell(model, model.index(2, 0, worker2), LockTreeModel::WaitsFor), QString("billing:invoice-run (shared)"));
        QCOMPARE(cell(model, model.index(0, 0), LockTreeModel::Blocks), QString("4 (1 directly)"));

        model.clear();
        QCOMPARE(model.rowCount(), 0);
        QVERIFY(model.worstRootText().isEmpty());
    }
};

QTEST_GUILESS_MAIN(TestLockTreeModel)
#include "test_lock_tree_model.moc"
