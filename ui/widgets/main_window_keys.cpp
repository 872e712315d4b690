// The main window's keyboard: standard shortcuts for what an operator does most (filter, poll
// now, take a lock, terminate a holder, switch tabs), a Help menu that lists them, and the
// accessible names of the views and controls.
#include <QAction>
#include <QDoubleSpinBox>
#include <QLineEdit>
#include <QMenuBar>
#include <QStatusBar>
#include <QTabWidget>
#include <QTreeView>

#include "actions/lock_controller.hpp"
#include "actions/read_only_switch.hpp"
#include "fleet/fleet_model.hpp"
#include "models/locks_model.hpp"
#include "widgets/main_window.hpp"
#include "history/history_recorder.hpp"
#include "theme/app_palette.hpp"
#include "widgets/settings_dialog.hpp"
#include "widgets/shortcuts_dialog.hpp"
#include "widgets/summary_strip.hpp"

namespace lockscope {

void MainWindow::buildKeyboard() {
    QMenu* view = menuBar()->addMenu(tr("&View"));
    auto* filter = view->addAction(tr("Filter the locks"));
    filter->setObjectName(QStringLiteral("filterAction"));
    filter->setShortcut(QKeySequence::Find);
    connect(filter, &QAction::triggered, this, [this] {
        mainTabs_->setCurrentIndex(0);
        filter_->setFocus(Qt::ShortcutFocusReason);
        filter_->selectAll();
    });
    auto* pollNow = view->addAction(tr("Poll now"));
    pollNow->setObjectName(QStringLiteral("pollNowAction"));
    pollNow->setShortcut(QKeySequence(Qt::Key_F5));
    connect(pollNow, &QAction::triggered, this, [this] {
        if (pause_->isChecked()) statusBar()->showMessage(tr("Paused: resume polling first"), 5000);
        server_->poller().pollNow();
    });
    view->addSeparator();
    for (int i = 0; i < mainTabs_->count() && i < 4; ++i) {
        auto* tab = view->addAction(tr("Show %1").arg(mainTabs_->tabText(i)));
        tab->setObjectName(QStringLiteral("showTab%1Action").arg(i + 1));
        tab->setShortcut(QKeySequence(Qt::CTRL | static_cast<Qt::Key>(Qt::Key_1 + i)));
        connect(tab, &QAction::triggered, this, [this, i] { mainTabs_->setCurrentIndex(i); });
    }

    if (auto* take = findChild<QAction*>(QStringLiteral("takeLockAction"))) take->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_T));

    // Del only where a lock row has the focus: in the filter field it still deletes text.
    auto* terminate = new QAction(tr("Terminate the selected lock's holder…"), view_);
    terminate->setObjectName(QStringLiteral("terminateHolderAction"));
    terminate->setShortcut(QKeySequence::Delete);
    terminate->setShortcutContext(Qt::WidgetWithChildrenShortcut);
    view_->addAction(terminate);
    connect(terminate, &QAction::triggered, this, &MainWindow::terminateSelectedHolder);

    view->addSeparator();
    auto* settings = view->addAction(tr("Settings…"));
    settings->setObjectName(QStringLiteral("settingsAction"));
    settings->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_Comma));
    connect(settings, &QAction::triggered, this, &MainWindow::openSettings);

    QMenu* help = menuBar()->addMenu(tr("&Help"));
    auto* shortcuts = help->addAction(tr("Keyboard shortcuts"));
    shortcuts->setObjectName(QStringLiteral("shortcutsAction"));
    connect(shortcuts, &QAction::triggered, this, [this] { showShortcutsDialog(this); });

    view_->setAccessibleName(tr("Locks"));
    view_->setAccessibleDescription(tr("Every advisory lock, its holders, and the sessions waiting for it"));
    filter_->setAccessibleName(tr("Filter locks"));
    interval_->setAccessibleName(tr("Poll interval"));
    mainTabs_->setAccessibleName(tr("Views"));
    tabs_->setAccessibleName(tr("Side panels"));
}

void MainWindow::openSettings() {
    history::HistoryRecorder& history = server_->historyRecorder();
    SettingsDialog dialog(settings_, history.isOpen() ? history.retentionDays() : 0, this);
    if (dialog.exec() != QDialog::Accepted) return;
    const AppSettings chosen = dialog.settings();
    chosen.save();
    if (dialog.retentionDays() > 0 && dialog.retentionDays() != history.retentionDays()) history.setRetentionDays(dialog.retentionDays());
    // The interval in the toolbar follows a new default; an unchanged default leaves what was set there.
    const bool newInterval = chosen.pollIntervalSeconds != settings_.pollIntervalSeconds;
    applySettings(chosen);
    if (newInterval) interval_->setValue(chosen.pollIntervalSeconds);
}

void MainWindow::applySettings(const AppSettings& settings) {
    settings_ = settings;
    for (ServerSession* session : sessions_) applyThresholds(*session);
    fleet_->setThresholds(summaryThresholds());
    // LOCKSCOPE_THEME (screenshots) wins over the setting.
    if (!theme::modeFromEnvironment() && settings.theme != theme::current()) theme::apply(settings.theme);
    if (const PollResultPtr latest = server_->latest()) summary_->show(summarize(*latest, summaryThresholds()), summaryThresholds());
}

void MainWindow::applyThresholds(ServerSession& session) const {
    LocksModel& model = session.locksModel();
    model.setLongWaitThreshold(settings_.longWaitSeconds);
    model.setLongHoldThreshold(settings_.longHoldSeconds);
    model.setIdleInTransactionThreshold(settings_.idleInTransactionSeconds);
    // The summary of each result is computed on the poll thread with the same thresholds the
    // strip and the fleet row ask summarize() for; a result polled before a change is summarized
    // again here, by the GUI thread.
    session.poller().setSummaryThresholds(model.summaryThresholds());
}

void MainWindow::terminateSelectedHolder() {
    const QModelIndex index = view_->currentIndex();
    if (!index.isValid()) return;
    if (readOnly_->on()) {
        statusBar()->showMessage(tr("Read-only mode: turn it off to terminate a session."), 8000);
        return;
    }
    if (index.data(LocksModel::IsWaiterRole).toBool()) {
        statusBar()->showMessage(tr("Del terminates a lock's holder: select the lock's row (the context menu acts on waiters)."), 8000);
        return;
    }
    QList<int> pids = index.data(LocksModel::PidsRole).value<QList<int>>();
    const QSet<int> own = locks_->ownPids();
    pids.removeIf([&own](int pid) { return own.contains(pid); });  // released from My locks, not terminated
    if (pids.size() != 1) {
        statusBar()->showMessage(pids.isEmpty() ? tr("No other session holds this lock.")
                                                : tr("%1 sessions hold this lock: pick one in the context menu.").arg(pids.size()),
                                 8000);
        return;
    }
    confirmBackendAction(pids.first(), true);
}

}  // namespace lockscope
