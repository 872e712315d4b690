#include "session/server_session.hpp"

#include <QDateTime>
#include <QScopeGuard>

#include "actions/backend_actions.hpp"
#include "actions/lock_controller.hpp"
#include "actions/read_only_switch.hpp"
#include "charts/chart_models.hpp"
#include "history/history_recorder.hpp"
#include "metrics/claims_tracker.hpp"
#include "metrics/metrics_model.hpp"
#include "metrics/metrics_scraper.hpp"
#include "models/lock_tree_model.hpp"
#include "models/locks_model.hpp"
#include "models/server_text.hpp"
#include "models/staged_snapshot_feeder.hpp"
#include "pglock/conninfo.hpp"
#include "pglock/conninfo_secrets.hpp"
#include "stores/catalog_name_cache.hpp"

namespace lockscope {

ServerSession::ServerSession(CatalogNameCache& names, QObject* parent) : QObject(parent), names_(names) {
    readOnly_ = new ReadOnlySwitch(this);
    locks_ = new LockController(*readOnly_, this);
    backends_ = new BackendActions(*readOnly_, this);
    model_ = new LocksModel(this);
    feeder_ = new StagedSnapshotFeeder(model_, this);
    charts_ = new charts::ChartModels(this);
    // Every hold and wait the monitor sees ends up in a per-server SQLite file, written on the
    // recorder's own thread.
    history_ = new history::HistoryRecorder(this);
    scraper_ = new MetricsScraper(this);
    metricsModel_ = new MetricsModel(scraper_, this);
    claims_ = new ClaimsTracker(scraper_, this);

    // Every model names a lock through this one namer, so a lock has one name everywhere.
    namer_ = [this](const pglock::monitor::LockId& id, std::int64_t key,
                    const std::optional<pglock::monitor::HolderName>& current) { return nameOf(id, key, current); };
    model_->setNamer(namer_);
    treeModel_ = new LockTreeModel(this);
    treeModel_->setNamer(namer_);
    charts_->setNamer(namer_);
    history_->setNamer(namer_);

    // onResult first: it learns the holders' names the history then names its rows by.
    connect(&poller_, &Poller::resultReady, this, &ServerSession::onResult);
    connect(&poller_, &Poller::resultReady, history_, &history::HistoryRecorder::record);
    connect(&poller_, &Poller::stateChanged, this, &ServerSession::onPollerState);
    connect(locks_, &LockController::ownPidsChanged, this, [this] {
        model_->setOwnPids(locks_->ownPids());
        model_->refreshNames();  // a lock taken here names its key even when not catalogued
    });
    // What the applications report about hold durations joins the monitor's histogram.
    connect(metricsModel_, &MetricsModel::histogramsChanged, this, [this] {
        std::vector<charts::ScrapedHistogram> out;
        for (const auto& [name, h] : metricsModel_->histograms()) {
            out.push_back({QByteArray::fromStdString(name), h.upper_bounds, h.cumulative, h.sum, h.count});
        }
        charts_->setScrapedHistograms(out);
    });
    // Ghosts and leaks mark their lock's row.
    connect(claims_, &ClaimsTracker::changed, this, [this] {
        model_->setClaimMarks(claims_->marksByKey());
        // A leak is also its holder's orphan evidence ("unclaimed"), beside the poll's own.
        if (latest_) model_->setOrphanEvidence(claims_->withUnclaimed(latest_->orphans));
    });
    chartFeed_.setSingleShot(true);
    chartFeed_.setInterval(0);
    connect(&chartFeed_, &QTimer::timeout, this, &ServerSession::feedCharts);
    connect(feeder_, &StagedSnapshotFeeder::caughtUp, this, [this] {
        if (!chartQueue_.empty()) chartFeed_.start();
    });
    tick_.setInterval(1000);
    connect(&tick_, &QTimer::timeout, model_, &LocksModel::tick);
    tick_.start();
}

ServerSession::~ServerSession() = default;

void ServerSession::connectTo(const QString& conninfo, const QString& password, const QString& label, bool readOnly,
                              const QList<QUrl>& metricsUrls) {
    // Never the conninfo itself in titles or file names: it may carry a password. Its label is
    // masked too: a URI password with an unencoded '@' would otherwise pass for part of the host.
    conninfo_ = conninfo.toStdString();
    password_ = password;
    const QString server = QString::fromStdString(pglock::redact_secrets(pglock::conninfo_label(conninfo_), conninfo_));
    // Shown in titles, the picker, the Fleet table and the status line: the database name in it is
    // whatever its owner called it, so the label is shown by the display rule (server_text.hpp).
    label_ = label.isEmpty() ? (server.isEmpty() ? tr("(unparsable connection string)") : serverText(server)) : serverText(label);
    latest_.reset();
    holderNames_.clear();  // what this server's holders said
    contextLocks_.reset();  // what this server's database derives
    model_->clear();
    model_->setStale(false);
    treeModel_->clear();
    lastPollTime_.clear();
    dropChartQueue();
    charts_->clear();
    claims_->clear();
    readOnly_->set(readOnly);
    emit cleared();
    poller_.start(conninfo, password);
    locks_->setConnection(conninfo, password);
    backends_->setConnection(conninfo, password);
    history_->openProfile(label.isEmpty() ? server : label);
    scraper_->setEndpoints(metricsUrls);
    if (metricsUrls.isEmpty()) scraper_->stop();
    else scraper_->start();
}

void ServerSession::disconnect() {
    poller_.stop();
    // What the view shows is what the last poll saw: say so, as after a failed poll.
    if (!lastPollTime_.isEmpty()) model_->setStale(true);
}

void ServerSession::reconnect() {
    if (conninfo_.empty()) return;
    poller_.start(QString::fromStdString(conninfo_), password_);
}

void ServerSession::refreshNames() {
    model_->refreshNames();
    charts_->refreshNames();
}

bool ServerSession::stale() const { return model_->stale(); }

bool ServerSession::catchingUp() const { return feeder_->staging() || !chartQueue_.empty(); }

void ServerSession::onResult(const PollResultPtr& result) {
    // The previous result is freed on the poll thread once nothing here holds it any more.
    PollResultPtr previous = std::exchange(latest_, result);
    const auto release = qScopeGuard([this, &previous] { poller_.releaseOffThread(std::move(previous)); });
    // Names learned from holders first: the models below (and the history, connected after this
    // slot) name a lock by them, also once its holder is gone. The charts relabel only the few
    // lanes whose name changed.
    if (const auto learned = holderNames_.learn(*result->snapshot); !learned.empty()) charts_->relabel(learned);
    // The database's context-derived locks, re-read once a minute: rename only when they differ.
    if (result->context_locks && result->context_locks != contextLocks_) {
        const bool differ = !contextLocks_ || !(*contextLocks_ == *result->context_locks);
        contextLocks_ = result->context_locks;
        if (differ && shown_ && model_->rowCount() > 0) refreshNames();
        if (differ && !shown_) {
            namesChangedWhileHidden_ = true;  // the locks model renames when shown
            charts_->refreshNames();
        }
    }
    // Hidden, the locks model waits for setShown(true), which feeds it the latest result: 50
    // servers' merges a second for one view. The tree is small (built on the poll thread) and its
    // worst root is watched also for servers not shown.
    if (shown_) feedLocksModel(result);
    claims_->onPoll(*result->snapshot);
    treeModel_->setResult(result);
    // The charts take the result in a later event-loop turn, not in this one: the first poll of
    // 10,000 locks would otherwise be one block of locks model + 10,000 timeline lanes, and every
    // later poll would add the charts' merge to the model's. Every result reaches them, in order
    // (their holds that ended are in no other result).
    // While the locks model is being staged the charts wait for it: their first poll of 10,000
    // lanes in the same turn as a staged step would make that turn as long as the one avoided.
    chartQueue_.push_back(result);
    if (!chartFeed_.isActive() && !feeder_->staging()) chartFeed_.start();
    lastPollTime_ = QDateTime::currentDateTime().toString(QStringLiteral("HH:mm:ss"));
    if (model_->stale()) {
        model_->setStale(false);
        emit stateChanged(poller_.state(), QString());
    }
    emit resultArrived(result);
}

void ServerSession::feedLocksModel(const PollResultPtr& result) {
    model_->setOrphanEvidence(claims_->withUnclaimed(result->orphans));  // a leak is evidence too
    // A result that adds thousands of locks (the first poll, a reconnect) reaches the locks model
    // over several event-loop turns (StagedSnapshotFeeder); the model takes the hold start times
    // from the same result.
    feeder_->feedResult(result);
}

void ServerSession::setShown(bool shown) {
    if (shown == shown_) return;
    shown_ = shown;
    if (!shown_) {
        tick_.stop();
        return;
    }
    tick_.start();
    if (latest_) feedLocksModel(latest_);
    if (std::exchange(namesChangedWhileHidden_, false)) model_->refreshNames();
}

void ServerSession::onPollerState(PollState state, const QString& message) {
    const bool pollFailed = state == PollState::connected && message.startsWith(QStringLiteral("poll failed"));
    // The moment a poll fails what the models hold is history: the rows turn stale.
    if ((state == PollState::disconnected || pollFailed) && !lastPollTime_.isEmpty()) model_->setStale(true);
    emit stateChanged(state, message);
}

void ServerSession::feedCharts() {
    if (chartQueue_.empty() || feeder_->staging()) return;  // caughtUp restarts the feed
    PollResultPtr next = std::move(chartQueue_.front());
    chartQueue_.pop_front();
    charts_->addPoll(next);
    poller_.releaseOffThread(std::move(next));
    if (!chartQueue_.empty()) chartFeed_.start();
}

void ServerSession::dropChartQueue() {
    while (!chartQueue_.empty()) {
        poller_.releaseOffThread(std::move(chartQueue_.front()));
        chartQueue_.pop_front();
    }
}

QString ServerSession::redacted(const QString& message) const {
    return QString::fromStdString(pglock::redact_secrets(message.toStdString(), conninfo_));
}

LockName ServerSession::nameOf(const pglock::monitor::LockId& id, std::int64_t key,
                               const std::optional<pglock::monitor::HolderName>& current) {
    NameFacts facts;
    if (id.form == pglock::monitor::KeyForm::bigint) {
        facts.catalog = names_.names(key);
        // Not catalogued, but taken by hand here: this app knows the name it hashed, and keeps
        // knowing it after the release (the timeline and the history show the lock then, and
        // My locks may have dropped the entry by the time they ask).
        for (const auto& own : locks_->locks())
            if (own.key == key && own.heldAt.isValid()) takenHere_.insert(key, own.name);
        if (const auto it = takenHere_.constFind(key); it != takenHere_.cend()) facts.takenHere = *it;
        if (contextLocks_)
            if (const auto* derived = contextLocks_->find(key)) facts.context = QByteArray::fromStdString(derived->label);
        // A verified name wins over a cut one, whether it is the current holder's or remembered.
        const auto remembered = holderNames_.find(key);
        facts.holder = current && (current->verified || !remembered || !remembered->verified) ? current : remembered;
    }
    return decideLockName(id, key, facts);
}

}  // namespace lockscope
