// One monitored server, without a widget: its poller, the locks model and the staged feeder that
// fills it, the chart models, the history recorder, the /metrics scraper, the lock controller,
// the backend actions and the read-only switch. It routes every poll result to them (the window
// only shows what they hold) and names every lock by the one rule: catalog, then a lock taken by
// hand here, then the holder's identity, else unknown (lock_naming.hpp).
//
// A window shows one or several of these; nothing here needs a window, so the same object runs
// under the tests and the benchmark mode without one.
//
// Shown or hidden (setShown): a window over 50 servers shows one. A hidden session keeps what
// cannot be rebuilt later — the charts' timeline and histogram (fed every result, in order: the
// holds that ended are in no later result), the history (its own thread), the names learned from
// holders, the claims, the small lock tree — and skips what the latest result rebuilds at once:
// the locks model and its Held-for tick. setShown(true) feeds it the latest result.
#pragma once

#include <QHash>
#include <QList>
#include <QObject>
#include <QString>
#include <QTimer>
#include <QUrl>

#include <deque>
#include <string>

#include "models/lock_naming.hpp"
#include "poller/poll_result.hpp"
#include "poller/poller.hpp"

namespace lockscope {

namespace charts {
class ChartModels;
}
namespace history {
class HistoryRecorder;
}
class BackendActions;
class ClaimsTracker;
class CatalogNameCache;
class LockController;
class LocksModel;
class LockTreeModel;
class MetricsModel;
class MetricsScraper;
class ReadOnlySwitch;
class StagedSnapshotFeeder;

class ServerSession : public QObject {
    Q_OBJECT
public:
    // `names` is the catalog's name cache, shared by every session (one catalog per app).
    explicit ServerSession(CatalogNameCache& names, QObject* parent = nullptr);
    ~ServerSession() override;

    // Starts over on this server: forgets what the previous connection showed, then polls it.
    // label: how the server is called in messages and the history file (default: host/db from
    // the conninfo, secrets masked). readOnly: start read-only (production profiles do).
    // metricsUrls: /metrics endpoints of applications that use the library.
    void connectTo(const QString& conninfo, const QString& password = {}, const QString& label = {},
                   bool readOnly = false, const QList<QUrl>& metricsUrls = {});
    // Stops polling; the rows stay, greyed as of the last poll. reconnect() polls again with the
    // same connection (the password is kept in memory only).
    void disconnect();
    void reconnect();

    // The catalog's names changed (the shared name cache has the new snapshot): rename everything.
    void refreshNames();

    // Whether a view shows this session's locks model (default: shown). Hidden, it is not fed;
    // shown again, it takes the latest result at once (see the header).
    void setShown(bool shown);
    bool shown() const { return shown_; }

    // The app's naming rule with everything this session knows (catalog, locks taken here, names
    // learned from holders). namer() is that rule as a function for the models and views.
    LockName nameOf(const pglock::monitor::LockId& id, std::int64_t key,
                    const std::optional<pglock::monitor::HolderName>& current);
    const LockNamer& namer() const { return namer_; }

    QString label() const { return label_; }
    // `message` with the secrets of this connection string masked (libpq may quote it).
    QString redacted(const QString& message) const;
    // HH:mm:ss of the last good poll: what stale rows are "as of" (empty before the first).
    QString lastPollTime() const { return lastPollTime_; }
    bool stale() const;
    PollResultPtr latest() const { return latest_; }

    Poller& poller() { return poller_; }
    LocksModel& locksModel() { return *model_; }
    LockTreeModel& lockTreeModel() { return *treeModel_; }
    StagedSnapshotFeeder& locksFeeder() { return *feeder_; }
    // Some result has not reached every model yet: the locks view is staging one in, or the
    // charts wait for their turn. The first load ends when this turns false after the first poll.
    bool catchingUp() const;
    charts::ChartModels& chartModels() { return *charts_; }
    history::HistoryRecorder& historyRecorder() { return *history_; }
    MetricsScraper& metricsScraper() { return *scraper_; }
    MetricsModel& metricsModel() { return *metricsModel_; }
    // The scraped endpoints' claims against the polls: ghosts and leaks.
    ClaimsTracker& claimsTracker() { return *claims_; }
    LockController& lockController() { return *locks_; }
    BackendActions& backendActions() { return *backends_; }
    ReadOnlySwitch& readOnlySwitch() { return *readOnly_; }

signals:
    // A poll result reached the models (the locks view may still be staging it in): the views
    // show its labels, the summary and the selection's session.
    void resultArrived(const lockscope::PollResultPtr& result);
    // The poller's state; also re-sent (with no message) when a good poll ends a stale spell.
    void stateChanged(lockscope::PollState state, const QString& message);
    // connectTo() forgot the previous server: views drop what they derived from it.
    void cleared();

private:
    void onResult(const PollResultPtr& result);
    void onPollerState(PollState state, const QString& message);
    void feedCharts();
    void dropChartQueue();
    void feedLocksModel(const PollResultPtr& result);  // with the orphans' evidence

    CatalogNameCache& names_;
    HolderNames holderNames_;              // names holders carried, kept after they let go
    QHash<qint64, QByteArray> takenHere_;  // names of locks taken by hand in this session
    // Locks other libraries derive from this server's database (the latest poll's).
    std::shared_ptr<const pglock::monitor::ContextLocks> contextLocks_;
    LockNamer namer_;
    Poller poller_;
    ReadOnlySwitch* readOnly_;
    LockController* locks_;
    BackendActions* backends_;
    LocksModel* model_;
    LockTreeModel* treeModel_;  // root blockers and the sessions behind them
    StagedSnapshotFeeder* feeder_;  // every result reaches model_ through it (big ones in steps)
    charts::ChartModels* charts_;
    history::HistoryRecorder* history_;
    MetricsScraper* scraper_;
    MetricsModel* metricsModel_;
    ClaimsTracker* claims_;
    QTimer tick_;  // the Held-for cells count up between polls
    // Results the charts have not taken yet (see onResult): oldest first, each one fed in its own
    // event-loop turn by chartFeed_ (a zero timer, so timers and input get their turn between).
    std::deque<PollResultPtr> chartQueue_;
    QTimer chartFeed_;
    PollResultPtr latest_;
    bool shown_ = true;
    bool namesChangedWhileHidden_ = false;  // the locks model renames when shown again
    QString lastPollTime_;
    QString label_;
    // In memory only: its secrets are masked in every message shown about this connection.
    std::string conninfo_;
    QString password_;
};

}  // namespace lockscope
