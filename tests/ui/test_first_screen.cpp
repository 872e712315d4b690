// The first screen at 1440×780, offscreen, against the real server: the lock list gets the room
// and the side panel keeps the width it was given; Waiters sits next to Name and one click sorts
// the most waiters first.
#include <QApplication>
#include <QHeaderView>
#include <QMouseEvent>
#include <QSettings>
#include <QSplitter>
#include <QTemporaryDir>
#include <QTreeView>
#include <QtTest>

#include "models/locks_model.hpp"
#include "pg_test_env.hpp"
#include "stores/catalog_store.hpp"
#include "widgets/main_window.hpp"

using lockscope::LocksModel;

namespace {

constexpr auto kSidePanelKey = "mainWindow/sidePanel";

QSplitter* locksSplitter(lockscope::MainWindow& window) { return window.findChild<QSplitter*>(QStringLiteral("locksSplitter")); }

// Drags the handle between the list and the side panel by `dx` pixels, as a mouse does.
void dragHandle(QSplitter& split, int dx) {
    QSplitterHandle* handle = split.handle(1);
    const QPointF start(handle->width() / 2.0, handle->height() / 2.0);
    const QPointF end = start + QPointF(dx, 0);
    QMouseEvent press(QEvent::MouseButtonPress, start, handle->mapToGlobal(start), Qt::LeftButton, Qt::LeftButton, Qt::NoModifier);
    QApplication::sendEvent(handle, &press);
    QMouseEvent move(QEvent::MouseMove, end, handle->mapToGlobal(end), Qt::NoButton, Qt::LeftButton, Qt::NoModifier);
    QApplication::sendEvent(handle, &move);
    QMouseEvent release(QEvent::MouseButtonRelease, end, handle->mapToGlobal(end), Qt::LeftButton, Qt::NoButton, Qt::NoModifier);
    QApplication::sendEvent(handle, &release);
}

}  // namespace

class TestFirstScreen : public QObject {
    Q_OBJECT
    std::string dsn_;
    QTemporaryDir dir_;

private slots:
    void initTestCase() {
        auto dsn = pglock::test::test_dsn();
        QVERIFY2(dsn.has_value(), "no test server");
        dsn_ = *dsn;
        QVERIFY(dir_.isValid());
        QStandardPaths::setTestModeEnabled(true);  // QSettings go to a scratch place
        QSettings().remove(QString::fromLatin1(kSidePanelKey));
    }

    void lock_list_gets_the_room_and_the_side_panel_remembers_its_width() {
        lockscope::CatalogStore catalog(dir_.filePath(QStringLiteral("catalog.sqlite")));
        int moved = 0;
        {
            lockscope::MainWindow window(catalog);
            window.resize(1440, 780);
            window.show();
            QVERIFY(QTest::qWaitForWindowExposed(&window));
            QSplitter* split = locksSplitter(window);
            QVERIFY(split);
            QTest::qWait(200);  // the layout settles
            const int side = split->sizes().value(1);
            QVERIFY2(side > 0 && side <= 1440 / 4, qPrintable(QStringLiteral("side panel %1 px wide at 1440").arg(side)));
            // Every column is in view without scrolling.
            QHeaderView* header = window.locksView().header();
            QVERIFY2(header->length() <= window.locksView().viewport()->width(),
                     qPrintable(QStringLiteral("columns %1 px, view %2 px").arg(header->length()).arg(window.locksView().viewport()->width())));

            dragHandle(*split, -150);
            moved = split->sizes().value(1);
            QVERIFY2(moved > side + 100, qPrintable(QStringLiteral("%1 -> %2").arg(side).arg(moved)));
        }
        // A new window (the next start) opens with the width the operator chose.
        lockscope::MainWindow again(catalog);
        again.resize(1440, 780);
        again.show();
        QVERIFY(QTest::qWaitForWindowExposed(&again));
        QSplitter* split = locksSplitter(again);
        QTRY_COMPARE(split->sizes().value(1), moved);
    }

    void waiters_next_to_name_and_one_click_sorts_the_most_first() {
        lockscope::CatalogStore catalog(dir_.filePath(QStringLiteral("catalog.sqlite")));
        lockscope::MainWindow window(catalog);
        window.resize(1440, 780);
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        QHeaderView* header = window.locksView().header();
        QCOMPARE(header->visualIndex(LocksModel::Name), 0);
        QCOMPARE(header->visualIndex(LocksModel::Waiters), 1);
        const QPoint waiters(header->sectionViewportPosition(LocksModel::Waiters) + header->sectionSize(LocksModel::Waiters) / 2,
                             header->height() / 2);
        QTest::mouseClick(header->viewport(), Qt::LeftButton, Qt::NoModifier, waiters);
        QCOMPARE(header->sortIndicatorSection(), static_cast<int>(LocksModel::Waiters));
        QCOMPARE(header->sortIndicatorOrder(), Qt::DescendingOrder);
        // The second click turns it around, as anywhere else.
        QTest::mouseClick(header->viewport(), Qt::LeftButton, Qt::NoModifier, waiters);
        QCOMPARE(header->sortIndicatorOrder(), Qt::AscendingOrder);
    }
};

QTEST_MAIN(TestFirstScreen)
#include "test_first_screen.moc"
