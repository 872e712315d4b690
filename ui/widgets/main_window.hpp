// The lockscope main window: the live locks view, the selected session, the resolver and the
// name catalog, with the connection state in the status bar. It runs no SQL itself: the poller
// does, on its own thread; this window only merges finished results into the models.
#pragma once

#include <QHash>
#include <QMainWindow>
#include <QSet>
#include <QTimer>
#include <QUrl>

#include <string>

#include <deque>
#include <memory>

#include "models/lock_naming.hpp"
#include "models/lock_summary.hpp"
#include "poller/poll_result.hpp"
#include "poller/poller.hpp"
#include "stores/app_settings.hpp"
#include "stores/profile_store.hpp"

class QDoubleSpinBox;
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
class HistoryPanel;
class HistoryRecorder;
}
class BackendActions;
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
class ResolverPanel;
class SessionPanel;
class SummaryStrip;

class MainWindow : public QMainWindow {
    Q_OBJECT
public:
    // The catalog is shared with the caller (main), which decides where it lives.
    explicit MainWindow(CatalogStore& catalog, QWidget* parent = nullptr);
    ~MainWindow() override;

    // Connects at once (as after the connection dialog); used by --dsn and the tests.
    // readOnly: start in read-only mode (profiles marked production do). metricsUrls: the
    // /metrics endpoints of applications that use the library, scraped beside the monitor.
    void connectTo(const QString& conninfo, const QString& password = {}, const QString& label = {},
                   bool readOnly = false, const QList<QUrl>& metricsUrls = {});
    void openConnectionDialog();
    // One of tabNames(): main tabs "locks", "timeline", "histogram", "history", "metrics"; side
    // tabs "session", "mylocks", "resolver", "catalog". False (and nothing changes) for any other.
    bool showTab(const QString& name);
    static QStringList tabNames();

    Poller& poller() { return poller_; }
    LocksModel& locksModel() { return *model_; }
    StagedSnapshotFeeder& locksFeeder() { return *feeder_; }
    QTreeView& locksView() { return *view_; }
    ResolverPanel& resolver() { return *resolver_; }
    PollResultPtr latest() const { return latest_; }
    LockController& lockController() { return *locks_; }
    BackendActions& backendActions() { return *backends_; }
    ReadOnlySwitch& readOnlySwitch() { return *readOnly_; }
    MyLocksPanel& myLocks() { return *myLocks_; }
    charts::ChartsPanel& charts() { return *charts_; }
    MetricsScraper& metricsScraper() { return *scraper_; }
    MetricsModel& metricsModel() { return *metricsModel_; }
    history::HistoryRecorder& historyRecorder() { return *history_; }
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
    void buildActions();
    void buildStatusBar();
    void buildKeyboard();  // main_window_keys.cpp
    void terminateSelectedHolder();
    void onResult(const PollResultPtr& result);
    void feedCharts();
    void onState(PollState state, const QString& message);
    // `message` with the secrets of the current connection string masked (libpq may quote it).
    QString redacted(const QString& message) const;
    void onSelection();
    SummaryThresholds summaryThresholds() const;
    void showContextMenu(const QPoint& pos);
    void nameUnknownKey(qint64 key, const QString& start = {});  // start: prefills the field
    // main_window_actions.cpp: the operator's actions on the server.
    void buildOperatorActions(QToolBar* bar);
    void addBackendActions(QMenu& menu, const QModelIndex& index);
    void confirmBackendAction(int pid, bool terminate);
    bool releaseBeforeLeaving(const QString& why);
    bool isTransactionLock(quint64 id) const;
    QStringList catalogNames(qint64 key) const;
    // The app's naming rule with everything this window knows (catalog, locks taken here, names
    // learned from holders): what namer_ answers for every view.
    LockName nameOf(const pglock::monitor::LockId& id, std::int64_t key,
                    const std::optional<pglock::monitor::HolderName>& current);

    void addToCatalog(const QByteArray& name);  // on the service's worker; a failure is shown

    CatalogStore& catalog_;
    CatalogService* catalogService_;  // every catalog read and write, off the GUI thread
    QSet<quint64> catalogJobs_;       // the adds this window posted
    HolderNames holderNames_;      // names holders carried, kept after they let go
    QHash<qint64, QByteArray> takenHere_;  // names of locks taken by hand in this window
    LockNamer namer_;
    CatalogNameCache* names_;  // every name lookup of the window goes through it, never a query per ask
    ProfileStore profiles_;
    Poller poller_;
    LocksModel* model_;
    StagedSnapshotFeeder* feeder_;  // every result reaches model_ through it (big ones in steps)
    LocksFilterProxy* proxy_;
    QTreeView* view_;
    QTabWidget* mainTabs_;  // Locks, Charts, ...
    QTabWidget* tabs_;      // the side panels beside the locks view
    charts::ChartsPanel* charts_;
    MetricsScraper* scraper_;
    MetricsModel* metricsModel_;
    MetricsPanel* metricsPanel_;
    history::HistoryRecorder* history_;
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
    QTimer tick_;
    QString lastPollTime_;  // HH:mm:ss of the last good poll: what stale rows are "as of"
    PollResultPtr latest_;
    // Results the charts have not taken yet (see onResult): oldest first, each one fed in its own
    // event-loop turn by chartFeed_ (a zero timer, so timers and input get their turn between).
    std::deque<PollResultPtr> chartQueue_;
    QTimer chartFeed_;
    QString connectionLabel_;
    // In memory only: its secrets are masked in every message shown about this connection.
    std::string conninfo_;
    ReadOnlySwitch* readOnly_;
    LockController* locks_;
    BackendActions* backends_;
    MyLocksPanel* myLocks_;
    QAction* readOnlyAction_ = nullptr;
    bool leaving_ = false;
    AppSettings settings_;  // the close was confirmed and the locks are let go
};

}  // namespace lockscope
