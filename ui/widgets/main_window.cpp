#include "widgets/main_window.hpp"

#include <QAction>
#include <QApplication>
#include <QComboBox>
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
#include <QStackedWidget>
#include <QStatusBar>
#include <QTabWidget>
#include <QToolBar>
#include <QTreeView>
#include <QVBoxLayout>

#include "actions/backend_actions.hpp"
#include "actions/lock_controller.hpp"
#include "actions/read_only_switch.hpp"
#include "charts/charts_panel.hpp"
#include "fleet/fleet_model.hpp"
#include "fleet/fleet_panel.hpp"
#include "history/history_panel.hpp"
#include "history/history_recorder.hpp"
#include "metrics/claims_tracker.hpp"
#include "metrics/endpoint_status_model.hpp"
#include "metrics/metrics_model.hpp"
#include "metrics/metrics_panel.hpp"
#include "metrics/metrics_scraper.hpp"
#include "models/locks_filter_proxy.hpp"
#include "models/locks_model.hpp"
#include "models/server_text.hpp"
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
#include "widgets/lock_tree_panel.hpp"
#include "widgets/locks_tree_view.hpp"
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
    fleet_ = new FleetModel(this);
    // The server this window shows first: its poller, models and controllers. openServer() adds more.
    server_ = addSession();
    readOnly_ = &server_->readOnlySwitch();
    locks_ = &server_->lockController();
    backends_ = &server_->backendActions();
    model_ = &server_->locksModel();
    // Every view names a lock through the session's one namer (lock_naming.hpp), so a lock has one name.
    const LockNamer& namer = server_->namer();

    proxy_ = new LocksFilterProxy(this);
    proxy_->setSourceModel(model_);

    view_ = new LocksTreeView(this);
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
    session_->setNamer(namer);
    resolver_ = new ResolverPanel(this);
    resolver_->setNamesForKey([this](qint64 key) { return catalogNames(key); });
    catalogPanel_ = new CatalogPanel(*catalogService_, this);
    // The per-server panels sit in stacks: switching servers shows another panel of each stack.
    chartsStack_ = new QStackedWidget(this);
    historyStack_ = new QStackedWidget(this);
    metricsStack_ = new QStackedWidget(this);
    myLocksStack_ = new QStackedWidget(this);
    myLocksStack_->setObjectName(QStringLiteral("myLocksStack"));
    treeStack_ = new QStackedWidget(this);
    const SessionViews& first = viewsOf(server_);
    myLocks_ = first.myLocks;
    charts_ = first.charts;
    historyPanel_ = first.history;
    metricsPanel_ = first.metrics;
    treePanel_ = first.tree;
    addSidePanel(*tabs_, session_, tr("Session"));
    addSidePanel(*tabs_, myLocksStack_, tr("My locks"));
    addSidePanel(*tabs_, resolver_, tr("Resolver"));
    addSidePanel(*tabs_, catalogPanel_, tr("Catalog"));

    auto* split = new QSplitter(Qt::Horizontal, this);
    split->addWidget(view_);
    split->addWidget(tabs_);
    split->setObjectName(QStringLiteral("locksSplitter"));
    setUpSidePanelSplitter(*split, QStringLiteral("mainWindow/sidePanel"));
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
    // The lock tree beside the flat list: root blockers first, chains across lock types.
    mainTabs_->addTab(treeStack_, tr("Tree"));
    mainTabs_->addTab(chartsStack_, tr("Charts"));
    mainTabs_->addTab(historyStack_, tr("History"));
    mainTabs_->addTab(metricsStack_, tr("App metrics"));
    fleetPanel_ = new FleetPanel(*fleet_, this);
    mainTabs_->addTab(fleetPanel_, tr("Fleet"));
    connect(fleetPanel_, &FleetPanel::serverActivated, this, [this](ServerSession* session) {
        setCurrentSession(session);
        mainTabs_->setCurrentIndex(0);
    });
    setCentralWidget(mainTabs_);

    buildActions();
    buildStatusBar();
    buildKeyboard();
    applySettings(AppSettings::load());
    interval_->setValue(settings_.pollIntervalSeconds);

    bindCurrentSession();
    connect(view_->selectionModel(), &QItemSelectionModel::currentChanged, this, &MainWindow::onSelection);
    connect(view_, &QTreeView::customContextMenuRequested, this, &MainWindow::showContextMenu);
    connect(catalogService_, &CatalogService::snapshotChanged, this, [this](const CatalogSnapshotPtr& snapshot) {
        names_->setSnapshot(snapshot);  // first: the sessions read the new names from it
        for (ServerSession* session : sessions_) session->refreshNames();
        resolver_->setText(resolver_->text());
    });
    // The window's own adds (name a key, keep a holder's name) report a failure in the status bar.
    connect(catalogService_, &CatalogService::finished, this, [this](const CatalogService::Result& r) {
        if (!catalogJobs_.remove(r.id) || r.ok || r.added == CatalogStore::AddResult::duplicate) return;
        statusBar()->showMessage(tr("Catalog: %1").arg(r.error), 10000);
    });
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
    // Pause and the interval are the window's: every server's poller follows them.
    connect(pause_, &QAction::toggled, this, [this](bool paused) {
        for (ServerSession* session : sessions_) session->poller().setPaused(paused);
    });
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
        for (ServerSession* session : sessions_)
            session->poller().setInterval(std::chrono::milliseconds(static_cast<long long>(seconds * 1000.0)));
    });
    bar->addWidget(interval_);
    bar->addSeparator();
    serverPicker_ = new QComboBox(this);
    serverPicker_->setObjectName(QStringLiteral("serverPicker"));
    serverPicker_->setToolTip(tr("The server the Locks, Charts, History and App metrics tabs show"));
    serverPicker_->setSizeAdjustPolicy(QComboBox::AdjustToContents);
    connect(serverPicker_, &QComboBox::activated, this, [this](int index) {
        if (index >= 0 && index < sessions_.size()) setCurrentSession(sessions_.at(index));
    });
    serverPickerAction_ = bar->addWidget(serverPicker_);
    serverPickerAction_->setVisible(false);
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
    for (const QString& name : dialog.alsoOpen()) {
        const ConnectionProfile other = profiles_.load(name);
        QList<QUrl> otherUrls;
        for (const QString& url : other.metricsUrls) otherUrls << QUrl(url);
        openServer(other.toConninfo(), {}, other.name, other.readOnly, otherUrls);
    }
    if (!dialog.alsoOpen().isEmpty()) showTab(QStringLiteral("fleet"));
}

void MainWindow::connectTo(const QString& conninfo, const QString& password, const QString& label, bool readOnly,
                           const QList<QUrl>& metricsUrls) {
    server_->connectTo(conninfo, password, label, readOnly, metricsUrls);
    setWindowTitle(tr("lockscope — %1").arg(server_->label()));
    refreshServerPicker();
}

QStringList MainWindow::tabNames() {
    return {QStringLiteral("locks"),   QStringLiteral("tree"), QStringLiteral("timeline"), QStringLiteral("histogram"),
            QStringLiteral("history"), QStringLiteral("metrics"),  QStringLiteral("session"),
            QStringLiteral("mylocks"), QStringLiteral("resolver"), QStringLiteral("catalog"), QStringLiteral("fleet")};
}

bool MainWindow::showTab(const QString& name) {
    if (!tabNames().contains(name)) return false;
    mainTabs_->setCurrentIndex(0);
    if (name == QLatin1String("timeline") || name == QLatin1String("histogram")) {
        mainTabs_->setCurrentWidget(chartsStack_);
        charts_->tabs()->setCurrentIndex(name == QLatin1String("timeline") ? 0 : 1);
        return true;
    }
    if (name == QLatin1String("tree")) {
        mainTabs_->setCurrentWidget(treeStack_);
        return true;
    }
    if (name == QLatin1String("history")) {
        mainTabs_->setCurrentWidget(historyStack_);
        return true;
    }
    if (name == QLatin1String("metrics")) {
        mainTabs_->setCurrentWidget(metricsStack_);
        return true;
    }
    if (name == QLatin1String("fleet")) {
        mainTabs_->setCurrentWidget(fleetPanel_);
        return true;
    }
    if (name == QLatin1String("locks")) return true;
    if (name == QLatin1String("resolver")) showSidePanel(*tabs_, resolver_);
    else if (name == QLatin1String("catalog")) showSidePanel(*tabs_, catalogPanel_);
    else if (name == QLatin1String("mylocks")) showSidePanel(*tabs_, myLocksStack_);
    else showSidePanel(*tabs_, session_);
    return true;
}

void MainWindow::onResult(const PollResultPtr& result) {
    const auto& snap = *result->snapshot;
    // The session has fed its models; the labels below count the whole result, also while the
    // locks view is still being staged.
    summary_->show(summarize(*result, summaryThresholds()), summaryThresholds());
    const int major = snap.server_version / 10000;
    const int minor = snap.server_version % 10000;
    serverLabel_->setText(tr("PostgreSQL %1.%2").arg(major).arg(minor));
    standbyLabel_->setText(tr("STANDBY: advisory locks here are local to this server"));
    standbyLabel_->setVisible(snap.in_recovery);
    pollLabel_->setText(tr("polled %1 in %2 ms").arg(server_->lastPollTime()).arg(snap.latency_ms, 0, 'f', 1));
    std::size_t waiters = 0;
    for (const auto& lock : snap.locks) waiters += lock.waiters.size();
    rowsLabel_->setText(tr("%1, %2 waiting").arg(counted(static_cast<qint64>(snap.locks.size()), tr("lock"), tr("locks"))).arg(waiters));
    resolver_->setLatest(result);
    // The selected row may have a new holder by now: follow the row, not the old pid.
    onSelection();
}

void MainWindow::onState(PollState state, const QString& message) {
    QString text;
    switch (state) {
        case PollState::stopped: text = tr("not connected"); break;
        case PollState::connecting: text = tr("connecting to %1…").arg(server_->label()); break;
        case PollState::connected: text = tr("connected to %1").arg(server_->label()); break;
        // The message may quote the server (its FATAL or ERROR, a name it echoes): redacted, then
        // one line by the display rule (server_text.hpp), so it can neither split nor fake the bar.
        case PollState::disconnected: text = tr("disconnected: %1").arg(serverMessage(server_->redacted(message))); break;
    }
    if (state == PollState::connected && !message.isEmpty() && message != QStringLiteral("connected"))
        text += QStringLiteral(" — ") + serverMessage(server_->redacted(message));
    // The moment a poll fails what the view shows is history (the session greys the rows): say
    // so, and since when.
    if (server_->stale()) {
        text += tr(" — showing the locks as of %1").arg(server_->lastPollTime());
        pollLabel_->setText(tr("stale: as of %1").arg(server_->lastPollTime()));
    }
    stateLabel_->setText(text);
    stateLabel_->setStyleSheet(state == PollState::disconnected ? QStringLiteral("color: %1").arg(theme::errorText().name()) : QString());
}

SummaryThresholds MainWindow::summaryThresholds() const {
    return model_->summaryThresholds();
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
        session_->show(server_->latest(), 0);
        return;
    }
    const QList<int> pids = index.data(LocksModel::PidsRole).value<QList<int>>();
    session_->show(server_->latest(), pids.isEmpty() ? 0 : pids.first());
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

void MainWindow::addToCatalog(const QByteArray& name) { catalogJobs_.insert(catalogService_->add(name)); }

QStringList MainWindow::catalogNames(qint64 key) const {
    QStringList out;
    for (const QByteArray& name : names_->names(key)) out << QString::fromUtf8(name);
    return out;
}

}  // namespace lockscope
