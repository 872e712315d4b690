#include "widgets/main_window.hpp"

#include <QAction>
#include <QApplication>
#include <QClipboard>
#include <QDateTime>
#include <QDoubleSpinBox>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QMenu>
#include <QMessageBox>
#include <QScopeGuard>
#include <QSplitter>
#include <QStatusBar>
#include <QTabWidget>
#include <QToolBar>
#include <QTreeView>
#include <QVBoxLayout>

#include "actions/backend_actions.hpp"
#include "actions/lock_controller.hpp"
#include "actions/read_only_switch.hpp"
#include "charts/charts_panel.hpp"
#include "history/history_panel.hpp"
#include "history/history_recorder.hpp"
#include "metrics/metrics_model.hpp"
#include "metrics/metrics_panel.hpp"
#include "metrics/metrics_scraper.hpp"
#include "models/locks_filter_proxy.hpp"
#include "models/locks_model.hpp"
#include "models/staged_snapshot_feeder.hpp"
#include "pglock/conninfo.hpp"
#include "pglock/conninfo_secrets.hpp"
#include "pglock/key.hpp"
#include "catalog/catalog_service.hpp"
#include "stores/catalog_name_cache.hpp"
#include "stores/catalog_store.hpp"
#include "stores/name_import.hpp"
#include "widgets/catalog_panel.hpp"
#include "widgets/connection_dialog.hpp"
#include "widgets/locks_view_layout.hpp"
#include "widgets/my_locks_panel.hpp"
#include "widgets/name_input.hpp"
#include "widgets/plain_message_box.hpp"
#include "widgets/resolver_panel.hpp"
#include "widgets/session_panel.hpp"
#include "widgets/summary_strip.hpp"
#include "theme/app_palette.hpp"

namespace lockscope {

MainWindow::MainWindow(CatalogStore& catalog, QWidget* parent) : QMainWindow(parent), catalog_(catalog) {
    setWindowTitle(tr("lockscope"));
    resize(1440, 780);

    // Every catalog read and write of the window runs on the service's worker; the names come
    // back as snapshots, which the name cache answers from.
    catalogService_ = new CatalogService(catalog_, this);
    names_ = new CatalogNameCache(this);
    readOnly_ = new ReadOnlySwitch(this);
    locks_ = new LockController(*readOnly_, this);
    backends_ = new BackendActions(*readOnly_, this);

    model_ = new LocksModel(this);
    feeder_ = new StagedSnapshotFeeder(model_, this);
    // Every view names a lock through this one namer (lock_naming.hpp), so a lock has one name.
    namer_ = [this](const pglock::monitor::LockId& id, std::int64_t key,
                    const std::optional<pglock::monitor::HolderName>& current) { return nameOf(id, key, current); };
    model_->setNamer(namer_);
    model_->setHeldSinceProvider([this](const pglock::monitor::LockId& lock, int pid) -> std::optional<double> {
        return latest_ ? latest_->heldSince(lock, pid) : std::nullopt;
    });
    proxy_ = new LocksFilterProxy(this);
    proxy_->setSourceModel(model_);

    view_ = new QTreeView(this);
    view_->setObjectName(QStringLiteral("locksView"));
    view_->setModel(proxy_);
    view_->setSortingEnabled(true);
    view_->sortByColumn(LocksModel::Name, Qt::AscendingOrder);
    view_->setUniformRowHeights(true);  // cheap layout at 10k rows
    view_->setAlternatingRowColors(true);
    // A long name keeps its end in view: "(from holder)" and the tail that tells names apart.
    view_->setTextElideMode(Qt::ElideMiddle);
    view_->setSelectionBehavior(QAbstractItemView::SelectRows);
    view_->setContextMenuPolicy(Qt::CustomContextMenu);
    setUpLocksColumns(*view_);

    tabs_ = new QTabWidget(this);
    session_ = new SessionPanel(this);
    session_->setNamer(namer_);
    resolver_ = new ResolverPanel(this);
    resolver_->setNamesForKey([this](qint64 key) { return catalogNames(key); });
    catalogPanel_ = new CatalogPanel(*catalogService_, this);
    myLocks_ = new MyLocksPanel(*locks_, *readOnly_, this);
    addSidePanel(*tabs_, session_, tr("Session"));
    addSidePanel(*tabs_, myLocks_, tr("My locks"));
    addSidePanel(*tabs_, resolver_, tr("Resolver"));
    addSidePanel(*tabs_, catalogPanel_, tr("Catalog"));

    auto* split = new QSplitter(Qt::Horizontal, this);
    split->addWidget(view_);
    split->addWidget(tabs_);
    split->setObjectName(QStringLiteral("locksSplitter"));
    setUpSidePanelSplitter(*split, QStringLiteral("mainWindow/sidePanel"));
    charts_ = new charts::ChartsPanel(this);
    charts_->setNamer(namer_);
    mainTabs_ = new QTabWidget(this);
    mainTabs_->setObjectName(QStringLiteral("mainTabs"));
    mainTabs_->setDocumentMode(true);
    summary_ = new SummaryStrip(
        [this](const pglock::monitor::LockId& id) {
            const QModelIndex index = model_->indexOfLock(id, LocksModel::Name);
            return index.isValid() ? index.data().toString() : tr("key %1").arg(pglock::key_of(id.tag));
        },
        this);
    connect(summary_, &SummaryStrip::longestWaitClicked, this, [this](const pglock::monitor::LockId& id) { selectLock(id); });
    auto* locksPage = new QWidget(this);
    auto* locksColumn = new QVBoxLayout(locksPage);
    locksColumn->setContentsMargins(0, 0, 0, 0);
    locksColumn->setSpacing(2);
    locksColumn->addWidget(summary_);
    locksColumn->addWidget(split, 1);
    mainTabs_->addTab(locksPage, tr("Locks"));
    mainTabs_->addTab(charts_, tr("Charts"));
    // Every hold and wait the monitor sees ends up in a per-server SQLite file, written on the
    // recorder's own thread.
    history_ = new history::HistoryRecorder(this);
    history_->setNamer(namer_);
    historyPanel_ = new history::HistoryPanel(history_, this);
    mainTabs_->addTab(historyPanel_, tr("History"));
    connect(history_, &history::HistoryRecorder::failed, this,
            [this](const QString& message) { statusBar()->showMessage(tr("History: %1").arg(message), 10000); });
    scraper_ = new MetricsScraper(this);
    metricsModel_ = new MetricsModel(scraper_, this);
    metricsPanel_ = new MetricsPanel(scraper_, metricsModel_, this);
    mainTabs_->addTab(metricsPanel_, tr("App metrics"));
    // What the applications report about hold durations joins the monitor's histogram.
    connect(metricsModel_, &MetricsModel::histogramsChanged, this, [this] {
        std::vector<charts::ScrapedHistogram> out;
        for (const auto& [name, h] : metricsModel_->histograms()) {
            out.push_back({QByteArray::fromStdString(name), h.upper_bounds, h.cumulative, h.sum, h.count});
        }
        charts_->setScrapedHistograms(out);
    });
    setCentralWidget(mainTabs_);

    buildActions();
    buildStatusBar();
    buildKeyboard();
    applySettings(AppSettings::load());
    interval_->setValue(settings_.pollIntervalSeconds);

    connect(&poller_, &Poller::resultReady, this, &MainWindow::onResult);
    connect(&poller_, &Poller::resultReady, history_, &history::HistoryRecorder::record);
    connect(&poller_, &Poller::stateChanged, this, &MainWindow::onState);
    connect(view_->selectionModel(), &QItemSelectionModel::currentChanged, this, &MainWindow::onSelection);
    connect(view_, &QTreeView::customContextMenuRequested, this, &MainWindow::showContextMenu);
    connect(catalogService_, &CatalogService::snapshotChanged, this, [this](const CatalogSnapshotPtr& snapshot) {
        names_->setSnapshot(snapshot);  // first: the others read the new names from it
        model_->refreshNames();
        charts_->refreshNames();
        resolver_->setText(resolver_->text());
    });
    // The window's own adds (name a key, keep a holder's name) report a failure in the status bar.
    connect(catalogService_, &CatalogService::finished, this, [this](const CatalogService::Result& r) {
        if (!catalogJobs_.remove(r.id) || r.ok || r.added == CatalogStore::AddResult::duplicate) return;
        statusBar()->showMessage(tr("Catalog: %1").arg(r.error), 10000);
    });
    chartFeed_.setSingleShot(true);
    chartFeed_.setInterval(0);
    connect(&chartFeed_, &QTimer::timeout, this, &MainWindow::feedCharts);
    connect(feeder_, &StagedSnapshotFeeder::caughtUp, this, [this] {
        if (!chartQueue_.empty()) chartFeed_.start();
    });
    tick_.setInterval(1000);
    connect(&tick_, &QTimer::timeout, model_, &LocksModel::tick);
    tick_.start();
}

MainWindow::~MainWindow() = default;

void MainWindow::buildActions() {
    auto* bar = addToolBar(tr("Main"));
    bar->setObjectName(QStringLiteral("mainToolBar"));
    bar->setMovable(false);
    auto* connectAction = bar->addAction(tr("Connect…"));
    connect(connectAction, &QAction::triggered, this, &MainWindow::openConnectionDialog);
    buildOperatorActions(bar);
    pause_ = bar->addAction(tr("Pause"));
    pause_->setCheckable(true);
    connect(pause_, &QAction::toggled, this, [this](bool paused) { poller_.setPaused(paused); });
    bar->addSeparator();
    bar->addWidget(new QLabel(tr(" Poll every "), this));
    interval_ = new QDoubleSpinBox(this);
    interval_->setObjectName(QStringLiteral("pollInterval"));
    interval_->setRange(0.25, 60.0);
    interval_->setSingleStep(0.25);
    interval_->setDecimals(2);
    interval_->setSuffix(tr(" s"));
    interval_->setValue(1.0);
    connect(interval_, &QDoubleSpinBox::valueChanged, this, [this](double seconds) {
        poller_.setInterval(std::chrono::milliseconds(static_cast<long long>(seconds * 1000.0)));
    });
    bar->addWidget(interval_);
    bar->addSeparator();
    filter_ = new QLineEdit(this);
    filter_->setObjectName(QStringLiteral("locksFilter"));
    filter_->setPlaceholderText(tr("Filter: name, key, pid, application"));
    filter_->setClearButtonEnabled(true);
    filter_->setMaximumWidth(320);
    connect(filter_, &QLineEdit::textChanged, proxy_, &LocksFilterProxy::setFilterText);
    bar->addWidget(filter_);
}

void MainWindow::buildStatusBar() {
    stateLabel_ = new QLabel(tr("not connected"), this);
    stateLabel_->setTextFormat(Qt::PlainText);  // shows server or user text: never as HTML (plain_text.hpp)
    stateLabel_->setObjectName(QStringLiteral("stateLabel"));
    serverLabel_ = new QLabel(this);
    standbyLabel_ = new QLabel(this);
    standbyLabel_->setObjectName(QStringLiteral("standbyLabel"));
    standbyLabel_->setStyleSheet(QStringLiteral("color: white; background: #b00020; padding: 0 6px"));
    standbyLabel_->hide();
    pollLabel_ = new QLabel(this);
    rowsLabel_ = new QLabel(this);
    rowsLabel_->setObjectName(QStringLiteral("rowsLabel"));
    statusBar()->addWidget(stateLabel_, 1);
    statusBar()->addPermanentWidget(standbyLabel_);
    statusBar()->addPermanentWidget(serverLabel_);
    statusBar()->addPermanentWidget(pollLabel_);
    statusBar()->addPermanentWidget(rowsLabel_);
}

void MainWindow::openConnectionDialog() {
    ConnectionDialog dialog(profiles_, this);
    if (dialog.exec() != QDialog::Accepted) return;
    const ConnectionProfile p = dialog.profile();
    if (!releaseBeforeLeaving(tr("Connecting elsewhere"))) return;
    QList<QUrl> urls;
    for (const QString& url : p.metricsUrls) urls << QUrl(url);
    connectTo(p.toConninfo(), dialog.password(), p.name, p.readOnly, urls);
}

void MainWindow::connectTo(const QString& conninfo, const QString& password, const QString& label, bool readOnly,
                           const QList<QUrl>& metricsUrls) {
    // Never the conninfo itself in titles or file names: it may carry a password. Its label is
    // masked too: a URI password with an unencoded '@' would otherwise pass for part of the host.
    conninfo_ = conninfo.toStdString();
    const QString server = QString::fromStdString(pglock::redact_secrets(pglock::conninfo_label(conninfo_), conninfo_));
    connectionLabel_ = label.isEmpty() ? (server.isEmpty() ? tr("(unparsable connection string)") : server) : label;
    latest_.reset();
    holderNames_.clear();  // what this server's holders said
    model_->clear();
    summary_->clear();
    model_->setStale(false);
    lastPollTime_.clear();
    while (!chartQueue_.empty()) {
        poller_.releaseOffThread(std::move(chartQueue_.front()));
        chartQueue_.pop_front();
    }
    charts_->clear();
    readOnly_->set(readOnly);
    poller_.start(conninfo, password);
    locks_->setConnection(conninfo, password);
    backends_->setConnection(conninfo, password);
    history_->openProfile(label.isEmpty() ? server : label);
    scraper_->setEndpoints(metricsUrls);
    if (metricsUrls.isEmpty()) scraper_->stop();
    else scraper_->start();
    setWindowTitle(tr("lockscope — %1").arg(connectionLabel_));
}

QStringList MainWindow::tabNames() {
    return {QStringLiteral("locks"),   QStringLiteral("timeline"), QStringLiteral("histogram"),
            QStringLiteral("history"), QStringLiteral("metrics"),  QStringLiteral("session"),
            QStringLiteral("mylocks"), QStringLiteral("resolver"), QStringLiteral("catalog")};
}

bool MainWindow::showTab(const QString& name) {
    if (!tabNames().contains(name)) return false;
    mainTabs_->setCurrentIndex(0);
    if (name == QLatin1String("timeline") || name == QLatin1String("histogram")) {
        mainTabs_->setCurrentWidget(charts_);
        charts_->tabs()->setCurrentIndex(name == QLatin1String("timeline") ? 0 : 1);
        return true;
    }
    if (name == QLatin1String("history")) {
        mainTabs_->setCurrentWidget(historyPanel_);
        return true;
    }
    if (name == QLatin1String("metrics")) {
        mainTabs_->setCurrentWidget(metricsPanel_);
        return true;
    }
    if (name == QLatin1String("locks")) return true;
    if (name == QLatin1String("resolver")) showSidePanel(*tabs_, resolver_);
    else if (name == QLatin1String("catalog")) showSidePanel(*tabs_, catalogPanel_);
    else if (name == QLatin1String("mylocks")) showSidePanel(*tabs_, myLocks_);
    else showSidePanel(*tabs_, session_);
    return true;
}

void MainWindow::onResult(const PollResultPtr& result) {
    // The previous result is freed on the poll thread once nothing here holds it any more.
    PollResultPtr previous = std::exchange(latest_, result);
    const auto release = qScopeGuard([this, &previous] { poller_.releaseOffThread(std::move(previous)); });
    const auto& snap = *result->snapshot;
    // Names learned from holders first: the views below (and the history, connected after this
    // slot) name a lock by them, also once its holder is gone. The charts relabel only the few
    // lanes whose name changed.
    if (const auto learned = holderNames_.learn(snap); !learned.empty()) charts_->relabel(learned);
    // A result that adds thousands of locks (the first poll, a reconnect) reaches the locks view
    // over several event-loop turns (StagedSnapshotFeeder); the labels below count the whole result.
    feeder_->feed(result->snapshot);
    summary_->show(summarize(*result, summaryThresholds()), summaryThresholds());
    // The charts take the result in a later event-loop turn, not in this one: the first poll of
    // 10,000 locks would otherwise be one block of locks model + 10,000 timeline lanes, and every
    // later poll would add the charts' merge to the model's. Every result reaches them, in order
    // (their holds that ended are in no other result).
    // While the locks view is being staged the charts wait for it: their first poll of 10,000
    // lanes in the same turn as a staged step would make that turn as long as the one avoided.
    chartQueue_.push_back(result);
    if (!chartFeed_.isActive() && !feeder_->staging()) chartFeed_.start();
    const int major = snap.server_version / 10000;
    const int minor = snap.server_version % 10000;
    serverLabel_->setText(tr("PostgreSQL %1.%2").arg(major).arg(minor));
    standbyLabel_->setText(tr("STANDBY: advisory locks here are local to this server"));
    standbyLabel_->setVisible(snap.in_recovery);
    lastPollTime_ = QDateTime::currentDateTime().toString(QStringLiteral("HH:mm:ss"));
    if (model_->stale()) {
        model_->setStale(false);
        onState(poller_.state(), QString());
    }
    pollLabel_->setText(tr("polled %1 in %2 ms").arg(lastPollTime_).arg(snap.latency_ms, 0, 'f', 1));
    std::size_t waiters = 0;
    for (const auto& lock : snap.locks) waiters += lock.waiters.size();
    rowsLabel_->setText(tr("%1, %2 waiting").arg(counted(static_cast<qint64>(snap.locks.size()), tr("lock"), tr("locks"))).arg(waiters));
    resolver_->setLatest(result);
    // The selected row may have a new holder by now: follow the row, not the old pid.
    onSelection();
}

void MainWindow::feedCharts() {
    if (chartQueue_.empty() || feeder_->staging()) return;  // caughtUp restarts the feed
    PollResultPtr next = std::move(chartQueue_.front());
    chartQueue_.pop_front();
    charts_->addPoll(next);
    poller_.releaseOffThread(std::move(next));
    if (!chartQueue_.empty()) chartFeed_.start();
}

QString MainWindow::redacted(const QString& message) const {
    return QString::fromStdString(pglock::redact_secrets(message.toStdString(), conninfo_));
}

void MainWindow::onState(PollState state, const QString& message) {
    QString text;
    switch (state) {
        case PollState::stopped: text = tr("not connected"); break;
        case PollState::connecting: text = tr("connecting to %1…").arg(connectionLabel_); break;
        case PollState::connected: text = tr("connected to %1").arg(connectionLabel_); break;
        case PollState::disconnected: text = tr("disconnected: %1").arg(redacted(message)); break;
    }
    const bool pollFailed = state == PollState::connected && message.startsWith(QStringLiteral("poll failed"));
    if (state == PollState::connected && !message.isEmpty() && message != QStringLiteral("connected")) text += QStringLiteral(" — ") + redacted(message);
    // The moment a poll fails what the view shows is history: say so, and since when.
    if ((state == PollState::disconnected || pollFailed) && !lastPollTime_.isEmpty()) model_->setStale(true);
    if (model_->stale()) {
        text += tr(" — showing the locks as of %1").arg(lastPollTime_);
        pollLabel_->setText(tr("stale: as of %1").arg(lastPollTime_));
    }
    stateLabel_->setText(text);
    stateLabel_->setStyleSheet(state == PollState::disconnected ? QStringLiteral("color: %1").arg(theme::errorText().name()) : QString());
}

SummaryThresholds MainWindow::summaryThresholds() const {
    return {model_->longWaitThreshold(), model_->longHoldThreshold(), model_->idleInTransactionThreshold(), model_->xminPinThreshold()};
}

void MainWindow::selectLock(const pglock::monitor::LockId& id) {
    const QModelIndex index = proxy_->mapFromSource(model_->indexOfLock(id));
    if (!index.isValid()) return;  // filtered out, or not in the view yet
    mainTabs_->setCurrentIndex(0);
    view_->expand(index);
    view_->setCurrentIndex(index);
    view_->scrollTo(index);
    view_->setFocus();
}

void MainWindow::onSelection() {
    const QModelIndex index = view_->currentIndex();
    if (!index.isValid()) {
        session_->show(latest_, 0);
        return;
    }
    const QList<int> pids = index.data(LocksModel::PidsRole).value<QList<int>>();
    session_->show(latest_, pids.isEmpty() ? 0 : pids.first());
}

void MainWindow::showContextMenu(const QPoint& pos) {
    const QModelIndex index = view_->indexAt(pos);
    if (!index.isValid()) return;
    const qint64 key = index.data(LocksModel::KeyRole).toLongLong();
    const bool unknown = index.data(LocksModel::IsUnknownRole).toBool();
    QMenu menu(this);
    const bool waiter = index.data(LocksModel::IsWaiterRole).toBool();
    const QByteArray fromHolder = index.data(LocksModel::HolderNameRole).toByteArray();
    if (unknown && !waiter) {
        // A holder's cut name is a good start for the real one.
        menu.addAction(tr("Name this key…"), this, [this, key, fromHolder] { nameUnknownKey(key, QString::fromUtf8(fromHolder)); });
    } else if (!waiter && index.data(LocksModel::NameSourceRole).toString() == QLatin1String("holder")) {
        // Verified by the model (it hashes to the key): keep it for when nobody holds the lock.
        menu.addAction(tr("Add the holder's name to the catalog"), this, [this, fromHolder] { addToCatalog(fromHolder); });
    }
    menu.addAction(tr("Copy key"), this, [key] { QApplication::clipboard()->setText(QString::number(key)); });
    const QString keyText = index.siblingAtColumn(LocksModel::Key).data().toString();
    menu.addAction(tr("Open in resolver"), this, [this, key, keyText] {
        resolver_->setText(keyText.isEmpty() ? QString::number(key) : keyText);
        showSidePanel(*tabs_, resolver_);
    });
    addBackendActions(menu, index);
    menu.exec(view_->viewport()->mapToGlobal(pos));
}

void MainWindow::nameUnknownKey(qint64 key, const QString& start) {
    const std::optional<QString> typed =
        askName(this, tr("Name this key"), tr("The lock name whose key is %1 (it is checked by hashing):").arg(key), start);
    if (!typed || typed->isEmpty()) return;
    const QString& name = *typed;
    const QByteArray bytes = name.toUtf8();
    if (pglock::key_of(std::string_view(bytes.constData(), static_cast<std::size_t>(bytes.size()))) != key) {
        showPlainMessage(this, QMessageBox::Warning, tr("Name this key"),
                         tr("\"%1\" hashes to a different key, so it is not this lock's name.").arg(elideMiddle(name)));
        return;
    }
    addToCatalog(bytes);
}

LockName MainWindow::nameOf(const pglock::monitor::LockId& id, std::int64_t key,
                            const std::optional<pglock::monitor::HolderName>& current) {
    NameFacts facts;
    if (id.form == pglock::monitor::KeyForm::bigint) {
        facts.catalog = names_->names(key);
        // Not catalogued, but taken by hand here: this app knows the name it hashed, and keeps
        // knowing it after the release (the timeline and the history show the lock then, and
        // My locks may have dropped the entry by the time they ask).
        for (const auto& own : locks_->locks())
            if (own.key == key && own.heldAt.isValid()) takenHere_.insert(key, own.name);
        if (const auto it = takenHere_.constFind(key); it != takenHere_.cend()) facts.takenHere = *it;
        // A verified name wins over a cut one, whether it is the current holder's or remembered.
        const auto remembered = holderNames_.find(key);
        facts.holder = current && (current->verified || !remembered || !remembered->verified) ? current : remembered;
    }
    return decideLockName(id, key, facts);
}

void MainWindow::addToCatalog(const QByteArray& name) { catalogJobs_.insert(catalogService_->add(name)); }

QStringList MainWindow::catalogNames(qint64 key) const {
    QStringList out;
    for (const QByteArray& name : names_->names(key)) out << QString::fromUtf8(name);
    return out;
}

}  // namespace lockscope
