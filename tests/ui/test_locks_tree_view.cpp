// LocksTreeView (no server, offscreen): a change to a row under a collapsed lock costs the view
// no lookup of that row's rectangle (QTreeView finds a hidden row only by scanning every shown
// row: once a second for each waiter, that was the 50,000-lock view's longest stall); a change
// under an expanded lock still repaints its cell.
#include <QRegion>
#include <QStandardItemModel>
#include <QtTest>

#include <memory>

#include "widgets/locks_tree_view.hpp"

namespace {

// Counts the rectangle lookups of rows under `watched` (the view calls visualRect() for them).
class CountingView : public lockscope::LocksTreeView {
public:
    QRect visualRect(const QModelIndex& index) const override {
        if (index.parent().isValid()) ++childLookups;
        return lockscope::LocksTreeView::visualRect(index);
    }
    mutable int childLookups = 0;
};

// Collects the viewport's painted regions.
class PaintSpy : public QObject {
public:
    QRegion painted;
    bool eventFilter(QObject* watched, QEvent* event) override {
        if (event->type() == QEvent::Paint) painted += static_cast<QPaintEvent*>(event)->region();
        return QObject::eventFilter(watched, event);
    }
};

// Two locks, one waiter each, like LocksModel's two levels.
std::unique_ptr<QStandardItemModel> twoLocks() {
    auto model = std::make_unique<QStandardItemModel>(0, 2);
    for (int lock = 0; lock < 2; ++lock) {
        QList<QStandardItem*> row{new QStandardItem(QStringLiteral("lock %1").arg(lock)), new QStandardItem(QStringLiteral("1s"))};
        row.first()->appendRow({new QStandardItem(QStringLiteral("waiter %1").arg(lock)), new QStandardItem(QStringLiteral("1s"))});
        model->appendRow(row);
    }
    return model;
}

}  // namespace

class TestLocksTreeView : public QObject {
    Q_OBJECT

private slots:
    void a_change_under_a_collapsed_lock_looks_up_nothing() {
        auto model = twoLocks();
        CountingView view;
        view.setModel(model.get());
        view.resize(400, 300);
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view, 5000));
        const QModelIndex waiterTime = model->index(0, 1, model->index(1, 0));
        QVERIFY(!view.isExpanded(waiterTime.parent()));
        view.childLookups = 0;
        model->setData(waiterTime, QStringLiteral("2s"));
        QCOMPARE(view.childLookups, 0);
    }

    void a_change_under_an_expanded_lock_repaints_its_cell() {
        auto model = twoLocks();
        CountingView view;
        view.setModel(model.get());
        view.resize(400, 300);
        const QModelIndex lock = model->index(0, 0);
        view.expand(lock);
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view, 5000));
        PaintSpy spy;
        view.viewport()->installEventFilter(&spy);
        QTest::qWait(50);  // the first paints go by
        spy.painted = {};
        const QModelIndex waiterTime = model->index(0, 1, lock);
        const QRect cell = view.visualRect(waiterTime);
        QVERIFY(!cell.isEmpty());
        model->setData(waiterTime, QStringLiteral("2s"));
        QTRY_VERIFY_WITH_TIMEOUT(spy.painted.contains(cell), 5000);
    }
};

QTEST_MAIN(TestLocksTreeView)
#include "test_locks_tree_view.moc"
