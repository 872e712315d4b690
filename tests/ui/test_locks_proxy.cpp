// LocksFilterProxy against a full sort: random polls of a LocksModel (inserts, removals, holder,
// application and waiter changes), and after each one the proxy's tree must equal what a fresh
// QSortFilterProxyModel with the same sort and filter rules shows. Plus: a view's selection,
// current row and expansion stay on their lock while it moves, and no poll resets the proxy.
#include <QAbstractItemModelTester>
#include <QSignalSpy>
#include <QSortFilterProxyModel>
#include <QTreeView>
#include <QtTest>

#include <optional>
#include <random>

#include "locks_test_world.hpp"
#include "models/locks_filter_proxy.hpp"
#include "models/locks_model.hpp"

using lockscope::LocksFilterProxy;
using lockscope::LocksModel;
using locks_test::World;

namespace {

// The reference: Qt's own proxy, built fresh for each comparison (a full stable sort of the
// model's rows in arrival order) with the filter rules of LocksFilterProxy::setFilterText.
class ReferenceProxy : public QSortFilterProxyModel {
public:
    ReferenceProxy(LocksModel& model, const QString& text, int column, Qt::SortOrder order) : text_(text) {
        bool ok = false;
        const int pid = text_.toInt(&ok);
        if (ok && pid > 0) pid_ = pid;
        setRecursiveFilteringEnabled(true);
        setAutoAcceptChildRows(true);
        setSortRole(LocksModel::SortRole);
        setSortCaseSensitivity(Qt::CaseInsensitive);
        setSourceModel(&model);
        sort(column, order);
    }

protected:
    bool filterAcceptsRow(int row, const QModelIndex& parent) const override {
        if (text_.isEmpty()) return true;
        const QModelIndex idx = sourceModel()->index(row, 0, parent);
        if (idx.data(LocksModel::FilterRole).toString().contains(text_, Qt::CaseInsensitive)) return true;
        return pid_ && idx.data(LocksModel::PidsRole).value<QList<int>>().contains(*pid_);
    }

private:
    QString text_;
    std::optional<int> pid_;
};

// "key: waiter pids" per shown lock, in display order.
QStringList tree(const QAbstractItemModel& m) {
    QStringList out;
    for (int r = 0; r < m.rowCount(); ++r) {
        const QModelIndex lock = m.index(r, 0);
        QString line = QString::number(lock.data(LocksModel::KeyRole).toLongLong()) + QLatin1Char(':');
        for (int k = 0; k < m.rowCount(lock); ++k)
            line += QLatin1Char(' ') + QString::number(m.index(k, 0, lock).data(LocksModel::PidsRole).value<QList<int>>().value(0));
        out << line;
    }
    return out;
}

QModelIndex proxyRowOfKey(const QAbstractItemModel& m, qint64 key) {
    for (int r = 0; r < m.rowCount(); ++r)
        if (m.index(r, 0).data(LocksModel::KeyRole).toLongLong() == key) return m.index(r, 0);
    return {};
}

}  // namespace

class TestLocksProxy : public QObject {
    Q_OBJECT

private slots:
    void order_and_filter_match_a_full_sort_after_random_polls() {
        LocksModel model;
        LocksFilterProxy proxy;
        proxy.setSourceModel(&model);
        QAbstractItemModelTester tester(&proxy, QAbstractItemModelTester::FailureReportingMode::QtTest);
        QSignalSpy resets(&proxy, &QAbstractItemModel::modelReset);
        // Names for a third of the keys, in mixed case; the rest show "(unknown) KEY".
        model.setNamer(lockscope::catalogNamer([](qint64 key) -> std::optional<QByteArray> {
            if (key % 3 != 0) return std::nullopt;
            return ((key % 2 ? QStringLiteral("Orders.") : QStringLiteral("billing.")) + QString::number(key * 7919 % 1000)).toUtf8();
        }));
        World world;
        std::mt19937 rng(4242);
        const auto pick = [&rng](int n) { return static_cast<int>(rng() % static_cast<unsigned>(n)); };
        const char* const apps[] = {"svc", "Billing-export", "cron", "billing"};
        const auto holder = [&] { return 100 + pick(20); };  // 20 sessions: ties in Holders
        std::vector<std::int64_t> present;
        std::int64_t nextKey = 1;
        for (; nextKey <= 60; ++nextKey) {
            world.add(nextKey * 37 - 900, {holder()});
            present.push_back(nextKey * 37 - 900);
        }
        for (int pid = 100; pid < 120; ++pid) world.backend(pid).application_name = apps[pid % 4];

        // Sort columns cycle (Held for is time-driven: covered by test_locks_model), filters too:
        // text in names, applications (holders' and waiters'), a holder pid, a waiter pid.
        const int columns[] = {LocksModel::Name, LocksModel::Holders, LocksModel::Key, LocksModel::Application,
                               LocksModel::Waiters, LocksModel::State, LocksModel::Mode};
        const QString filters[] = {QString(), QStringLiteral("billing"), QStringLiteral("unknown"), QStringLiteral("105"),
                                   QStringLiteral("307"), QStringLiteral("orders."), QStringLiteral("CRON")};
        int column = LocksModel::Name;
        Qt::SortOrder order = Qt::AscendingOrder;
        QString filter;
        proxy.sort(column, order);

        for (int round = 0; round < 80; ++round) {
            if (round % 8 == 7) {
                column = columns[pick(static_cast<int>(std::size(columns)))];
                order = pick(2) ? Qt::AscendingOrder : Qt::DescendingOrder;
                proxy.sort(column, order);
            }
            if (round % 10 == 5) {
                filter = filters[pick(static_cast<int>(std::size(filters)))];
                proxy.setFilterText(filter);
            }
            // Removals, arrivals, holder and mode changes, sessions changing application,
            // waiters coming and going (pids 300-339, their own applications).
            for (int i = pick(4); i-- > 0 && !present.empty();) {
                const auto at = static_cast<std::size_t>(pick(static_cast<int>(present.size())));
                world.remove(present[at]);
                present.erase(present.begin() + static_cast<std::ptrdiff_t>(at));
            }
            for (int i = pick(4); i-- > 0; ++nextKey) {
                world.add(nextKey * 37 - 900, {holder()});
                present.push_back(nextKey * 37 - 900);
            }
            for (int i = pick(4); i-- > 0 && !present.empty();) {
                auto& lock = world.lock(present[static_cast<std::size_t>(pick(static_cast<int>(present.size())))]);
                if (pick(2)) lock.holders = {{holder(), false}};
                else lock.holders.front().shared = !lock.holders.front().shared;
            }
            if (pick(3) == 0) world.backend(holder()).application_name = apps[pick(4)];
            if (pick(3) == 0) world.backend(holder()).state = pick(2) ? "active" : "idle";
            for (int i = pick(3); i-- > 0 && !present.empty();) {
                const std::int64_t key = present[static_cast<std::size_t>(pick(static_cast<int>(present.size())))];
                std::vector<int> waiters;
                for (int w = pick(4); w-- > 0;) waiters.push_back(300 + pick(40));
                std::sort(waiters.begin(), waiters.end());
                waiters.erase(std::unique(waiters.begin(), waiters.end()), waiters.end());
                for (int w : waiters) world.backend(w).application_name = apps[w % 4];
                world.setWaiters(key, waiters);
            }
            world.now += 1;
            model.applySnapshot(world.make());

            QVERIFY2(proxy.invariantsHold(), qPrintable(QStringLiteral("round %1").arg(round)));
            ReferenceProxy reference(model, filter, column, order);
            QCOMPARE(tree(proxy), tree(reference));
        }
        QCOMPARE(resets.count(), 0);
    }

    // A poll that ends and starts hundreds of locks scattered over the list (1% churn at 50,000
    // locks) reaches the view as one removal and one insertion (plus a layout change each), not
    // one range per lock: each range costs the view a pass over all its rows. The result and the
    // operator's place in the list are the same as ever.
    void scattered_churn_leaves_and_arrives_as_one_range_each() {
        LocksModel model;
        LocksFilterProxy proxy;
        proxy.setSourceModel(&model);
        QAbstractItemModelTester modelTester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        QAbstractItemModelTester proxyTester(&proxy, QAbstractItemModelTester::FailureReportingMode::QtTest);
        QTreeView view;
        view.setModel(&proxy);
        view.setSortingEnabled(true);
        view.sortByColumn(LocksModel::Holders, Qt::AscendingOrder);
        view.setSelectionBehavior(QAbstractItemView::SelectRows);

        World world;
        std::mt19937 rng(7);
        for (int k = 1; k <= 1000; ++k) world.add(k, {100 + static_cast<int>(rng() % 400)});
        world.setWaiters(500, {901, 902});
        model.applySnapshot(world.make());
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        view.expand(proxyRowOfKey(proxy, 500));
        view.setCurrentIndex(proxyRowOfKey(proxy, 500));
        view.selectionModel()->select(proxy.index(1, 0, proxyRowOfKey(proxy, 500)),
                                      QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);

        QSignalSpy modelRemoved(&model, &QAbstractItemModel::rowsRemoved);
        QSignalSpy removed(&proxy, &QAbstractItemModel::rowsRemoved);
        QSignalSpy inserted(&proxy, &QAbstractItemModel::rowsInserted);
        QSignalSpy resets(&proxy, &QAbstractItemModel::modelReset);
        // Every 7th lock ends (not 500), as many start, each holder landing anywhere.
        for (int k = 7; k <= 1000; k += 7) world.remove(k);
        for (int k = 2001; k <= 2142; ++k) world.add(k, {100 + static_cast<int>(rng() % 400)});
        model.applySnapshot(world.make());

        QCOMPARE(modelRemoved.count(), 1);
        QCOMPARE(removed.count(), 1);
        QCOMPARE(inserted.count(), 1);
        QCOMPARE(resets.count(), 0);
        QVERIFY(model.invariantsHold());
        QVERIFY(proxy.invariantsHold());
        QCOMPARE(proxy.rowCount(), 1000);
        ReferenceProxy reference(model, QString(), LocksModel::Holders, Qt::AscendingOrder);
        QCOMPARE(tree(proxy), tree(reference));
        // Still current, expanded, and its second waiter still selected.
        const QModelIndex lock = proxyRowOfKey(proxy, 500);
        QCOMPARE(view.currentIndex(), lock);
        QVERIFY(view.isExpanded(lock));
        const QModelIndexList selected = view.selectionModel()->selectedRows();
        QCOMPARE(selected.size(), 1);
        QCOMPARE(selected.first().parent(), lock);
        QCOMPARE(selected.first().data(LocksModel::PidsRole).value<QList<int>>(), QList<int>{902});
        // A lock that stayed still answers through the model by its key.
        QCOMPARE(proxy.mapToSource(lock).data(LocksModel::KeyRole).toLongLong(), 500);
    }

    // Sorted by Held for, the once-a-second tick() changes every key by the same amount: no row
    // moves, and the order stays right. (Placed one by one against neighbours with old keys,
    // 300 locks taken in the same poll would each move past all the others.)
    void tick_sorted_by_held_for_moves_nothing() {
        LocksModel model;
        LocksFilterProxy proxy;
        proxy.setSourceModel(&model);
        World world;
        for (int k = 1; k <= 300; ++k) world.add(k, {1000 + k});
        const double start = world.now - 5;
        model.setHeldSinceProvider([&](const pglock::monitor::LockId& id, int) -> std::optional<double> {
            return pglock::key_of(id.tag) > 200 ? start - 30 : start;  // two groups of equal starts
        });
        model.applySnapshot(world.make());
        proxy.sort(LocksModel::HeldFor, Qt::AscendingOrder);
        QSignalSpy moves(&proxy, &QAbstractItemModel::rowsMoved);
        QSignalSpy layouts(&proxy, &QAbstractItemModel::layoutChanged);
        QTest::qWait(20);  // time passes: every Held for grows
        model.tick();
        QCOMPARE(moves.count(), 0);
        QCOMPARE(proxy.rowCount(), 300);
        // Held 5 s first (keys 1-200, arrival order), then held 35 s (201-300).
        for (int r = 0; r < proxy.rowCount(); ++r)
            QCOMPARE(proxy.index(r, 0).data(LocksModel::KeyRole).toLongLong(), r + 1);
        QVERIFY(layouts.count() <= 1);
    }

    // The operator's place in the view survives polls that move, add and remove rows around it.
    void selection_expansion_and_current_survive_polls() {
        LocksModel model;
        LocksFilterProxy proxy;
        proxy.setSourceModel(&model);
        QTreeView view;
        view.setModel(&proxy);
        view.setSortingEnabled(true);
        view.sortByColumn(LocksModel::Holders, Qt::AscendingOrder);
        view.setSelectionBehavior(QAbstractItemView::SelectRows);
        QSignalSpy resets(&proxy, &QAbstractItemModel::modelReset);
        QSignalSpy layouts(&proxy, &QAbstractItemModel::layoutChanged);

        World world;
        for (int k = 1; k <= 30; ++k) world.add(k, {100 + k});
        world.setWaiters(20, {201, 202});
        model.applySnapshot(world.make());
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));

        const QModelIndex lock = proxyRowOfKey(proxy, 20);
        QCOMPARE(lock.row(), 19);  // holder 120 of 101..130
        view.expand(lock);
        view.setCurrentIndex(lock);
        view.selectionModel()->select(lock, QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
        const QModelIndex waiter = proxy.index(1, 0, lock);
        QCOMPARE(waiter.data(LocksModel::PidsRole).value<QList<int>>(), QList<int>{202});
        view.selectionModel()->select(waiter, QItemSelectionModel::Select | QItemSelectionModel::Rows);

        const auto check = [&](int expectedRow) {
            const QModelIndex now = proxyRowOfKey(proxy, 20);
            QCOMPARE(now.row(), expectedRow);
            QCOMPARE(view.currentIndex().data(LocksModel::KeyRole).toLongLong(), 20);
            QCOMPARE(view.currentIndex().row(), expectedRow);
            QVERIFY(view.isExpanded(now));
            QList<qint64> selected;
            QList<int> selectedWaiters;
            for (const QModelIndex& i : view.selectionModel()->selectedRows()) {
                if (i.parent().isValid()) selectedWaiters << i.data(LocksModel::PidsRole).value<QList<int>>().value(0);
                else selected << i.data(LocksModel::KeyRole).toLongLong();
            }
            QCOMPARE(selected, QList<qint64>{20});
            QCOMPARE(selectedWaiters, QList<int>{202});
            QVERIFY(proxy.invariantsHold());
        };

        // Locks come and go before and after it; another lock moves past it.
        world.remove(3);
        world.remove(25);
        world.add(40, {99});   // sorts first
        world.add(41, {200});  // sorts last
        world.lock(5).holders = {{150, false}};
        model.applySnapshot(world.make());
        check(18);  // 19 ahead before: -1 (lock 3 gone), +1 (holder 99), -1 (lock 5 moved behind it)
        // It moves itself: a new holder sorts it near the end, and a waiter arrives before 202.
        world.lock(20).holders = {{160, false}};
        world.setWaiters(20, {199, 201, 202});
        model.applySnapshot(world.make());
        QCOMPARE(proxy.rowCount(proxyRowOfKey(proxy, 20)), 3);
        check(28);  // ahead of 160: holders 99, 101, 102, 104, 106-119, 121-124, 126-130, 150
        // The polls moved single rows; none re-sorted or reset the list.
        QCOMPARE(layouts.count(), 0);
        QCOMPARE(resets.count(), 0);
        // Sorted again by another column: the same lock is still current, selected and expanded.
        view.sortByColumn(LocksModel::Key, Qt::DescendingOrder);
        check(11);  // ahead: keys 41, 40, 30-26, 24-21
        QCOMPARE(resets.count(), 0);
    }
};

QTEST_MAIN(TestLocksProxy)
#include "test_locks_proxy.moc"
