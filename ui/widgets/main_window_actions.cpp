// The main window's operator actions: take a lock by hand, read-only mode, cancel or terminate a
// selected backend behind a confirmation, and letting go of held locks before leaving.
#include <QAbstractButton>
#include <QAction>
#include <QCloseEvent>
#include <QMenu>
#include <QMessageBox>
#include <QProgressDialog>
#include <QSignalBlocker>
#include <QStackedWidget>
#include <QStatusBar>
#include <QTabWidget>
#include <QTimer>
#include <QToolBar>

#include "actions/backend_actions.hpp"
#include "actions/terminate_impact.hpp"
#include "actions/lock_controller.hpp"
#include "actions/read_only_switch.hpp"
#include "models/locks_model.hpp"
#include "models/server_text.hpp"
#include "widgets/catalog_panel.hpp"
#include "widgets/locks_view_layout.hpp"
#include "widgets/main_window.hpp"
#include "widgets/my_locks_panel.hpp"
#include "widgets/name_input.hpp"
#include "widgets/plain_message_box.hpp"
#include "widgets/resolver_panel.hpp"

namespace lockscope {

namespace {
// How long quitting waits for the locks to be let go. Past it the sessions are closed, which
// ends their locks on the server as well.
constexpr int kReleaseWaitMs = 10000;
constexpr int kMaxPidsInMenu = 6;
}  // namespace

void MainWindow::buildOperatorActions(QToolBar* bar) {
    auto* take = bar->addAction(tr("Take lock…"));
    take->setObjectName(QStringLiteral("takeLockAction"));
    connect(take, &QAction::triggered, this, [this] { takeLock(); });
    readOnlyAction_ = bar->addAction(tr("Read-only"));
    readOnlyAction_->setObjectName(QStringLiteral("readOnlyAction"));
    readOnlyAction_->setCheckable(true);
    readOnlyAction_->setToolTip(tr("No action that changes the server: taking, releasing, canceling and terminating are off"));
    // Read-only is each server's: the action shows and sets the current session's switch (the
    // connections to the switch itself are made in bindOperatorActions).
    connect(readOnlyAction_, &QAction::toggled, this, [this](bool on) { readOnly_->set(on); });
    connect(catalogPanel_, &CatalogPanel::takeLockRequested, this, &MainWindow::takeLock);
    connect(resolver_, &ResolverPanel::takeLockRequested, this, &MainWindow::takeLock);
}

void MainWindow::bindOperatorActions() {
    auto* take = findChild<QAction*>(QStringLiteral("takeLockAction"));
    const auto showReadOnly = [this, take](bool on) {
        const QSignalBlocker quiet(readOnlyAction_);
        readOnlyAction_->setChecked(on);
        take->setEnabled(!on);
    };
    showReadOnly(readOnly_->on());
    bound_ << connect(readOnly_, &ReadOnlySwitch::changed, this, [this, showReadOnly](bool on) {
        showReadOnly(on);
        statusBar()->showMessage(on ? tr("Read-only mode on") : tr("Read-only mode off: actions can change the server"), 5000);
    });
    bound_ << connect(myLocks_, &MyLocksPanel::message, this, [this](const QString& text) { statusBar()->showMessage(text, 8000); });
    bound_ << connect(backends_, &BackendActions::finished, this,
                      [this](int, BackendActions::Kind kind, bool ok, const QString& message) {
                          if (ok) {
                              statusBar()->showMessage(message, 8000);
                          } else {
                              showPlainMessage(this, QMessageBox::Warning,
                                               kind == BackendActions::Kind::Terminate ? tr("Terminate session") : tr("Cancel query"),
                                               message);
                          }
                      });
}

void MainWindow::takeLock(const QByteArray& name) {
    if (readOnly_->on()) {
        statusBar()->showMessage(tr("Read-only mode: turn it off to take a lock."), 8000);
        return;
    }
    showSidePanel(*tabs_, myLocksStack_);
    myLocks_->takeLock(name);
}

void MainWindow::addBackendActions(QMenu& menu, const QModelIndex& index) {
    QList<int> pids = index.data(LocksModel::PidsRole).value<QList<int>>();
    if (pids.isEmpty()) return;
    menu.addSeparator();
    const bool readOnly = readOnly_->on();
    const QSet<int> own = locks_->ownPids();
    for (int i = 0; i < pids.size() && i < kMaxPidsInMenu; ++i) {
        const int pid = pids[i];
        if (own.contains(pid)) {
            for (const auto& lock : locks_->locks()) {
                if (lock.pid != pid || lock.state != OwnLockState::Held) continue;
                auto* release = menu.addAction(tr("Release (this app, PID %1)").arg(pid), this, [this, id = lock.id] {
                    const auto outcome = isTransactionLock(id) ? locks_->rollback(id) : locks_->release(id);
                    if (!outcome) statusBar()->showMessage(outcome.refusal, 8000);
                });
                release->setEnabled(!readOnly);
            }
            continue;
        }
        auto* cancel = menu.addAction(tr("Cancel query of PID %1…").arg(pid), this, [this, pid] { confirmBackendAction(pid, false); });
        auto* terminate = menu.addAction(tr("Terminate session of PID %1…").arg(pid), this, [this, pid] { confirmBackendAction(pid, true); });
        cancel->setEnabled(!readOnly);
        terminate->setEnabled(!readOnly);
    }
}

bool MainWindow::isTransactionLock(quint64 id) const {
    const OwnLock* lock = locks_->find(id);
    return lock && lock->mode == TakeMode::Transaction;
}

void MainWindow::confirmBackendAction(int pid, bool terminate) {
    QString application, user, state;
    QStringList lockNames;
    if (const PollResultPtr latest = server_->latest(); latest && latest->snapshot) {
        const auto& snap = *latest->snapshot;
        if (const auto it = snap.backends.find(pid); it != snap.backends.end()) {
            // One line each (server_text.hpp): a newline in a role name must not fake a line of
            // the box the operator decides on.
            application = serverText(it->second.application_name);
            user = serverText(it->second.usename);
            state = serverText(it->second.state);
        }
        for (const auto& lock : snap.locks) {
            const bool holds = std::any_of(lock.holders.begin(), lock.holders.end(), [pid](const auto& h) { return h.pid == pid; });
            const bool waits = std::any_of(lock.waiters.begin(), lock.waiters.end(), [pid](const auto& w) { return w.pid == pid; });
            if (!holds && !waits) continue;
            const QString label = server_->nameOf(pglock::monitor::id_of(lock), lock.key, lock.holder_name).text;
            lockNames << (holds ? tr("holds %1").arg(label) : tr("waits for %1").arg(label));
        }
    }
    const QString title = terminate ? tr("Terminate session") : tr("Cancel query");
    const QString effect = terminate
                               ? tr("Its session ends: its transaction is rolled back and every lock it holds is released.")
                               : tr("Its current statement is canceled; the session and its session-level locks stay.");
    const QString text = tr("%1 of PID %2?\n\nApplication: %3\nUser: %4\nState: %5\nLocks: %6\n\n%7")
                             .arg(title, QString::number(pid), application.isEmpty() ? tr("(none)") : application,
                                  user.isEmpty() ? tr("(unknown)") : user, state.isEmpty() ? tr("(unknown)") : state,
                                  lockNames.isEmpty() ? tr("(none seen in the last poll)") : lockNames.join(QStringLiteral("; ")),
                                  effect);
    QMessageBox box(QMessageBox::Warning, title, text, QMessageBox::Yes | QMessageBox::Cancel, this);
    box.setObjectName(QStringLiteral("confirmBackendAction"));
    box.setTextFormat(Qt::PlainText);  // application, user and lock names: never as HTML
    box.setDefaultButton(QMessageBox::Cancel);
    box.button(QMessageBox::Yes)->setText(terminate ? tr("Terminate PID %1").arg(pid) : tr("Cancel query of PID %1").arg(pid));
    // A terminate shows its impact first (terminate_impact.hpp), read on a worker thread: the
    // button stays off until it is known, or until reading it failed (then the box says so).
    QMetaObject::Connection impactConnection;
    if (terminate && backends_->loadImpact(pid)) {
        box.button(QMessageBox::Yes)->setEnabled(false);
        box.setText(text + tr("\n\nImpact: loading…"));
        impactConnection = connect(backends_, &BackendActions::impactLoaded, &box,
                                   [this, &box, text, pid](int loaded, std::shared_ptr<const pglock::monitor::BackendImpact> impact,
                                                           const QString& error) {
                                       if (loaded != pid) return;
                                       box.setText(text + QStringLiteral("\n\n") + impactText(pid, impact.get(), error));
                                       box.button(QMessageBox::Yes)->setEnabled(!impact || impact->found);
                                   });
    }
    const int answer = box.exec();
    disconnect(impactConnection);
    if (answer != QMessageBox::Yes) return;
    const ActionOutcome outcome = terminate ? backends_->terminate(pid) : backends_->cancelQuery(pid);
    if (!outcome) showPlainMessage(this, QMessageBox::Information, title, outcome.refusal);
}

QString MainWindow::impactText(int pid, const pglock::monitor::BackendImpact* impact, const QString& error) const {
    if (!impact) return tr("Impact: could not be read (%1). Terminating still ends the session and rolls back its transaction.").arg(error);
    // The evidence the State cell shows: the poll's and the claims' (a leak: "unclaimed").
    const auto* evidence = model_->orphanEvidence(pid);
    const TerminateImpactFacts facts{*impact, evidence, [this](std::int64_t key) {
                                         const pglock::monitor::LockId id{pglock::monitor::KeyForm::bigint, pglock::tag_of(key)};
                                         return server_->nameOf(id, key, std::nullopt).text;
                                     }};
    return tr("Impact of terminating it:\n") + terminateImpactText(facts);
}

bool MainWindow::releaseBeforeLeaving(const QString& why, bool everyServer) {
    // Connecting elsewhere replaces the current server only; quitting lets go on every server.
    QList<LockController*> controllers;
    if (everyServer) {
        for (ServerSession* session : std::as_const(sessions_)) controllers << &session->lockController();
    } else {
        controllers << locks_;
    }
    const auto count = [&controllers](int (LockController::*what)() const) {
        int n = 0;
        for (const LockController* c : controllers) n += (c->*what)();
        return n;
    };
    const int active = count(&LockController::activeCount);
    if (active == 0) return true;
    const int held = count(&LockController::holdingCount);
    const auto answer = QMessageBox::question(
        this, why,
        tr("This app holds %1 and waits for %2. %3 releases them and cancels the waits. Go on?")
            .arg(counted(held, tr("lock"), tr("locks")))
            .arg(active - held)
            .arg(why),
        QMessageBox::Yes | QMessageBox::Cancel, QMessageBox::Cancel);
    if (answer != QMessageBox::Yes) return false;
    // The release runs on the controller's workers; the dialog keeps the window painting.
    QProgressDialog progress(tr("Releasing %1…").arg(counted(active, tr("lock"), tr("locks"))), QString(), 0, 0, this);
    progress.setWindowModality(Qt::WindowModal);
    progress.setMinimumDuration(300);
    for (LockController* c : controllers)
        connect(c, &LockController::allSettled, &progress, [&progress, count] {
            if (count(&LockController::activeCount) == 0) progress.accept();
        });
    QTimer::singleShot(kReleaseWaitMs, &progress, &QProgressDialog::accept);
    for (LockController* c : controllers) c->releaseAll();
    if (count(&LockController::activeCount) > 0) progress.exec();
    return true;
}

void MainWindow::closeEvent(QCloseEvent* event) {
    if (!leaving_ && !releaseBeforeLeaving(tr("Quitting"), /*everyServer=*/true)) {
        event->ignore();
        return;
    }
    leaving_ = true;
    event->accept();
}

}  // namespace lockscope
