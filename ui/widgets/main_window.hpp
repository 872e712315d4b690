// The lockscope main window: a view over server sessions (session/server_session.hpp), which own
// the poller, the models and the controllers of each server and route the poll results to them.
// The window shows the current session: the live locks view, the selected backend, the resolver
// and the name catalog, with the connection state in the status bar. It runs no SQL itself.
// With several servers open, the Fleet tab shows them all and one set of views follows the
// current server (the toolbar's server picker, or a double-click in the Fleet tab): the views
// re-bind to its models (main_window_sessions.cpp); each server keeps its own poller thread.
#pragma once

#include <QHash>
#include <QList>
#include <QMainWindow>
#include <QSet>
#include <QUrl>

#include <memory>

#include "models/lock_naming.hpp"
#include "pglock/backend_impact.hpp"
#include "models/lock_summary.hpp"
#include "poller/poll_result.hpp"
#include "poller/poller.hpp"
#include "session/server_session.hpp"
#include "stores/app_settings.hpp"
#include "stores/profile_store.hpp"

class QComboBox;
class QDoubleSpinBox;
class QStackedWidget;
class QLabel;
class QLineEdit;
class QTabWidget;
class QTreeView;
class QAction;
class QCloseEvent;
class QMenu;
class QModelIndex;
class QToolBar;

namespace lockscope {

namespace charts {
class ChartsPanel;
}
namespace history {
class ChartModels;
class HistoryPanel;
class HistoryRecorder;
}
class BackendActions;
class FleetModel;
class FleetPanel;
class MetricsModel;
class MetricsPanel;
class MetricsScraper;
class CatalogNameCache;
class CatalogService;
class CatalogPanel;
class StagedSnapshotFeeder;
class CatalogStore;
class LockController;
class MyLocksPanel;
class ReadOnlySwitch;
class LocksFilterProxy;
class LocksModel;
class LockTreePanel;
class ResolverPanel;
class SessionPanel;
class SummaryStrip;

class MainWindow : public QMainWindow {
    Q_OBJECT
public:
    // The catalog is shared with the caller (main), which decides where it lives.
    explicit MainWindow(CatalogStore& catalog, QWidget* parent = nullptr);
    ~MainWindow() override;

    // Connects the current session at once (as after the connection dialog); used by --dsn and the tests.
    // readOnly: start in read-only mode (profiles marked production do). metricsUrls: the
    // /metrics endpoints of applications that use the library, scraped beside the monitor.
    void connectTo(const QString& conninfo, const QString& password = {}, const QString& label = {},
                   bool readOnly = false, const QList<QUrl>& metricsUrls = {});
    // One more server in this window (--dsn and --profile repeated, several profiles from the
    // connection dialog), with its own session and poller thread. The window's first session is
    // used while it has never been connected. The current session stays what it was.
    ServerSession& openServer(const QString& conninfo, const QString& password = {}, const QString& label = {},
                              bool readOnly = false, const QList<QUrl>& metricsUrls = {});
    // The session the views show from now on: they re-bind to its models and controllers.
    void setCurrentSession(ServerSession* session);
    FleetModel& fleetModel() { return *fleet_; }
    FleetPanel& fleetPanel() { return *fleetPanel_; }
    void openConnectionDialog();
    // One of tabNames(): main tabs "locks", "timeline", "histogram", "history", "metrics", "fleet"; side
    // tabs "session", "mylocks", "resolver", "catalog". False (and nothing changes) for any other.
    bool showTab(const QString& name);
    static QStringList tabNames();

    // The sessions this window shows, and the one its views show now.
    const QList<ServerSession*>& sessions() const { return sessions_; }
    ServerSession& currentSession() { return *server_; }
    // The current session's parts, as the views use them.
    Poller& poller() { return server_->poller(); }
    LocksModel& locksModel() { return server_->locksModel(); }
    StagedSnapshotFeeder& locksFeeder() { return server_->locksFeeder(); }
    QTreeView& locksView() { return *view_; }
    ResolverPanel& resolver() { return *resolver_; }
    PollResultPtr latest() const { return server_->latest(); }
    LockController& lockController() { return server_->lockController(); }
    BackendActions& backendActions() { return server_->backendActions(); }
    ReadOnlySwitch& readOnlySwitch() { return server_->readOnlySwitch(); }
    MyLocksPanel& myLocks() { return *myLocks_; }
    charts::ChartsPanel& charts() { return *charts_; }
    MetricsScraper& metricsScraper() { return server_->metricsScraper(); }
    MetricsModel& metricsModel() { return server_->metricsModel(); }
    history::HistoryRecorder& historyRecorder() { return server_->historyRecorder(); }
    SummaryStrip& summaryStrip() { return *summary_; }
    CatalogService& catalogService() { return *catalogService_; }
    CatalogPanel& catalogPanel() { return *catalogPanel_; }
    // Shows the Locks tab with this lock's row selected and expanded (no-op when it is not in view).
    void selectLock(const pglock::monitor::LockId& id);
    // The take-lock dialog, prefilled; the lock is taken when the operator confirms.
    void takeLock(const QByteArray& name = {});
    // Settings (main_window_keys.cpp): the dialog saves and applies them; applySettings() applies
    // them live (thresholds, theme) without saving.
    void openSettings();
    void applySettings(const AppSettings& settings);
    const AppSettings& settings() const { return settings_; }

protected:
    void closeEvent(QCloseEvent* event) override;

private:
    // main_window_sessions.cpp: the sessions, the views of each, and re-binding to the current one.
    struct SessionViews {
        charts::ChartsPanel* charts = nullptr;
        history::HistoryPanel* history = nullptr;
        MetricsPanel* metrics = nullptr;
        MyLocksPanel* myLocks = nullptr;
        LockTreePanel* tree = nullptr;  // its worst-root line sits in the status bar, shown for the current server
    };
    ServerSession* addSession();
    const SessionViews& viewsOf(ServerSession* session);  // made the first time a session is shown
    void bindCurrentSession();
    void refreshServerPicker();
    void buildActions();
    void buildStatusBar();
    void buildKeyboard();  // main_window_keys.cpp
    void terminateSelectedHolder();
    // The current session's results and states, shown in the status bar, summary and panels.
    void onResult(const PollResultPtr& result);
    void onState(PollState state, const QString& message);
    void onSelection();
    SummaryThresholds summaryThresholds() const;
    // settings_' thresholds to the session's locks model, and to its poller for the summaries
    void applyThresholds(ServerSession& session) const;
    void showContextMenu(const QPoint& pos);
    void nameUnknownKey(qint64 key, const QString& start = {});  // start: prefills the field
    // main_window_actions.cpp: the operator's actions on the server.
    void buildOperatorActions(QToolBar* bar);
    void bindOperatorActions();  // to the current session's switch, controllers and panel
    void addBackendActions(QMenu& menu, const QModelIndex& index);
    void confirmBackendAction(int pid, bool terminate);
    // The confirmation's impact part (terminate_impact.hpp) once BackendActions read it.
    QString impactText(int pid, const pglock::monitor::BackendImpact* impact, const QString& error) const;
    bool releaseBeforeLeaving(const QString& why, bool everyServer = false);
    bool isTransactionLock(quint64 id) const;
    QStringList catalogNames(qint64 key) const;

    void addToCatalog(const QByteArray& name);  // on the service's worker; a failure is shown

    CatalogStore& catalog_;
    CatalogService* catalogService_;  // every catalog read and write, off the GUI thread
    QSet<quint64> catalogJobs_;       // the adds this window posted
    CatalogNameCache* names_;  // every name lookup of the app goes through it, never a query per ask
    ProfileStore profiles_;
    QList<ServerSession*> sessions_;  // owned (children of this window)
    ServerSession* server_;           // the session the views show
    QHash<ServerSession*, SessionViews> views_;     // the per-server panels, in the stacks below
    QList<QMetaObject::Connection> bound_;          // the window's connections to server_'s objects
    FleetModel* fleet_;
    FleetPanel* fleetPanel_;
    QComboBox* serverPicker_ = nullptr;
    QAction* serverPickerAction_ = nullptr;         // hidden while there is one server
    QStackedWidget* chartsStack_;    // one charts panel per server shown so far
    QStackedWidget* historyStack_;
    QStackedWidget* metricsStack_;
    QStackedWidget* myLocksStack_;
    QStackedWidget* treeStack_;
    LocksModel* model_;               // server_'s locks model
    LocksFilterProxy* proxy_;
    QTreeView* view_;
    QTabWidget* mainTabs_;  // Locks, Charts, ...
    QTabWidget* tabs_;      // the side panels beside the locks view
    charts::ChartsPanel* charts_;
    MetricsPanel* metricsPanel_;
    LockTreePanel* treePanel_;  // the Tree tab, beside Locks
    history::HistoryPanel* historyPanel_;
    SessionPanel* session_;
    SummaryStrip* summary_;
    ResolverPanel* resolver_;
    CatalogPanel* catalogPanel_;
    QLineEdit* filter_;
    QDoubleSpinBox* interval_;
    QAction* pause_;
    QLabel* stateLabel_;
    QLabel* serverLabel_;
    QLabel* standbyLabel_;
    QLabel* pollLabel_;
    QLabel* rowsLabel_;
    // The current session's parts the window's actions use.
    ReadOnlySwitch* readOnly_;
    LockController* locks_;
    BackendActions* backends_;
    MyLocksPanel* myLocks_;
    QAction* readOnlyAction_ = nullptr;
    bool leaving_ = false;
    AppSettings settings_;  // the close was confirmed and the locks are let go
};

}  // namespace lockscope
