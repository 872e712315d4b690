// A GUI smoke test, offscreen, against the real server: the window shows a held lock under its
// catalog name with the holder's pid, resolves names and keys, and survives a server restart:
// "disconnected" shown, reconnected by itself, no duplicate rows, and the history recorded
// before the restart still there next to what came after.
#include <QAbstractButton>
#include <QAction>
#include <QApplication>
#include <QLabel>
#include <QMessageBox>
#include <QTimer>
#include <QLineEdit>
#include <QTemporaryDir>
#include <QTreeView>
#include <QtTest>

#include <libpq-fe.h>

#include <cstdlib>

#include "actions/lock_controller.hpp"
#include "actions/read_only_switch.hpp"
#include "history/history_recorder.hpp"
#include "history/history_store.hpp"
#include "models/locks_model.hpp"
#include "pg_conn.hpp"
#include "pg_test_env.hpp"
#include "pglock/key.hpp"
#include "stores/app_settings.hpp"
#include "stores/catalog_store.hpp"
#include "widgets/main_window.hpp"
#include "widgets/resolver_panel.hpp"
#include "widgets/take_lock_dialog.hpp"
#include "when_shown.hpp"

namespace {

using Conn = pglock::test::PgConn;

// The history rows of hold (key, pid) in the window's history file, read as the history tab does
// (a read-only store of its own).
int historyHolds(const QString& path, qint64 key, int pid) {
    lockscope::history::HistoryStore store(path, lockscope::history::HistoryStore::Mode::readOnly);
    if (!store.isOpen()) return -1;
    const auto result = store.query({.kind = lockscope::history::Kind::hold, .pid = pid});
    int n = 0;
    for (const auto& r : result.rows) n += r.key == key ? 1 : 0;
    return n;
}

// Rows of the view (through the proxy) whose Key column shows `key`.
QList<QModelIndex> rowsWithKey(QTreeView& view, qint64 key) {
    QList<QModelIndex> out;
    QAbstractItemModel* m = view.model();
    for (int row = 0; row < m->rowCount(); ++row) {
        const QModelIndex i = m->index(row, lockscope::LocksModel::Key);
        if (i.data(lockscope::LocksModel::KeyRole).toLongLong() == key) out << i;
    }
    return out;
}

using when_shown::whenShown;

}  // namespace

class TestMainWindow : public QObject {
    Q_OBJECT
    std::string dsn_;
    QTemporaryDir dir_;

private slots:
    void initTestCase() {
        auto dsn = pglock::test::test_dsn();
        QVERIFY2(dsn.has_value(), "no test server");
        dsn_ = *dsn;
        QVERIFY(dir_.isValid());
        QStandardPaths::setTestModeEnabled(true);  // QSettings profiles go to a scratch place
    }

    void shows_held_lock_by_name_and_survives_restart() {
        lockscope::CatalogStore catalog(dir_.filePath(QStringLiteral("catalog.sqlite")));
        QVERIFY(catalog.isOpen());
        const QByteArray name = "orders.gui-smoke";
        QCOMPARE(catalog.add(name), lockscope::CatalogStore::AddResult::added);
        const qint64 key = pglock::key_of(std::string_view(name.constData(), static_cast<std::size_t>(name.size())));

        Conn holder(dsn_);
        QVERIFY(holder.ok());
        holder.one("SELECT pg_advisory_lock(" + std::to_string(key) + ")");
        const int pid = std::atoi(holder.one("SELECT pg_backend_pid()").c_str());

        lockscope::MainWindow window(catalog);
        window.show();
        window.poller().setInterval(std::chrono::milliseconds(250));
        window.connectTo(QString::fromStdString(dsn_));
        QTreeView& view = window.locksView();
        QTRY_COMPARE_WITH_TIMEOUT(rowsWithKey(view, key).size(), 1, 10000);
        const QModelIndex keyCell = rowsWithKey(view, key).first();
        // The catalog is read on its own worker: its names come in when it is read, poll or not.
        QTRY_COMPARE_WITH_TIMEOUT(keyCell.siblingAtColumn(lockscope::LocksModel::Name).data().toString(), QString::fromUtf8(name),
                                  10000);
        QVERIFY(keyCell.siblingAtColumn(lockscope::LocksModel::Holders).data().toString().contains(QString::number(pid)));

        // The resolver: the name gives the key and says who holds it now.
        window.resolver().setText(QString::fromUtf8(name));
        QCOMPARE(window.resolver().currentKey(), std::optional<qint64>(key));
        auto* live = window.findChild<QLabel*>(QStringLiteral("resolverLive"));
        QVERIFY(live);
        QTRY_VERIFY_WITH_TIMEOUT(live->text().contains(QString::number(pid)), 5000);
        // A key typed as a classid/objid pair finds the catalog name.
        const auto tag = pglock::tag_of(key);
        window.resolver().setText(QStringLiteral("%1/%2").arg(tag.classid).arg(tag.objid));
        auto* names = window.findChild<QLabel*>(QStringLiteral("resolverNames"));
        QVERIFY(names && names->text().contains(QString::fromUtf8(name)));
        window.resolver().setText(QStringLiteral("99999999999999999999"));
        auto* error = window.findChild<QLabel*>(QStringLiteral("resolverError"));
        QVERIFY(error);
        QVERIFY2(!error->text().isEmpty(), "an out-of-range key got no inline message");
        QVERIFY(!window.resolver().currentKey().has_value());

        const auto dir = pglock::test::private_cluster_dir();
        if (!dir) QSKIP("PGLOCK_TEST_DSN is set: not restarting someone else's server");
        auto* state = window.findChild<QLabel*>(QStringLiteral("stateLabel"));
        QVERIFY(state);
        // A hold that ends before the restart, recorded in the history.
        const qint64 keyBefore = pglock::key_of("orders.gui-smoke.before-restart");
        holder.one("SELECT pg_advisory_lock(" + std::to_string(keyBefore) + ")");
        QTRY_COMPARE_WITH_TIMEOUT(rowsWithKey(view, keyBefore).size(), 1, 10000);
        holder.one("SELECT pg_advisory_unlock(" + std::to_string(keyBefore) + ")");
        const QString historyPath = window.historyRecorder().path();
        QVERIFY(!historyPath.isEmpty());
        QTRY_COMPARE_WITH_TIMEOUT(historyHolds(historyPath, keyBefore, pid), 1, 10000);

        const std::string cmd = pglock::test::cluster_script() + " restart " + *dir;
        QCOMPARE(std::system(cmd.c_str()), 0);
        QTRY_VERIFY_WITH_TIMEOUT(state->text().startsWith(QStringLiteral("disconnected")), 10000);

        Conn again(dsn_);
        QVERIFY(again.ok());
        again.one("SELECT pg_advisory_lock(" + std::to_string(key) + ")");
        QTRY_VERIFY_WITH_TIMEOUT(state->text().startsWith(QStringLiteral("connected")), 20000);
        const int newPid = std::atoi(again.one("SELECT pg_backend_pid()").c_str());
        QTRY_VERIFY_WITH_TIMEOUT(rowsWithKey(view, key).size() == 1 &&
                                     rowsWithKey(view, key).first().siblingAtColumn(lockscope::LocksModel::Holders)
                                         .data().toString().contains(QString::number(newPid)),
                                 10000);
        QCOMPARE(rowsWithKey(view, key).size(), 1);  // no duplicate row after the reconnect
        QVERIFY(window.isVisible());

        // History: the hold cut by the restart was recorded once (ended at the last poll that saw
        // it), the hold from before the restart is still there, and a hold after it is added.
        QTRY_COMPARE_WITH_TIMEOUT(historyHolds(historyPath, key, pid), 1, 10000);
        QCOMPARE(historyHolds(historyPath, keyBefore, pid), 1);
        again.one("SELECT pg_advisory_unlock(" + std::to_string(key) + ")");
        QTRY_COMPARE_WITH_TIMEOUT(historyHolds(historyPath, key, newPid), 1, 10000);
        QTRY_COMPARE_WITH_TIMEOUT(rowsWithKey(view, key).size(), 0, 10000);
        QCOMPARE(historyHolds(historyPath, key, pid), 1);
        QCOMPARE(historyHolds(historyPath, keyBefore, pid), 1);
    }

    // The window hands its thresholds to the poller of its session, so results come summarized
    // (off the GUI thread) with the thresholds the strip asks for, and again after a change.
    void results_come_summarized_with_the_window_thresholds() {
        lockscope::CatalogStore catalog(dir_.filePath(QStringLiteral("catalog-summary.sqlite")));
        QVERIFY(catalog.isOpen());
        lockscope::MainWindow window(catalog);
        lockscope::AppSettings settings;
        settings.longHoldSeconds = 7;
        window.applySettings(settings);
        window.poller().setInterval(std::chrono::milliseconds(100));
        window.connectTo(QString::fromStdString(dsn_));
        const auto summarizedWith = [&](double longHold) {
            const lockscope::PollResultPtr r = window.latest();
            return r && r->summary && r->summary->thresholds.longHold == longHold &&
                   r->summary->thresholds.longWait == settings.longWaitSeconds &&
                   r->summary->thresholds.idleInTransaction == settings.idleInTransactionSeconds &&
                   r->summary->thresholds.xminPin == window.locksModel().xminPinThreshold();
        };
        QTRY_VERIFY_WITH_TIMEOUT(summarizedWith(7), 10000);
        settings.longHoldSeconds = 11;
        window.applySettings(settings);
        QTRY_VERIFY_WITH_TIMEOUT(summarizedWith(11), 10000);
    }

    void take_lock_by_hand_shows_as_this_app_and_quit_releases_it() {
        lockscope::CatalogStore catalog(dir_.filePath(QStringLiteral("catalog-take.sqlite")));
        const QByteArray name = "orders.taken-by-hand";
        QCOMPARE(catalog.add(name), lockscope::CatalogStore::AddResult::added);
        const qint64 key = pglock::key_of(std::string_view(name.constData(), static_cast<std::size_t>(name.size())));
        Conn judge(dsn_);
        const std::string heldBy = "SELECT coalesce(string_agg(pid::text, ','), '') FROM pg_locks WHERE locktype = 'advisory' "
                                   "AND granted AND ((classid::bigint << 32) | objid::bigint) = " + std::to_string(key);

        auto window = std::make_unique<lockscope::MainWindow>(catalog);
        window->show();
        window->poller().setInterval(std::chrono::milliseconds(250));
        window->connectTo(QString::fromStdString(dsn_));

        // The operator confirms the dialog, prefilled with the name, in blocking mode.
        QString keyShown;
        whenShown<lockscope::TakeLockDialog>([&keyShown](lockscope::TakeLockDialog* dialog) {
            keyShown = dialog->findChild<QLineEdit*>(QStringLiteral("takeLockName"))->text();
            dialog->setMode(lockscope::TakeMode::Blocking);
            dialog->accept();
        });
        window->takeLock(name);
        QCOMPARE(keyShown, QString::fromUtf8(name));
        auto& locks = window->lockController();
        QTRY_COMPARE_WITH_TIMEOUT(locks.holdingCount(), 1, 10000);
        const int pid = locks.locks().front().pid;
        QCOMPARE(judge.one(heldBy), std::to_string(pid));
        // The locks view marks it as this app's.
        QTreeView& view = window->locksView();
        QTRY_VERIFY_WITH_TIMEOUT(rowsWithKey(view, key).size() == 1 &&
                                     rowsWithKey(view, key).first().siblingAtColumn(lockscope::LocksModel::Holders)
                                         .data().toString() == QStringLiteral("%1 (this app)").arg(pid),
                                 10000);

        // Read-only: the take is refused before any dialog, and by the controller itself.
        window->readOnlySwitch().set(true);
        auto* readOnlyAction = window->findChild<QAction*>(QStringLiteral("readOnlyAction"));
        QVERIFY(readOnlyAction && readOnlyAction->isChecked());
        window->takeLock("orders.refused");
        QVERIFY(!locks.take("orders.refused", lockscope::TakeMode::Try, false).accepted());
        QCOMPARE(static_cast<int>(locks.locks().size()), 1);

        // Quitting asks, and letting go happens before the window closes (read-only or not).
        bool asked = false;
        whenShown<QMessageBox>([&asked](QMessageBox* box) {
            asked = box->text().contains(QStringLiteral("holds 1 lock"));
            box->button(QMessageBox::Yes)->click();
        });
        QVERIFY(window->close());
        QVERIFY(asked);
        QCOMPARE(locks.holdingCount(), 0);
        QCOMPARE(judge.one(heldBy), std::string());
        window.reset();
    }
};

QTEST_MAIN(TestMainWindow)
#include "test_main_window.moc"
