#include "widgets/catalog_panel.hpp"

#include <QFileDialog>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QMessageBox>
#include <QPushButton>
#include <QSet>
#include <QTableWidget>
#include <QVBoxLayout>
#include <QtConcurrent/QtConcurrentRun>

#include "stores/name_import.hpp"
#include "widgets/name_input.hpp"
#include "models/plain_text.hpp"

namespace lockscope {
namespace {

// Names are bytes: shown as the rest of the app shows them (escaped, never garbled or obeyed).
QString display(const QByteArray& name) { return names::printable(name); }

}  // namespace

CatalogPanel::CatalogPanel(CatalogStore& store, QWidget* parent) : QWidget(parent), store_(store) {
    auto* layout = new QVBoxLayout(this);
    filter_ = new QLineEdit(this);
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
    table_ = new QTableWidget(0, 3, this);
    table_->setObjectName(QStringLiteral("catalogTable"));
    table_->setHorizontalHeaderLabels({tr("Name"), tr("Key"), tr("Note")});
    table_->horizontalHeader()->setStretchLastSection(true);
    table_->horizontalHeader()->setSectionResizeMode(0, QHeaderView::ResizeToContents);
    table_->verticalHeader()->hide();
    table_->setSelectionBehavior(QAbstractItemView::SelectRows);
    table_->setSelectionMode(QAbstractItemView::SingleSelection);
    table_->setEditTriggers(QAbstractItemView::NoEditTriggers);
    table_->horizontalHeader()->setSortIndicator(0, Qt::AscendingOrder);  // A→Z (Qt's default is Z→A)
    table_->setSortingEnabled(true);
    layout->addWidget(table_, 1);

    auto* buttons = new QHBoxLayout();
    auto add = [&](const QString& text, void (CatalogPanel::*slot)()) {
        auto* b = new QPushButton(text, this);
        connect(b, &QPushButton::clicked, this, slot);
        buttons->addWidget(b);
    };
    add(tr("Add…"), &CatalogPanel::addName);
    add(tr("Remove"), &CatalogPanel::removeSelected);
    add(tr("Rename…"), &CatalogPanel::renameSelected);
    add(tr("Import list…"), &CatalogPanel::importList);
    add(tr("Scan sources…"), &CatalogPanel::scanTree);
    add(tr("Export…"), &CatalogPanel::exportList);
    auto* take = new QPushButton(tr("Take lock…"), this);
    take->setObjectName(QStringLiteral("catalogTakeLock"));
    connect(take, &QPushButton::clicked, this, [this] {
        if (const QByteArray name = selectedName(); !name.isEmpty()) emit takeLockRequested(name);
    });
    buttons->addWidget(take);
    layout->addLayout(buttons);
    status_ = new QLabel(this);
    status_->setTextFormat(Qt::PlainText);
    status_->setWordWrap(true);
    layout->addWidget(status_);

    connect(&store_, &CatalogStore::changed, this, &CatalogPanel::reload);
    connect(filter_, &QLineEdit::textChanged, this, &CatalogPanel::reload);
    connect(&scanWatcher_, &QFutureWatcher<scan::TreeScan>::finished, this, [this] {
        const scan::TreeScan scanned = scanWatcher_.result();
        setEnabled(true);
        report(tr("Scan"), store_.importScan(scanned));
    });
    reload();
}

void CatalogPanel::reload() {
    const QString needle = filter_->text();
    table_->setSortingEnabled(false);
    table_->setRowCount(0);
    // Two names with one key take the same advisory lock: unrelated jobs would block or skip
    // each other. Say so above the list, whatever the filter shows.
    const std::vector<pglock::KeyCollision> collisions = store_.collisions();
    QSet<qint64> collidingKeys;
    QStringList lines;
    for (const pglock::KeyCollision& c : collisions) {
        collidingKeys.insert(c.key);
        QStringList names;
        for (const std::string& n : c.names) names << display(QByteArray::fromStdString(n));
        lines << tr("Names %1 share key %2: they take the same lock.").arg(names.join(QStringLiteral(", "))).arg(c.key);
    }
    collisionWarning_->setText(lines.join(QLatin1Char('\n')));
    collisionWarning_->setVisible(!lines.isEmpty());
    for (const CatalogEntry& e : store_.entries()) {
        const QString name = display(e.name);
        if (!needle.isEmpty() && !name.contains(needle, Qt::CaseInsensitive)) continue;
        const int row = table_->rowCount();
        table_->insertRow(row);
        auto* nameItem = new QTableWidgetItem(name);
        nameItem->setData(Qt::UserRole, e.name);
        table_->setItem(row, 0, nameItem);
        table_->setItem(row, 1, new QTableWidgetItem(QString::number(e.key)));
        table_->setItem(row, 2, new QTableWidgetItem(e.note));
        if (collidingKeys.contains(e.key)) {
            nameItem->setToolTip(tr("Another name in the catalog has the same key: they would share one lock."));
            nameItem->setForeground(QColor(0xb0, 0x00, 0x20));
        }
    }
    table_->setSortingEnabled(true);
    status_->setText(counted(store_.count(), tr("name"), tr("names")));
}

QByteArray CatalogPanel::selectedName() const {
    const auto rows = table_->selectionModel()->selectedRows();
    if (rows.isEmpty()) return {};
    return table_->item(rows.first().row(), 0)->data(Qt::UserRole).toByteArray();
}

void CatalogPanel::addName() {
    const std::optional<QString> typed = askName(this, tr("Add a lock name"), tr("Name:"));
    if (!typed) return;
    const QString& name = *typed;
    switch (store_.add(name.toUtf8())) {
        case CatalogStore::AddResult::added: break;
        case CatalogStore::AddResult::duplicate: status_->setText(tr("\"%1\" is already in the catalog.").arg(elideMiddle(name))); break;
        case CatalogStore::AddResult::invalid: status_->setText(tr("An empty name is not a lock name.")); break;
        case CatalogStore::AddResult::failed: status_->setText(store_.errorString()); break;
    }
}

void CatalogPanel::removeSelected() {
    const QByteArray name = selectedName();
    if (name.isEmpty()) return;
    if (!store_.remove(name)) status_->setText(store_.errorString());
}

void CatalogPanel::renameSelected() {
    const QByteArray from = selectedName();
    if (from.isEmpty()) return;
    const std::optional<QString> typed = askName(this, tr("Rename"), tr("New name (its key is derived again):"), QString::fromUtf8(from));
    if (!typed) return;
    const QString& to = *typed;
    switch (store_.rename(from, to.toUtf8())) {
        case CatalogStore::RenameResult::renamed:
        case CatalogStore::RenameResult::unchanged: break;
        case CatalogStore::RenameResult::duplicate: status_->setText(tr("\"%1\" is already in the catalog.").arg(elideMiddle(to))); break;
        case CatalogStore::RenameResult::invalid: status_->setText(tr("An empty name is not a lock name.")); break;
        case CatalogStore::RenameResult::notFound:
        case CatalogStore::RenameResult::failed: status_->setText(store_.errorString()); break;
    }
}

void CatalogPanel::importList() {
    const QString path = QFileDialog::getOpenFileName(this, tr("Import lock names (one per line)"));
    if (path.isEmpty()) return;
    report(tr("Import"), store_.importText(path));
}

void CatalogPanel::scanTree() {
    const QString dir = QFileDialog::getExistingDirectory(this, tr("Scan a source tree for lock names"));
    if (dir.isEmpty()) return;
    status_->setText(tr("Scanning %1…").arg(dir));
    setEnabled(false);  // one scan at a time; the rest of the window stays live
    scanWatcher_.setFuture(QtConcurrent::run([dir] { return scan::scanTree(dir); }));
}

void CatalogPanel::exportList() {
    const QString path = QFileDialog::getSaveFileName(this, tr("Export lock names"));
    if (path.isEmpty()) return;
    status_->setText(store_.exportText(path) ? tr("Exported %1.").arg(counted(store_.count(), tr("name"), tr("names"))) : store_.errorString());
}

void CatalogPanel::report(const QString& what, const ImportReport& r) {
    if (!r.ok()) {
        status_->setText(tr("%1 failed, nothing changed: %2").arg(what, r.errors.join(QStringLiteral("; "))));
        return;
    }
    QString text = tr("%1: %2 found, %3 new, %4 duplicate, %5 skipped").arg(what).arg(r.found).arg(r.added).arg(r.duplicate).arg(r.skipped);
    if (r.filesScanned > 0) text += QStringLiteral(" (%1)").arg(counted(r.filesScanned, tr("file"), tr("files")));
    status_->setText(text);
    status_->setToolTip(plainToolTip(r.warnings.join(QLatin1Char('\n'))));  // they quote file text
}

}  // namespace lockscope
