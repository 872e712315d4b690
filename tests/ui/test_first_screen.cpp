// The first screen at 1440×780, offscreen, against the real server: the lock list gets the room
// and the side panel keeps the width it was given; Waiters sits next to Name and one click sorts
// the most waiters first.
#include <QApplication>
#include <cmath>
#include <set>
#include <QHeaderView>
#include <QLabel>
#include <QMouseEvent>
#include <QPushButton>
#include <QRegularExpression>
#include <QAction>
#include <QLineEdit>
#include <QMessageBox>
#include <QStatusBar>
#include <QTabWidget>
#include <QTimer>
#include <QSettings>
#include <QSplitter>
#include <QTemporaryDir>
#include <QTreeView>
#include <QtTest>

#include "models/lock_summary.hpp"
#include "models/locks_model.hpp"
#include "pg_conn.hpp"
#include "pglock/key.hpp"
#include "poller/poller.hpp"
#include "poller_wait.hpp"
#include "widgets/shortcuts_dialog.hpp"
#include "when_shown.hpp"
#include "widgets/summary_strip.hpp"
#include "widgets/settings_dialog.hpp"
#include "theme/app_palette.hpp"
#include <QComboBox>
#include <QDoubleSpinBox>
#include "widgets/take_lock_dialog.hpp"
#include "actions/read_only_switch.hpp"
#include "pg_test_env.hpp"
#include "stores/catalog_store.hpp"
#include "widgets/main_window.hpp"

using lockscope::LocksModel;
using Conn = pglock::test::PgConn;
using namespace pglock::monitor;

namespace {

constexpr auto kSidePanelKey = "mainWindow/sidePanel";

// The result with only the locks of `keys`: other tests may hold locks on the same server.
lockscope::PollResult onlyKeys(const lockscope::PollResult& r, const std::set<std::int64_t>& keys) {
    lockscope::PollResult out = r;
    auto snap = std::make_shared<Snapshot>(*r.snapshot);
    std::erase_if(snap->locks, [&](const LockEntry& e) { return e.form != KeyForm::bigint || !keys.contains(e.key); });
    out.snapshot = snap;
    return out;
}

const LockEntry* lockOf(const Snapshot& s, std::int64_t key) {
    for (const auto& e : s.locks)
        if (e.form == KeyForm::bigint && e.key == key) return &e;
    return nullptr;
}

// Three sessions on the test server: `held` holds a session lock another session waits for
// (with a snapshot, so it pins xmin), `idle` holds a transaction lock and sits idle in it.
struct Contention {
    std::int64_t held, idleKey;
    Conn holder, idle, waiter;
    Contention(const std::string& dsn, const std::string& tag)
        : held(pglock::key_of("first-screen.held." + tag)), idleKey(pglock::key_of("first-screen.idle." + tag)),
          holder(dsn), idle(dsn), waiter(dsn) {}
    bool start() {
        if (!holder.ok() || !idle.ok() || !waiter.ok()) return false;
        holder.one("SELECT pg_advisory_lock(" + std::to_string(held) + ")");
        idle.one("BEGIN");
        idle.one("SELECT pg_advisory_xact_lock(" + std::to_string(idleKey) + ")");
        return PQsendQuery(waiter.c, ("SELECT pg_advisory_lock(" + std::to_string(held) + ")").c_str()) == 1;
    }
    ~Contention() {
        holder.one("SELECT pg_advisory_unlock_all()");  // the waiter gets it, then its session ends
        idle.one("ROLLBACK");
    }
};

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

// The top-level row of the lock with `key` in the window's view, or an invalid index.
QModelIndex rowOfKey(QTreeView& view, std::int64_t key) {
    for (int row = 0; row < view.model()->rowCount(); ++row) {
        const QModelIndex i = view.model()->index(row, 0);
        if (i.data(LocksModel::KeyRole).toLongLong() == key) return i;
    }
    return {};
}

}  // namespace

class TestFirstScreen : public QObject {
    Q_OBJECT
    std::string dsn_;
    QTemporaryDir dir_;

    // Shows `window` at the first screen's size, polling the test server every 250 ms, and waits
    // (up to 10 s) until its summary strip names a longest wait whose lock has a row.
    bool showUntilLongestWait(lockscope::MainWindow& window) {
        window.resize(1440, 780);
        window.show();
        window.poller().setInterval(std::chrono::milliseconds(250));
        window.connectTo(QString::fromStdString(dsn_));
        return QTest::qWaitFor(
            [&] {
                const auto& longest = window.summaryStrip().summary().longestWait;
                return longest && window.locksModel().indexOfLock(longest->lock).isValid();
            },
            10000);
    }

private slots:
    void initTestCase() {
        auto dsn = pglock::test::test_dsn();
        QVERIFY2(dsn.has_value(), "no test server");
        dsn_ = *dsn;
        QVERIFY(dir_.isValid());
        QStandardPaths::setTestModeEnabled(true);  // QSettings go to a scratch place
        QSettings().remove(QString::fromLatin1(kSidePanelKey));
        QSettings().remove(QStringLiteral("settings"));
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

    // The summary from a real poll: one lock with a waiter pinning xmin, one holder idle in
    // transaction, the longest wait naming the contended lock.
    void summary_of_a_real_poll() {
        Contention c(dsn_, "summary");
        QVERIFY(c.start());
        lockscope::Poller poller;
        poller.setInterval(std::chrono::milliseconds(250));
        poller.start(QString::fromStdString(dsn_));
        // Long enough that every threshold below (0.5 s) is passed.
        const auto result = pglock::test::waitForResult(
            this, poller,
            [&](const lockscope::PollResultPtr& r) {
                const LockEntry* e = lockOf(*r->snapshot, c.held);
                return e && !e->waiters.empty() && e->waiters.front().wait_start &&
                       r->snapshot->server_now - *e->waiters.front().wait_start > 1.0 && lockOf(*r->snapshot, c.idleKey);
            },
            std::chrono::seconds(10));
        QVERIFY2(result, "no poll saw the waiter wait for a second");
        const lockscope::SummaryThresholds low{0.5, 0.5, 0.5, 0.5};
        const auto mine = onlyKeys(*result, {c.held, c.idleKey});
        const lockscope::LockSummary summary = lockscope::summarize(mine, low);
        QCOMPARE(summary.locksHeld, 2);
        QCOMPARE(summary.sessionsWaiting, 1);
        QVERIFY(summary.longestWait.has_value());
        QCOMPARE(pglock::key_of(summary.longestWait->lock.tag), c.held);
        QCOMPARE(summary.longestWait->pid, PQbackendPID(c.waiter.c));
        QVERIFY2(summary.longestWait->seconds > 1.0, qPrintable(QString::number(summary.longestWait->seconds)));
        QCOMPARE(summary.longWaits, 1);
        QCOMPARE(summary.idleInTransactionHolders, 1);
        QCOMPARE(summary.xminPins, 1);
        QCOMPARE(summary.longHolds, 2);
        // The same poll under the default thresholds: nothing over them yet.
        const lockscope::LockSummary calm = lockscope::summarize(mine, lockscope::SummaryThresholds{});
        QCOMPARE(calm.longWaits, 0);
        QCOMPARE(calm.idleInTransactionHolders, 0);
        QCOMPARE(calm.longHolds, 0);
    }

    // Between polls the waiter's row counts on with the one-second tick; the strip's longest wait
    // says the same time, not the time of the last poll.
    void summary_strip_counts_on_with_the_rows() {
        Contention c(dsn_, "tick");
        QVERIFY(c.start());
        lockscope::CatalogStore catalog(dir_.filePath(QStringLiteral("catalog.sqlite")));
        lockscope::MainWindow window(catalog);
        QVERIFY2(showUntilLongestWait(window), "no longest wait with a row in 10 s");
        auto& strip = window.summaryStrip();
        window.poller().setPaused(true);  // no poll from here on: only the tick moves the times
        QTest::qWait(300);                // a poll already under way lands
        const auto wait = *strip.summary().longestWait;
        const QModelIndex lockRow = window.locksModel().indexOfLock(wait.lock);
        QModelIndex waiterCell;
        for (int r = 0; r < window.locksModel().rowCount(lockRow); ++r) {
            const QModelIndex i = window.locksModel().index(r, LocksModel::HeldFor, lockRow);
            if (i.data(LocksModel::PidsRole).value<QList<int>>() == QList<int>{wait.pid}) waiterCell = i;
        }
        QVERIFY(waiterCell.isValid());
        auto* button = strip.findChild<QPushButton*>(QStringLiteral("summaryLongestWait"));
        QVERIFY(button);
        // The seconds in "waiting 5.1s", "waiting 37ms" or "Longest wait: name, 5.1s (pid 7)".
        const auto seconds = [](const QString& text) {
            const QRegularExpressionMatch m = QRegularExpression(QStringLiteral("(\\d+(?:\\.\\d)?)(ms|s)\\b")).match(text);
            if (!m.hasMatch()) return -1.0;
            return m.captured(1).toDouble() / (m.captured(2) == QLatin1String("ms") ? 1000.0 : 1.0);
        };
        const double before = seconds(button->text());
        QVERIFY2(before >= 0, qPrintable(button->text()));
        // What the two show right after a tick, when the view repaints the row: the row's cell
        // reads the clock whenever it is asked, so between ticks it is ahead of anything drawn.
        QString stripText, rowText;
        QObject::connect(&window.locksModel(), &LocksModel::ticked, &window, [&] {
            stripText = button->text();
            rowText = waiterCell.data().toString();
        });
        QTest::qWait(2600);  // two ticks or more
        QVERIFY2(!rowText.isEmpty(), "no tick in 2.6 s");
        const double strip_now = seconds(stripText);
        const double row_now = seconds(rowText);
        QVERIFY2(strip_now >= before + 1.5, qPrintable(QStringLiteral("strip %1 -> %2").arg(before).arg(stripText)));
        QVERIFY2(std::abs(strip_now - row_now) <= 0.3,
                 qPrintable(QStringLiteral("strip says %1, the row %2").arg(stripText, rowText)));
    }

    // In the window: the strip counts the waiter, and a click on the longest wait selects its lock.
    void summary_strip_selects_the_longest_wait() {
        Contention c(dsn_, "strip");
        QVERIFY(c.start());
        lockscope::CatalogStore catalog(dir_.filePath(QStringLiteral("catalog.sqlite")));
        lockscope::MainWindow window(catalog);
        QVERIFY2(showUntilLongestWait(window), "no longest wait with a row in 10 s");
        auto& strip = window.summaryStrip();
        // Fitted to the rows, every column is still in view (Held for last). The fit runs in the
        // event-loop turn after the first rows arrive, so it is waited for (with a deadline).
        QHeaderView* header = window.locksView().header();
        QTRY_VERIFY2_WITH_TIMEOUT(header->length() <= window.locksView().viewport()->width(),
                                  qPrintable(QStringLiteral("columns %1 px, view %2 px")
                                                 .arg(header->length())
                                                 .arg(window.locksView().viewport()->width())),
                                  5000);
        auto* waiting = strip.findChild<QLabel*>(QStringLiteral("summaryWaiting"));
        QVERIFY(waiting && waiting->text().contains(QStringLiteral("waiting")));
        const LockId longest = strip.summary().longestWait->lock;
        auto* button = strip.findChild<QPushButton*>(QStringLiteral("summaryLongestWait"));
        QVERIFY(button && button->isEnabled());
        QVERIFY2(button->text().contains(window.locksModel().indexOfLock(longest, LocksModel::Name).data().toString()), qPrintable(button->text()));
        button->click();
        const QModelIndex current = window.locksView().currentIndex();
        QVERIFY(current.isValid());
        QCOMPARE(current.data(LocksModel::LockIdRole).value<LockId>(), longest);
        // The row with waiters says so in its Waiters cell: a tint and an icon, and its count.
        const QModelIndex waitersCell = current.siblingAtColumn(LocksModel::Waiters);
        QVERIFY(waitersCell.data(Qt::BackgroundRole).value<QColor>().isValid());
        QVERIFY(!waitersCell.data(Qt::DecorationRole).value<QIcon>().isNull());
        QVERIFY(!waitersCell.data().toString().isEmpty());
    }

    // Every standard key does what the Help dialog says, and the dialog lists them from the actions.
    void keyboard_shortcuts_trigger_their_actions() {
        Contention c(dsn_, "keys");
        QVERIFY(c.start());
        lockscope::CatalogStore catalog(dir_.filePath(QStringLiteral("catalog.sqlite")));
        lockscope::MainWindow window(catalog);
        window.resize(1440, 780);
        window.show();
        QApplication::setActiveWindow(&window);
        QVERIFY(QTest::qWaitForWindowActive(&window));
        window.poller().setInterval(std::chrono::seconds(60));  // only F5 polls again
        QSignalSpy polls(&window.poller(), &lockscope::Poller::resultReady);
        window.connectTo(QString::fromStdString(dsn_));
        QTreeView& view = window.locksView();
        QTRY_VERIFY_WITH_TIMEOUT(rowOfKey(view, c.held).isValid(), 10000);

        // F5: a poll now, not in a minute.
        const int before = static_cast<int>(polls.count());
        QTest::keyClick(&window, Qt::Key_F5);
        QTRY_VERIFY_WITH_TIMEOUT(polls.count() > before, 5000);

        // Ctrl+F: the filter field, text selected.
        QTest::keyClick(&window, Qt::Key_F, Qt::ControlModifier);
        auto* filter = window.findChild<QLineEdit*>(QStringLiteral("locksFilter"));
        QVERIFY(filter);
        QTRY_VERIFY(filter->hasFocus());

        // Ctrl+2 .. Ctrl+1: the main tabs.
        auto* tabs = window.findChild<QTabWidget*>(QStringLiteral("mainTabs"));
        QVERIFY(tabs);
        QTest::keyClick(&window, Qt::Key_2, Qt::ControlModifier);
        QCOMPARE(tabs->currentIndex(), 1);
        QTest::keyClick(&window, Qt::Key_1, Qt::ControlModifier);
        QCOMPARE(tabs->currentIndex(), 0);

        // Ctrl+T: the take-lock dialog (cancelled here).
        bool dialogShown = false;
        QTimer::singleShot(300, [&dialogShown] {
            for (QWidget* w : QApplication::topLevelWidgets()) {
                if (auto* d = qobject_cast<lockscope::TakeLockDialog*>(w); d && d->isVisible()) {
                    dialogShown = true;
                    d->reject();
                }
            }
        });
        QTest::keyClick(&window, Qt::Key_T, Qt::ControlModifier);
        QTRY_VERIFY(dialogShown);
        window.readOnlySwitch().set(true);
        QApplication::setActiveWindow(&window);
        QVERIFY(QTest::qWaitForWindowActive(&window));

        // Del on the holder's row: refused in read-only mode, asked for otherwise (and cancelled).
        view.setFocus();
        view.setCurrentIndex(rowOfKey(view, c.held));
        QTest::keyClick(&view, Qt::Key_Delete);
        QVERIFY2(window.statusBar()->currentMessage().contains(QStringLiteral("turn it off to terminate")), qPrintable(window.statusBar()->currentMessage()));
        window.readOnlySwitch().set(false);
        QString asked;
        when_shown::whenShown<QMessageBox>([&asked](QMessageBox* box) {
            asked = box->text();
            box->button(QMessageBox::Cancel)->click();
        });
        QTest::keyClick(&view, Qt::Key_Delete);
        QVERIFY2(asked.contains(QStringLiteral("Terminate session of PID %1").arg(PQbackendPID(c.holder.c))), qPrintable(asked));
        QVERIFY(!c.holder.one("SELECT 1").empty());  // cancelled: the holder's session is still there

        // The Help dialog's rows come from the actions: every key above is in it.
        QStringList keys;
        for (const auto& [what, key] : lockscope::shortcutRows(window)) keys << key;
        for (const char* k : {"Ctrl+F", "F5", "Ctrl+T", "Del", "Ctrl+1", "Ctrl+4"})
            QVERIFY2(keys.contains(QString::fromLatin1(k)), qPrintable(keys.join(QStringLiteral(" | "))));
        QVERIFY(!view.accessibleName().isEmpty());
    }

    // Settings: the dialog saves what it shows, applies it at once, and the next window starts with it.
    void settings_are_applied_live_and_kept() {
        qunsetenv("LOCKSCOPE_THEME");
        lockscope::CatalogStore catalog(dir_.filePath(QStringLiteral("catalog.sqlite")));
        {
            lockscope::MainWindow window(catalog);
            window.show();
            QCOMPARE(window.locksModel().idleInTransactionThreshold(), 30.0);  // the default
            bool edited = false;
            QTimer::singleShot(100, [&edited] {
                for (QWidget* w : QApplication::topLevelWidgets()) {
                    auto* d = qobject_cast<lockscope::SettingsDialog*>(w);
                    if (!d || !d->isVisible()) continue;
                    d->findChild<QDoubleSpinBox*>(QStringLiteral("settingsLongWait"))->setValue(2);
                    d->findChild<QDoubleSpinBox*>(QStringLiteral("settingsLongHold"))->setValue(90);
                    d->findChild<QDoubleSpinBox*>(QStringLiteral("settingsIdleInTransaction"))->setValue(12);
                    d->findChild<QDoubleSpinBox*>(QStringLiteral("settingsPollInterval"))->setValue(2.5);
                    auto* theme = d->findChild<QComboBox*>(QStringLiteral("settingsTheme"));
                    theme->setCurrentIndex(theme->findData(QStringLiteral("dark")));
                    edited = true;
                    d->accept();
                }
            });
            window.openSettings();
            QVERIFY(edited);
            QCOMPARE(window.locksModel().longWaitThreshold(), 2.0);
            QCOMPARE(window.locksModel().longHoldThreshold(), 90.0);
            QCOMPARE(window.locksModel().idleInTransactionThreshold(), 12.0);
            QCOMPARE(window.findChild<QDoubleSpinBox*>(QStringLiteral("pollInterval"))->value(), 2.5);
            QVERIFY(lockscope::theme::isDark());
        }
        lockscope::MainWindow next(catalog);
        QCOMPARE(next.locksModel().idleInTransactionThreshold(), 12.0);
        QCOMPARE(next.findChild<QDoubleSpinBox*>(QStringLiteral("pollInterval"))->value(), 2.5);
        // Back to the defaults for whatever runs next.
        lockscope::theme::apply(lockscope::theme::Mode::system);
        QVERIFY(!lockscope::theme::isDark());
        QSettings().remove(QStringLiteral("settings"));
    }
};

QTEST_MAIN(TestFirstScreen)
#include "test_first_screen.moc"
