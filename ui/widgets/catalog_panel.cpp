#include "widgets/catalog_panel.hpp"

#include <QFileDialog>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QItemSelectionModel>
#include <QLabel>
#include <QLineEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QTableView>
#include <QVBoxLayout>
#include <QtConcurrent/QtConcurrentRun>

#include "catalog/catalog_list_model.hpp"
#include "models/plain_text.hpp"
#include "stores/name_import.hpp"
#include "widgets/name_input.hpp"

namespace lockscope {

CatalogPanel::CatalogPanel(CatalogService& service, QWidget* parent) : QWidget(parent), service_(service) {
    auto* layout = new QVBoxLayout(this);
    filter_ = new QLineEdit(this);
    filter_->setObjectName(QStringLiteral("catalogFilter"));
    filter_->setPlaceholderText(tr("Filter names"));
    filter_->setClearButtonEnabled(true);
    layout->addWidget(filter_);
    collisionWarning_ = new QLabel(this);
    collisionWarning_->setTextFormat(Qt::PlainText);  // shows server or user text: never as HTML (plain_text.hpp)
    collisionWarning_->setObjectName(QStringLiteral("catalogCollisionWarning"));
    collisionWarning_->setWordWrap(true);
    collisionWarning_->setStyleSheet(QStringLiteral("color: #b00020; font-weight: bold;"));
    collisionWarning_->hide();
    layout->addWidget(collisionWarning_);

    model_ = new CatalogListModel(this);
    table_ = new QTableView(this);
    table_->setObjectName(QStringLiteral("catalogTable"));
    table_->setModel(model_);
    // A million rows: fixed row heights and no column sized from its contents, so layout and
    // scrolling cost the rows on screen only.
    table_->verticalHeader()->hide();
    table_->verticalHeader()->setSectionResizeMode(QHeaderView::Fixed);
    table_->verticalHeader()->setDefaultSectionSize(table_->fontMetrics().height() + 6);
    table_->horizontalHeader()->setSectionResizeMode(QHeaderView::Interactive);
    table_->horizontalHeader()->setStretchLastSection(true);
    table_->horizontalHeader()->resizeSection(CatalogListModel::Name, 260);
    table_->horizontalHeader()->resizeSection(CatalogListModel::Key, 170);
    // The list is in name order (A→Z by bytes), which the header says; it is not re-sorted.
    table_->horizontalHeader()->setSortIndicator(CatalogListModel::Name, Qt::AscendingOrder);
    table_->horizontalHeader()->setSortIndicatorShown(true);
    table_->setTextElideMode(Qt::ElideMiddle);
    table_->setWordWrap(false);
    table_->setSelectionBehavior(QAbstractItemView::SelectRows);
    table_->setSelectionMode(QAbstractItemView::SingleSelection);
    table_->setEditTriggers(QAbstractItemView::NoEditTriggers);
    layout->addWidget(table_, 1);

    auto* buttons = new QHBoxLayout();
    auto add = [&](const QString& text, void (CatalogPanel::*slot)()) {
        auto* b = new QPushButton(text, this);
        connect(b, &QPushButton::clicked, this, slot);
        buttons->addWidget(b);
        return b;
    };
    add(tr("Add…"), &CatalogPanel::addName);
    add(tr("Remove"), &CatalogPanel::removeSelected);
    add(tr("Rename…"), &CatalogPanel::renameSelected);
    longJobButtons_ << add(tr("Import list…"), &CatalogPanel::importList) << add(tr("Scan sources…"), &CatalogPanel::scanTree)
                    << add(tr("Export…"), &CatalogPanel::exportList);
    auto* take = new QPushButton(tr("Take lock…"), this);
    take->setObjectName(QStringLiteral("catalogTakeLock"));
    connect(take, &QPushButton::clicked, this, [this] {
        if (const QByteArray name = selectedName(); !name.isEmpty()) emit takeLockRequested(name);
    });
    buttons->addWidget(take);
    layout->addLayout(buttons);

    auto* progressRow = new QHBoxLayout();
    progress_ = new QProgressBar(this);
    progress_->setObjectName(QStringLiteral("catalogProgress"));
    cancel_ = new QPushButton(tr("Cancel"), this);
    cancel_->setObjectName(QStringLiteral("catalogCancel"));
    connect(cancel_, &QPushButton::clicked, this, [this] {
        if (longJob_ != 0) service_.cancel(longJob_);
    });
    progressRow->addWidget(progress_, 1);
    progressRow->addWidget(cancel_);
    layout->addLayout(progressRow);
    progress_->hide();
    cancel_->hide();

    auto* statusRow = new QHBoxLayout();
    count_ = new QLabel(tr("Loading the catalog…"), this);
    count_->setObjectName(QStringLiteral("catalogCount"));
    count_->setTextFormat(Qt::PlainText);
    status_ = new QLabel(this);
    status_->setObjectName(QStringLiteral("catalogStatus"));
    status_->setTextFormat(Qt::PlainText);
    status_->setWordWrap(true);
    saving_ = new QLabel(tr("saving…"), this);
    saving_->setObjectName(QStringLiteral("catalogSaving"));
    saving_->hide();
    retry_ = new QPushButton(tr("Retry"), this);
    retry_->setObjectName(QStringLiteral("catalogRetry"));
    retry_->hide();
    connect(retry_, &QPushButton::clicked, this, [this] {
        retry_->hide();
        if (retryLast_) run(retryLast_, false);
    });
    statusRow->addWidget(count_);
    statusRow->addWidget(status_, 1);
    statusRow->addWidget(saving_);
    statusRow->addWidget(retry_);
    layout->addLayout(statusRow);

    connect(filter_, &QLineEdit::textChanged, model_, &CatalogListModel::setFilter);
    // The selected name stays selected across a refilter while it is still shown.
    connect(model_, &QAbstractItemModel::modelAboutToBeReset, this, [this] { keepSelected_ = selectedName(); });
    connect(model_, &QAbstractItemModel::modelReset, this, [this] {
        const int row = keepSelected_.isEmpty() ? -1 : model_->rowOfName(keepSelected_);
        if (row >= 0) {
            table_->selectRow(row);
            table_->scrollTo(model_->index(row, 0));
        }
    });
    connect(model_, &CatalogListModel::filterApplied, this, &CatalogPanel::showCount);
    connect(&service_, &CatalogService::snapshotChanged, this, &CatalogPanel::onSnapshot);
    connect(&service_, &CatalogService::loadFailed, this, [this](const QString& error) {
        retryLast_ = [this] {
            service_.reload();
            return quint64(0);  // not a job of its own: the next snapshot (or failure) answers
        };
        failed(tr("The catalog could not be read: %1").arg(error));
    });
    connect(&service_, &CatalogService::finished, this, &CatalogPanel::onFinished);
    connect(&service_, &CatalogService::progress, this,
            [this](quint64 id, CatalogService::Job, qint64 done, qint64 total) { onProgress(id, done, total); });
    connect(&service_, &CatalogService::jobsInFlightChanged, this, [this](int n) { saving_->setVisible(n > 0); });
    connect(&scanWatcher_, &QFutureWatcher<scan::TreeScan>::finished, this, [this] {
        const scan::TreeScan scanned = scanWatcher_.result();
        for (QPushButton* b : std::as_const(longJobButtons_)) b->setEnabled(true);
        run([this, dir = scanDir_, scanned] { return service_.importScan(dir, scanned); }, true);
    });
    if (service_.snapshot()) onSnapshot(service_.snapshot());
}

void CatalogPanel::onSnapshot(const CatalogSnapshotPtr& snapshot) {
    // Two names with one key take the same advisory lock: unrelated jobs would block or skip
    // each other. Say so above the list, whatever the filter shows.
    QStringList lines;
    for (const pglock::KeyCollision& c : snapshot->collisions()) {
        QStringList names;
        for (const std::string& n : c.names) names << names::printable(QByteArray::fromStdString(n));
        lines << tr("Names %1 share key %2: they take the same lock.").arg(names.join(QStringLiteral(", "))).arg(c.key);
    }
    collisionWarning_->setText(lines.join(QLatin1Char('\n')));
    collisionWarning_->setVisible(!lines.isEmpty());
    model_->setSnapshot(snapshot);
}

void CatalogPanel::showCount() {
    const CatalogSnapshotPtr shown = model_->shownSnapshot();
    if (!shown) return;
    const auto total = qint64(shown->size());
    QString text = counted(total, tr("name"), tr("names"));
    if (!model_->filter().isEmpty()) text = tr("%1 of %2 shown").arg(model_->rowCount()).arg(text);
    count_->setText(text);
}

QByteArray CatalogPanel::selectedName() const {
    const auto rows = table_->selectionModel()->selectedRows();
    if (rows.isEmpty()) return {};
    return model_->nameAt(rows.first().row());
}

void CatalogPanel::run(const std::function<quint64()>& start, bool long_) {
    const quint64 id = start();
    if (id == 0) return;  // not a job (a reload)
    mine_.insert(id);
    retries_.insert(id, start);
    if (long_) setLongJob(id);
}

void CatalogPanel::setLongJob(quint64 id) {
    longJob_ = id;
    const bool running = id != 0;
    progress_->setVisible(running);
    cancel_->setVisible(running);
    progress_->setRange(0, 0);  // busy until the first progress report
    for (QPushButton* b : std::as_const(longJobButtons_)) b->setEnabled(!running);
}

void CatalogPanel::onProgress(quint64 id, qint64 done, qint64 total) {
    if (id != longJob_ || total <= 0) return;
    progress_->setRange(0, 1000);
    progress_->setValue(int(std::min<qint64>(1000, done * 1000 / total)));
    progress_->setFormat(tr("%1 of %2").arg(done).arg(total));
}

void CatalogPanel::failed(const QString& message) {
    status_->setText(message);
    retry_->setVisible(true);
}

void CatalogPanel::onFinished(const CatalogService::Result& r) {
    if (!mine_.remove(r.id)) return;  // another part of the app posted it and reports it
    const std::function<quint64()> again = retries_.take(r.id);
    if (r.id == longJob_) setLongJob(0);
    using Job = CatalogService::Job;
    if (r.canceled) {
        status_->setText(r.job == Job::exportList ? tr("Export canceled; no file was written.") : tr("Canceled; nothing changed."));
        return;
    }
    retry_->hide();
    switch (r.job) {
        case Job::add:
            switch (r.added) {
                case CatalogStore::AddResult::added: break;
                case CatalogStore::AddResult::duplicate:
                    status_->setText(tr("\"%1\" is already in the catalog.").arg(elideMiddle(QString::fromUtf8(r.name))));
                    break;
                case CatalogStore::AddResult::invalid: status_->setText(tr("An empty name is not a lock name.")); break;
                case CatalogStore::AddResult::failed: retryLast_ = again; failed(r.error); break;
            }
            return;
        case Job::rename:
            switch (r.renamed) {
                case CatalogStore::RenameResult::renamed:
                case CatalogStore::RenameResult::unchanged: break;
                case CatalogStore::RenameResult::duplicate:
                    status_->setText(tr("\"%1\" is already in the catalog.").arg(elideMiddle(QString::fromUtf8(r.newName))));
                    break;
                case CatalogStore::RenameResult::invalid: status_->setText(tr("An empty name is not a lock name.")); break;
                case CatalogStore::RenameResult::notFound: status_->setText(r.error); break;
                case CatalogStore::RenameResult::failed: retryLast_ = again; failed(r.error); break;
            }
            return;
        case Job::remove:
            if (!r.ok) {
                retryLast_ = again;
                failed(r.error);
            }
            return;
        case Job::importList:
        case Job::scan:
            if (!r.ok) {
                retryLast_ = again;
                failed(tr("%1 failed, nothing changed: %2").arg(r.job == Job::scan ? tr("Scan") : tr("Import"), r.error));
                return;
            }
            report(r.job == Job::scan ? tr("Scan") : tr("Import"), r.report);
            return;
        case Job::exportList:
            if (!r.ok) {
                retryLast_ = again;
                failed(r.error);
                return;
            }
            status_->setText(tr("Exported %1.").arg(counted(r.exported, tr("name"), tr("names"))));
            return;
    }
}

void CatalogPanel::addName() {
    const std::optional<QString> typed = askName(this, tr("Add a lock name"), tr("Name:"));
    if (!typed) return;
    const QByteArray name = typed->toUtf8();
    run([this, name] { return service_.add(name); }, false);
}

void CatalogPanel::removeSelected() {
    const QByteArray name = selectedName();
    if (name.isEmpty()) return;
    run([this, name] { return service_.remove(name); }, false);
}

void CatalogPanel::renameSelected() {
    const QByteArray from = selectedName();
    if (from.isEmpty()) return;
    const std::optional<QString> typed = askName(this, tr("Rename"), tr("New name (its key is derived again):"), QString::fromUtf8(from));
    if (!typed) return;
    const QByteArray to = typed->toUtf8();
    run([this, from, to] { return service_.rename(from, to); }, false);
}

void CatalogPanel::importList() {
    const QString path = QFileDialog::getOpenFileName(this, tr("Import lock names (one per line)"));
    if (path.isEmpty()) return;
    status_->setText(tr("Importing %1…").arg(path));
    run([this, path] { return service_.importList(path); }, true);
}

void CatalogPanel::scanTree() {
    const QString dir = QFileDialog::getExistingDirectory(this, tr("Scan a source tree for lock names"));
    if (dir.isEmpty()) return;
    status_->setText(tr("Scanning %1…").arg(dir));
    scanDir_ = dir;
    for (QPushButton* b : std::as_const(longJobButtons_)) b->setEnabled(false);  // one scan at a time
    scanWatcher_.setFuture(QtConcurrent::run([dir] { return scan::scanTree(dir); }));
}

void CatalogPanel::exportList() {
    const QString path = QFileDialog::getSaveFileName(this, tr("Export lock names"));
    if (path.isEmpty()) return;
    status_->setText(tr("Exporting to %1…").arg(path));
    run([this, path] { return service_.exportList(path); }, true);
}

void CatalogPanel::report(const QString& what, const ImportReport& r) {
    QString text = tr("%1: %2 found, %3 new, %4 duplicate, %5 skipped").arg(what).arg(r.found).arg(r.added).arg(r.duplicate).arg(r.skipped);
    if (r.filesScanned > 0) text += QStringLiteral(" (%1)").arg(counted(r.filesScanned, tr("file"), tr("files")));
    status_->setText(text);
    status_->setToolTip(plainToolTip(r.warnings.join(QLatin1Char('\n'))));  // they quote file text
}

}  // namespace lockscope
