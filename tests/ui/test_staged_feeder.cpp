// StagedSnapshotFeeder: a big snapshot reaches the locks model over several event-loop turns,
// never more than maxAddedPerTurn() new lock rows per turn; a result arriving while staging is the
// one the model ends with; the model's reset cancels staging; a view's current row and expansion
// stay on their lock; small polls are applied at once.
#include <QSignalSpy>
#include <QTreeView>
#include <QtTest>

#include <set>

#include "locks_test_world.hpp"
#include "models/locks_filter_proxy.hpp"
#include "models/locks_model.hpp"
#include "models/staged_snapshot_feeder.hpp"

using lockscope::LocksFilterProxy;
using lockscope::LocksModel;
using lockscope::StagedSnapshotFeeder;
using locks_test::World;

namespace {

constexpr int kPerTurn = 1500;

// `count` locks with keys from `first`, held by 50 sessions, every 10th one with a waiter.
void fill(World& w, std::int64_t first, int count) {
    for (int i = 0; i < count; ++i) {
        const std::int64_t key = first + i;
        const int holder = 1000 + i % 50;
        if (i % 10 == 0)
            w.add(key, {holder}, {5000 + i});
        else
            w.add(key, {holder});
    }
}

std::set<qint64> modelKeys(const LocksModel& m) {
    std::set<qint64> keys;
    for (int r = 0; r < m.rowCount(); ++r) keys.insert(m.index(r, 0).data(LocksModel::KeyRole).toLongLong());
    return keys;
}

std::set<qint64> snapshotKeys(const pglock::monitor::Snapshot& s) {
    std::set<qint64> keys;
    for (const auto& e : s.locks) keys.insert(e.key);
    return keys;
}

}  // namespace

class TestStagedFeeder : public QObject {
    Q_OBJECT

    LocksModel* model_ = nullptr;
    LocksFilterProxy* proxy_ = nullptr;
    QTreeView* view_ = nullptr;
    StagedSnapshotFeeder* feeder_ = nullptr;
    int inserted_ = 0;  // top-level rows inserted since the last reset of the count

    // Turns of the event loop until the feeder is done; returns the rows inserted per turn.
    QList<int> drain() {
        QList<int> perTurn;
        for (int guard = 0; guard < 100 && feeder_->staging(); ++guard) {
            inserted_ = 0;
            QCoreApplication::processEvents();
            perTurn << inserted_;
        }
        return perTurn;
    }

private slots:
    void init() {
        model_ = new LocksModel;
        proxy_ = new LocksFilterProxy;
        proxy_->setSourceModel(model_);
        proxy_->sort(LocksModel::Key, Qt::DescendingOrder);  // new rows land all over the view
        view_ = new QTreeView;
        view_->setModel(proxy_);
        view_->resize(800, 600);
        view_->show();
        feeder_ = new StagedSnapshotFeeder(model_);
        feeder_->setMaxAddedPerTurn(kPerTurn);
        inserted_ = 0;
        connect(model_, &QAbstractItemModel::rowsInserted, this, [this](const QModelIndex& parent, int first, int last) {
            if (!parent.isValid()) inserted_ += last - first + 1;
        });
    }
    void cleanup() {
        delete feeder_;
        delete view_;
        delete proxy_;
        delete model_;
    }

    void bigSnapshotIsStaged() {
        World w;
        fill(w, 1, 6000);
        const auto snap = w.make();
        QSignalSpy caughtUp(feeder_, &StagedSnapshotFeeder::caughtUp);
        feeder_->feed(snap);
        QVERIFY(feeder_->staging());
        QCOMPARE(inserted_, kPerTurn);  // the first step, in the result's own turn
        QCOMPARE(model_->rowCount(), kPerTurn);
        QVERIFY(model_->invariantsHold());
        const QList<int> turns = drain();
        QVERIFY(!feeder_->staging());
        QCOMPARE(turns.size(), 3);  // 1500 now, then 1500 x 3
        for (int n : turns) QVERIFY2(n <= kPerTurn, qPrintable(QString::number(n)));
        QCOMPARE(model_->rowCount(), 6000);
        QCOMPARE(proxy_->rowCount(), 6000);
        QCOMPARE(model_->snapshot(), snap);  // the result itself, not a copy of it
        QVERIFY(model_->invariantsHold());
        QCOMPARE(caughtUp.count(), 1);
        QCOMPARE(modelKeys(*model_), snapshotKeys(*snap));

        // The next poll changes little: applied at once, no staging.
        w.remove(17);
        w.add(100000, {1001});
        w.lock(18).holders = {{1002, true}};
        inserted_ = 0;
        const auto next = w.make();
        feeder_->feed(next);
        QVERIFY(!feeder_->staging());
        QCOMPARE(inserted_, 1);
        QCOMPARE(model_->snapshot(), next);
        QCOMPARE(caughtUp.count(), 1);
    }

    void newResultWhileStagingWins() {
        World a;
        fill(a, 10001, 6000);
        feeder_->feed(a.make());
        QCOMPARE(model_->rowCount(), kPerTurn);
        QCoreApplication::processEvents();
        QCOMPARE(model_->rowCount(), 2 * kPerTurn);  // keys 10001..13000

        // 1,000 of those released, 3,000 new locks before them in the snapshot's order and 1,000
        // after: the rows that stay must never leave the model (no remove + insert again).
        World b;
        fill(b, 1, 3000);
        fill(b, 11001, 3000);
        const auto second = b.make();
        int removed = 0;
        connect(model_, &QAbstractItemModel::rowsRemoved, this, [&removed](const QModelIndex& parent, int first, int last) {
            if (!parent.isValid()) removed += last - first + 1;
        });
        inserted_ = 0;
        feeder_->feed(second);
        QVERIFY(feeder_->staging());
        QVERIFY(inserted_ <= kPerTurn);
        const QList<int> turns = drain();
        for (int n : turns) QVERIFY2(n <= kPerTurn, qPrintable(QString::number(n)));
        QCOMPARE(removed, 1000);
        QCOMPARE(model_->snapshot(), second);
        QCOMPARE(modelKeys(*model_), snapshotKeys(*second));
        QCOMPARE(model_->rowCount(), 6000);
        QVERIFY(model_->invariantsHold());
    }

    void clearCancelsStaging() {
        World w;
        fill(w, 1, 6000);
        feeder_->feed(w.make());
        QVERIFY(feeder_->staging());
        model_->clear();
        QVERIFY(!feeder_->staging());
        for (int i = 0; i < 5; ++i) QCoreApplication::processEvents();
        QCOMPARE(model_->rowCount(), 0);
        QVERIFY(!model_->snapshot());

        // Connected again: staging starts over from nothing.
        feeder_->feed(w.make());
        drain();
        QCOMPARE(model_->rowCount(), 6000);
    }

    void viewKeepsItsPlace() {
        World w;
        fill(w, 1, 6000);
        feeder_->feed(w.make());
        // Key 11 has a waiter (every 10th lock from key 1): expand it and make it current.
        const QModelIndex lock = proxy_->mapFromSource(model_->indexOfLock(pglock::monitor::id_of(w.lock(11))));
        QVERIFY(lock.isValid());
        view_->setCurrentIndex(lock);
        view_->expand(lock);
        drain();
        QCOMPARE(model_->rowCount(), 6000);
        const QModelIndex current = view_->currentIndex();
        QVERIFY(current.isValid());
        QCOMPARE(current.data(LocksModel::KeyRole).toLongLong(), 11);
        QVERIFY(view_->isExpanded(current));
        QCOMPARE(view_->selectionModel()->selectedRows().size(), 1);
    }

    void nullSnapshotEmptiesAtOnce() {
        World w;
        fill(w, 1, 6000);
        feeder_->feed(w.make());
        feeder_->feed(nullptr);
        QVERIFY(!feeder_->staging());
        QCOMPARE(model_->rowCount(), 0);
        for (int i = 0; i < 5; ++i) QCoreApplication::processEvents();
        QCOMPARE(model_->rowCount(), 0);
    }
};

QTEST_MAIN(TestStagedFeeder)
#include "test_staged_feeder.moc"
