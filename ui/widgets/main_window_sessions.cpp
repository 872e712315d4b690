// The main window's servers: a session per server, the per-server panels (made the first time a
// server is shown, then kept, so each server keeps its charts' and tabs' state), and re-binding
// the one set of views to the current session.
//
// Why one set of views over a server picker and not a tab per server: the Fleet tab is the
// overview of every server; a tab per server would multiply the locks view (up to 10,000 rows
// each) and the charts by the number of servers, 50 in the scale target, for tabs nobody looks at
// at once. A server's panels are only made when it is first shown.
#include <QAction>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QLabel>
#include <QStackedWidget>
#include <QStatusBar>

#include "actions/read_only_switch.hpp"
#include "charts/charts_panel.hpp"
#include "fleet/fleet_model.hpp"
#include "history/history_panel.hpp"
#include "history/history_recorder.hpp"
#include "metrics/claims_tracker.hpp"
#include "metrics/endpoint_status_model.hpp"
#include "metrics/metrics_panel.hpp"
#include "models/locks_filter_proxy.hpp"
#include "models/locks_model.hpp"
#include "widgets/lock_tree_panel.hpp"
#include "widgets/main_window.hpp"
#include "widgets/my_locks_panel.hpp"
#include "widgets/resolver_panel.hpp"
#include "widgets/session_panel.hpp"
#include "widgets/summary_strip.hpp"

namespace lockscope {

ServerSession* MainWindow::addSession() {
    auto* session = new ServerSession(*names_, this);
    // Only the server the window shows feeds its locks model (ServerSession::setShown).
    if (!sessions_.isEmpty()) session->setShown(false);
    sessions_ << session;
    if (sessions_.size() > 1) {
        // The window's settings: the interval and pause of the toolbar, the thresholds.
        session->poller().setInterval(std::chrono::milliseconds(static_cast<long long>(interval_->value() * 1000.0)));
        session->poller().setPaused(pause_->isChecked());
        applyThresholds(*session);
    }
    fleet_->addSession(session);
    return session;
}

ServerSession& MainWindow::openServer(const QString& conninfo, const QString& password, const QString& label, bool readOnly,
                                      const QList<QUrl>& metricsUrls) {
    // The first session, never connected, is the window's empty start: it takes the first server.
    ServerSession* session = sessions_.size() == 1 && server_->label().isEmpty() ? server_ : addSession();
    session->connectTo(conninfo, password, label, readOnly, metricsUrls);
    if (session == server_) setWindowTitle(tr("lockscope — %1").arg(server_->label()));
    refreshServerPicker();
    return *session;
}

const MainWindow::SessionViews& MainWindow::viewsOf(ServerSession* session) {
    auto it = views_.find(session);
    if (it != views_.end()) return *it;
    SessionViews v;
    v.charts = new charts::ChartsPanel(session->chartModels(), chartsStack_);
    v.history = new history::HistoryPanel(&session->historyRecorder(), historyStack_);
    v.metrics = new MetricsPanel(&session->metricsScraper(), &session->metricsModel(), metricsStack_);
    v.metrics->statusModel()->setClaimsTracker(&session->claimsTracker());
    v.myLocks = new MyLocksPanel(session->lockController(), session->readOnlySwitch(), myLocksStack_);
    v.tree = new LockTreePanel(session->lockTreeModel(), treeStack_);
    // "Worst root: PID … blocks N sessions via …", leftmost: the first thing to read in an incident.
    statusBar()->insertWidget(0, v.tree->worstRootLabel());
    chartsStack_->addWidget(v.charts);
    historyStack_->addWidget(v.history);
    metricsStack_->addWidget(v.metrics);
    myLocksStack_->addWidget(v.myLocks);
    treeStack_->addWidget(v.tree);
    return *views_.insert(session, v);
}

void MainWindow::setCurrentSession(ServerSession* session) {
    if (session == nullptr || session == server_ || !sessions_.contains(session)) return;
    server_ = session;
    bindCurrentSession();
}

void MainWindow::bindCurrentSession() {
    for (const QMetaObject::Connection& c : std::as_const(bound_)) disconnect(c);
    bound_.clear();
    // The one shown catches up with its latest result before the views below bind to it.
    for (ServerSession* session : std::as_const(sessions_)) session->setShown(session == server_);
    readOnly_ = &server_->readOnlySwitch();
    locks_ = &server_->lockController();
    backends_ = &server_->backendActions();
    model_ = &server_->locksModel();
    const SessionViews& v = viewsOf(server_);
    charts_ = v.charts;
    historyPanel_ = v.history;
    metricsPanel_ = v.metrics;
    myLocks_ = v.myLocks;
    treePanel_ = v.tree;
    chartsStack_->setCurrentWidget(charts_);
    historyStack_->setCurrentWidget(historyPanel_);
    metricsStack_->setCurrentWidget(metricsPanel_);
    myLocksStack_->setCurrentWidget(myLocks_);
    treeStack_->setCurrentWidget(treePanel_);
    for (const SessionViews& views : std::as_const(views_)) views.tree->setWorstRootShown(views.tree == treePanel_);
    // The locks view keeps its columns, sort and filter; only the rows are another server's.
    if (proxy_->sourceModel() != model_) proxy_->setSourceModel(model_);
    session_->setNamer(server_->namer());

    bound_ << connect(server_, &ServerSession::resultArrived, this, &MainWindow::onResult);
    bound_ << connect(server_, &ServerSession::stateChanged, this, &MainWindow::onState);
    bound_ << connect(server_, &ServerSession::cleared, summary_, &SummaryStrip::clear);
    // The rows' durations count on between polls; the strip's longest wait counts with them, on
    // the same clock (the model's now(): the poll's server time plus the time since).
    bound_ << connect(model_, &LocksModel::ticked, this, [this] {
        if (const PollResultPtr latest = server_->latest(); latest && latest->snapshot)
            summary_->advance(model_->now() - latest->snapshot->server_now);
    });
    bound_ << connect(&server_->historyRecorder(), &history::HistoryRecorder::failed, this,
                      [this](const QString& message) { statusBar()->showMessage(tr("History: %1").arg(message), 10000); });
    bindOperatorActions();

    // What the status bar, the summary and the panels showed was the previous server's.
    summary_->clear();
    standbyLabel_->hide();
    serverLabel_->clear();
    pollLabel_->clear();
    rowsLabel_->clear();
    onState(server_->poller().state(), QString());
    if (const PollResultPtr latest = server_->latest()) onResult(latest);
    else onSelection();
    if (!server_->label().isEmpty()) setWindowTitle(tr("lockscope — %1").arg(server_->label()));
    refreshServerPicker();
}

void MainWindow::refreshServerPicker() {
    if (serverPicker_ == nullptr) return;
    const QSignalBlocker quiet(serverPicker_);
    serverPicker_->clear();
    for (ServerSession* session : std::as_const(sessions_))
        serverPicker_->addItem(session->label().isEmpty() ? tr("(not connected)") : session->label());
    serverPicker_->setCurrentIndex(static_cast<int>(sessions_.indexOf(server_)));
    serverPickerAction_->setVisible(sessions_.size() > 1);
}

}  // namespace lockscope
