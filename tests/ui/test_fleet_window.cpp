// The window over several servers, offscreen against the test server: two sessions on two
// databases, each with a lock of its own. The Fleet tab lists both; the locks view shows the
// current server's locks only, and a double-click (activation) on the other server's Fleet row
// re-binds the views to it: its lock shows, the first one's is gone, the title says which server,
// and the Read-only action shows that server's own switch. A server not shown does not feed its
// locks model; shown, it has its current locks at once and the holds of while it was hidden.
#include <libpq-fe.h>

#include <QAction>
#include <QLabel>
#include <QAbstractButton>
#include <QListWidget>
#include <QMessageBox>
#include <QTimer>
#include <QApplication>
#include <QSortFilterProxyModel>
#include <QStandardPaths>
#include <QTableView>
#include <QTemporaryDir>
#include <QTreeView>
#include <QtTest>

#include <memory>
#include <string>

#include "actions/lock_controller.hpp"
#include "actions/read_only_switch.hpp"
#include "charts/chart_models.hpp"
#include "charts/timeline_model.hpp"
#include "fleet/fleet_model.hpp"
#include "fleet/fleet_panel.hpp"
#include "models/lock_tree_model.hpp"
#include "models/locks_model.hpp"
#include "pg_conn.hpp"
#include "pg_test_env.hpp"
#include "stores/catalog_store.hpp"
#include "stores/profile_store.hpp"
#include "widgets/connection_dialog.hpp"
#include "widgets/main_window.hpp"

namespace {

using Conn = pglock::test::PgConn;

bool shows(QTreeView& view, qint64 key) {
    QAbstractItemModel* m = view.model();
    for (int row = 0; row < m->rowCount(); ++row)
        if (m->index(row, lockscope::LocksModel::Key).data(lockscope::LocksModel::KeyRole).toLongLong() == key) return true;
    return false;
}

// Clicks Yes on the next message box (a modal box blocks in exec(): the answer comes from the
// event loop), setting `asked` when it asks about one held lock. Gives up after 5 s. Shared: the
// timer may outlive a test that failed before the box came.
void answerYes(const std::shared_ptr<bool>& asked, int attemptsLeft = 200) {
    QTimer::singleShot(25, [asked, attemptsLeft] {
        for (QWidget* w : QApplication::topLevelWidgets()) {
            if (auto* box = qobject_cast<QMessageBox*>(w); box && box->isVisible()) {
                *asked = box->text().contains(QStringLiteral("holds 1 lock"));
                box->button(QMessageBox::Yes)->click();
                return;
            }
        }
        if (attemptsLeft > 0) answerYes(asked, attemptsLeft - 1);
    });
}

// The session's latest poll result shows `key` held.
bool latestHolds(const lockscope::ServerSession& session, qint64 key) {
    const lockscope::PollResultPtr latest = session.latest();
    if (!latest || !latest->snapshot) return false;
    for (const auto& entry : latest->snapshot->locks)
        if (entry.key == key && !entry.holders.empty()) return true;
    return false;
}

// The timeline's lane of `key` (nullptr when it has none).
const lockscope::charts::TimelineModel::Lane* laneOf(lockscope::ServerSession& session, qint64 key) {
    const lockscope::charts::TimelineModel& timeline = *session.chartModels().timelineModel();
    for (int row = 0; row < timeline.laneCount(); ++row)
        if (timeline.laneAt(row).key == key) return &timeline.laneAt(row);
    return nullptr;
}

}  // namespace

class TestFleetWindow : public QObject {
    Q_OBJECT
    std::string dsn_;
    std::string db_;
    QTemporaryDir dir_;

private slots:
    void initTestCase() {
        auto dsn = pglock::test::test_dsn();
        QVERIFY2(dsn.has_value(), "no test server");
        dsn_ = *dsn;
        QVERIFY2(dsn_.find('=') != std::string::npos, "needs a keyword=value DSN to name a second database");
        QStandardPaths::setTestModeEnabled(true);
        db_ = "pglock_fleetwin_" + std::to_string(QCoreApplication::applicationPid());
        Conn admin(dsn_);
        QVERIFY(admin.ok());
        PQclear(PQexec(admin.c, ("DROP DATABASE IF EXISTS " + db_).c_str()));
        PGresult* r = PQexec(admin.c, ("CREATE DATABASE " + db_).c_str());
        const bool created = PQresultStatus(r) == PGRES_COMMAND_OK;
        PQclear(r);
        QVERIFY2(created, PQerrorMessage(admin.c));
    }

    void cleanupTestCase() {
        if (db_.empty()) return;
        Conn admin(dsn_);
        PQclear(PQexec(admin.c, ("DROP DATABASE IF EXISTS " + db_ + " WITH (FORCE)").c_str()));
    }

    void the_views_follow_the_server_picked_in_the_fleet_tab() {
        const std::string other = dsn_ + " dbname=" + db_;
        const qint64 keyA = 918273645001, keyB = 918273645002;
        Conn holderA(dsn_), holderB(other);
        QVERIFY(holderA.ok() && holderB.ok());
        holderA.one("SELECT pg_advisory_lock(" + std::to_string(keyA) + ")");
        holderB.one("SELECT pg_advisory_lock(" + std::to_string(keyB) + ")");

        lockscope::CatalogStore catalog(dir_.filePath(QStringLiteral("catalog.sqlite")));
        lockscope::MainWindow window(catalog);
        window.show();
        lockscope::ServerSession& a = window.openServer(QString::fromStdString(dsn_), {}, QStringLiteral("first"));
        lockscope::ServerSession& b = window.openServer(QString::fromStdString(other), {}, QStringLiteral("second"), /*readOnly=*/true);
        QCOMPARE(window.sessions().size(), 2);
        QCOMPARE(&window.currentSession(), &a);  // the first server is the one shown
        for (lockscope::ServerSession* s : window.sessions()) s->poller().setInterval(std::chrono::milliseconds(250));

        QTreeView& locks = window.locksView();
        QTRY_VERIFY_WITH_TIMEOUT(shows(locks, keyA), 10000);
        QVERIFY2(!shows(locks, keyB), "the first server's view shows the second server's lock");
        QVERIFY(window.showTab(QStringLiteral("fleet")));
        lockscope::FleetModel& fleet = window.fleetModel();
        QCOMPARE(fleet.rowCount(), 2);
        QTRY_VERIFY_WITH_TIMEOUT(fleet.state(fleet.rowOf(&a)) == lockscope::FleetModel::ServerState::primary &&
                                     fleet.state(fleet.rowOf(&b)) == lockscope::FleetModel::ServerState::primary,
                                 10000);
        auto* readOnly = window.findChild<QAction*>(QStringLiteral("readOnlyAction"));
        QVERIFY(readOnly);
        QVERIFY(!readOnly->isChecked());

        // Activate the second server's row, as a double-click does.
        QTableView& table = window.fleetPanel().view();
        const auto* proxy = qobject_cast<const QSortFilterProxyModel*>(table.model());
        QVERIFY(proxy);
        const QModelIndex rowB = proxy->mapFromSource(fleet.index(fleet.rowOf(&b), lockscope::FleetModel::Server));
        emit table.activated(rowB);
        QCOMPARE(&window.currentSession(), &b);
        QVERIFY2(window.windowTitle().contains(QStringLiteral("second")), qPrintable(window.windowTitle()));
        QTRY_VERIFY_WITH_TIMEOUT(shows(locks, keyB), 10000);
        QVERIFY2(!shows(locks, keyA), "after the switch the view still shows the first server's lock");
        QVERIFY2(readOnly->isChecked(), "the Read-only action does not show the second server's own switch");

        // Read-only stays each server's: turned off here, the first server is untouched.
        readOnly->trigger();
        QVERIFY(!b.readOnlySwitch().on());
        b.readOnlySwitch().set(true);
        window.setCurrentSession(&a);
        QVERIFY(!readOnly->isChecked());
        QVERIFY(b.readOnlySwitch().on());
        QTRY_VERIFY_WITH_TIMEOUT(shows(locks, keyA) && !shows(locks, keyB), 10000);

        // A lock taken by hand on the server not shown is let go on quitting too.
        b.readOnlySwitch().set(false);
        const QByteArray name = "fleet.window-quit";
        QVERIFY(b.lockController().take(name, lockscope::TakeMode::Try, false).accepted());
        QTRY_COMPARE_WITH_TIMEOUT(b.lockController().holdingCount(), 1, 10000);
        QCOMPARE(&window.currentSession(), &a);
        const auto asked = std::make_shared<bool>(false);
        answerYes(asked);
        QVERIFY(window.close());
        QVERIFY2(*asked, "quitting did not ask about the lock held on the other server");
        QCOMPARE(b.lockController().holdingCount(), 0);
    }

    // Each server has its own Tree tab and worst-root line; the status bar shows the current
    // server's line only, never a hidden server's pile-up as if it were this one's.
    void the_worst_root_line_is_the_current_servers() {
        const std::string other = dsn_ + " dbname=" + db_;
        const qint64 key = 918273645003;
        Conn holder(other), waiter(other);
        QVERIFY(holder.ok() && waiter.ok());
        const std::string holderPid = holder.one("SELECT pg_backend_pid()");
        holder.one("SELECT pg_advisory_lock(" + std::to_string(key) + ")");
        QVERIFY(PQsendQuery(waiter.c, ("SELECT pg_advisory_lock(" + std::to_string(key) + ")").c_str()));

        lockscope::CatalogStore catalog(dir_.filePath(QStringLiteral("catalog-tree.sqlite")));
        lockscope::MainWindow window(catalog);
        window.show();
        lockscope::ServerSession& a = window.openServer(QString::fromStdString(dsn_), {}, QStringLiteral("quiet"));
        lockscope::ServerSession& b = window.openServer(QString::fromStdString(other), {}, QStringLiteral("piled-up"), true);
        for (lockscope::ServerSession* s : window.sessions()) s->poller().setInterval(std::chrono::milliseconds(250));
        QCOMPARE(&window.currentSession(), &a);
        const auto visibleWorst = [&window] {
            QStringList shown;
            for (QLabel* label : window.findChildren<QLabel*>(QStringLiteral("worstRootLabel")))
                if (label->isVisible()) shown << label->text();
            return shown;
        };
        // The hidden server's tree has its root; the window shows none of it.
        QTRY_VERIFY_WITH_TIMEOUT(b.lockTreeModel().worstRootText().contains(QString::fromStdString(holderPid)), 10000);
        QTRY_VERIFY_WITH_TIMEOUT(a.latest() != nullptr, 10000);
        QTest::qWait(600);  // a few more polls of both
        QVERIFY2(visibleWorst().isEmpty(), qPrintable(visibleWorst().join(QStringLiteral(" | "))));

        window.setCurrentSession(&b);
        QTRY_COMPARE_WITH_TIMEOUT(visibleWorst().size(), 1, 5000);
        QVERIFY2(visibleWorst().constFirst().contains(QString::fromStdString(holderPid)), qPrintable(visibleWorst().constFirst()));

        window.setCurrentSession(&a);
        QTRY_VERIFY_WITH_TIMEOUT(visibleWorst().isEmpty(), 5000);
        PQrequestCancel(waiter.c);
    }

    // 50 servers in one window: only the one shown feeds its locks model each poll. A
    // hidden one catches up when shown: its current locks at once (its poller is paused, so no
    // poll after the switch can be what shows them), and its timeline has the hold that started
    // and ended while it was hidden.
    void a_hidden_server_shows_its_locks_and_holds_at_once_when_shown() {
        const std::string other = dsn_ + " dbname=" + db_;
        const qint64 before = 918273645101, whileHidden = 918273645102, now = 918273645103;
        Conn holder(other);
        QVERIFY(holder.ok());
        holder.one("SELECT pg_advisory_lock(" + std::to_string(before) + ")");

        lockscope::CatalogStore catalog(dir_.filePath(QStringLiteral("catalog-hidden.sqlite")));
        lockscope::MainWindow window(catalog);
        window.show();
        lockscope::ServerSession& a = window.openServer(QString::fromStdString(dsn_), {}, QStringLiteral("shown"));
        lockscope::ServerSession& b = window.openServer(QString::fromStdString(other), {}, QStringLiteral("hidden"));
        QCOMPARE(&window.currentSession(), &a);
        for (lockscope::ServerSession* s : window.sessions()) s->poller().setInterval(std::chrono::milliseconds(250));
        QTRY_VERIFY_WITH_TIMEOUT(latestHolds(b, before), 10000);
        QVERIFY2(!b.shown() && a.shown(), "only the current server is shown");
        QVERIFY2(b.locksModel().rowCount() == 0, "a hidden server's locks model is fed every poll");

        // A hold that starts and ends while the server is hidden, then one that is still held.
        holder.one("SELECT pg_advisory_lock(" + std::to_string(whileHidden) + ")");
        QTRY_VERIFY_WITH_TIMEOUT(latestHolds(b, whileHidden), 10000);
        holder.one("SELECT pg_advisory_unlock(" + std::to_string(whileHidden) + ")");
        QTRY_VERIFY_WITH_TIMEOUT(!latestHolds(b, whileHidden), 10000);
        holder.one("SELECT pg_advisory_lock(" + std::to_string(now) + ")");
        QTRY_VERIFY_WITH_TIMEOUT(latestHolds(b, now), 10000);
        b.poller().setPaused(true);
        const lockscope::PollResultPtr last = b.latest();
        QVERIFY(last);
        QTest::qWait(300);  // a poll already under way when paused lands now, not after the switch
        const lockscope::PollResultPtr shownResult = b.latest();

        window.setCurrentSession(&b);
        QTreeView& locks = window.locksView();
        QVERIFY2(shows(locks, before) && shows(locks, now), "the server shown does not show its current locks at once");
        QVERIFY(!shows(locks, whileHidden));
        QVERIFY2(b.latest() == shownResult, "a poll arrived after the switch: the check above proves nothing");
        // The timeline took every result while hidden (fed in later event-loop turns).
        QTRY_VERIFY_WITH_TIMEOUT(laneOf(b, whileHidden) != nullptr && laneOf(b, now) != nullptr, 2000);
        const auto* ended = laneOf(b, whileHidden);
        QVERIFY2(ended->finished.size() == 1 && ended->open.empty(), "the hold that ended while hidden is not on the timeline");
        QCOMPARE(laneOf(b, before)->open.size(), std::size_t{1});
        QVERIFY2(!a.shown(), "the server no longer shown still counts as shown");
        b.poller().setPaused(false);
    }

    // The connection dialog lists the saved profiles with checkboxes: the checked ones (but the
    // one being connected) are opened as servers of their own.
    void the_connection_dialog_opens_the_checked_profiles_too() {
        lockscope::ProfileStore store(dir_.filePath(QStringLiteral("profiles.ini")));
        for (const char* name : {"orders-eu", "billing", "inventory"}) {
            lockscope::ConnectionProfile p;
            p.name = QString::fromLatin1(name);
            p.conninfo = QStringLiteral("host=127.0.0.1 dbname=%1").arg(p.name);
            store.save(p);
        }
        lockscope::ConnectionDialog dialog(store);
        auto* list = dialog.findChild<QListWidget*>(QStringLiteral("alsoOpenProfiles"));
        QVERIFY(list);
        QCOMPARE(list->count(), 3);
        QVERIFY(dialog.alsoOpen().isEmpty());
        for (int i = 0; i < list->count(); ++i)
            if (list->item(i)->text() != QStringLiteral("billing")) list->item(i)->setCheckState(Qt::Checked);
        QStringList chosen = dialog.alsoOpen();
        chosen.sort();
        QCOMPARE(chosen, (QStringList{QStringLiteral("inventory"), QStringLiteral("orders-eu")}));
    }
};

QTEST_MAIN(TestFleetWindow)
#include "test_fleet_window.moc"
