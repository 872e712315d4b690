#include "history/history_panel.hpp"

#include <QComboBox>
#include <QFileDialog>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QIntValidator>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSortFilterProxyModel>
#include <QSpinBox>
#include <QTableView>
#include <QTimer>
#include <QVBoxLayout>

#include "history/history_model.hpp"
#include "history/history_recorder.hpp"
#include "history/history_store.hpp"

namespace lockscope::history {

HistoryPanel::HistoryPanel(HistoryRecorder* recorder, QWidget* parent)
    : QWidget(parent),
      recorder_(recorder),
      model_(new HistoryModel(this)),
      proxy_(new QSortFilterProxyModel(this)),
      search_(new QLineEdit(this)),
      kind_(new QComboBox(this)),
      window_(new QComboBox(this)),
      pid_(new QLineEdit(this)),
      table_(new QTableView(this)),
      export_(new QPushButton(tr("Export CSV…"), this)),
      retention_(new QSpinBox(this)),
      status_(new QLabel(this)),
      searchDelay_(new QTimer(this)),
      retentionDelay_(new QTimer(this)) {
    search_->setObjectName(QStringLiteral("historySearch"));
    status_->setObjectName(QStringLiteral("historyStatus"));
    status_->setTextFormat(Qt::PlainText);  // error messages and paths: never as HTML (plain_text.hpp)
    search_->setPlaceholderText(tr("Search name, application, user"));
    search_->setClearButtonEnabled(true);
    kind_->addItem(tr("Holds and waits"));
    kind_->addItem(tr("Holds"), static_cast<int>(Kind::hold));
    kind_->addItem(tr("Waits"), static_cast<int>(Kind::wait));
    window_->addItem(tr("Last hour"), 3600.0);
    window_->addItem(tr("Last 24 hours"), 86400.0);
    window_->addItem(tr("Last 7 days"), 7 * 86400.0);
    window_->addItem(tr("All"));
    window_->setCurrentIndex(1);
    pid_->setPlaceholderText(tr("PID"));
    pid_->setValidator(new QIntValidator(1, std::numeric_limits<int>::max(), pid_));
    pid_->setMaximumWidth(90);
    pid_->setClearButtonEnabled(true);
    retention_->setRange(1, HistoryStore::kMaxRetentionDays);
    retention_->setSuffix(tr(" days"));
    retention_->setToolTip(tr("History older than this is deleted (per server profile)"));
    retention_->setValue(recorder_->retentionDays());
    status_->setTextInteractionFlags(Qt::TextSelectableByMouse);

    proxy_->setSourceModel(model_);
    proxy_->setSortRole(HistoryModel::SortRole);
    table_->setModel(proxy_);
    table_->setSortingEnabled(true);
    table_->sortByColumn(HistoryModel::endedColumn, Qt::DescendingOrder);
    table_->setSelectionBehavior(QAbstractItemView::SelectRows);
    table_->setAlternatingRowColors(true);
    // As in the locks view: a long name keeps its end, "(from holder)" and the tail that tells names apart.
    table_->setTextElideMode(Qt::ElideMiddle);
    table_->verticalHeader()->hide();
    table_->horizontalHeader()->setStretchLastSection(true);
    // One line per row: wrapped names and timestamps made rows three lines tall and hid most of
    // the history. Widths fit a typical name, a full key and a millisecond timestamp.
    table_->setWordWrap(false);
    table_->verticalHeader()->setDefaultSectionSize(table_->fontMetrics().height() + 8);
    const std::pair<int, int> widths[] = {{HistoryModel::kindColumn, 50},   {HistoryModel::nameColumn, 190},
                                          {HistoryModel::keyColumn, 165},   {HistoryModel::modeColumn, 75},
                                          {HistoryModel::pidColumn, 60},    {HistoryModel::applicationColumn, 190},
                                          {HistoryModel::userColumn, 80},   {HistoryModel::startedColumn, 175},
                                          {HistoryModel::endedColumn, 175}, {HistoryModel::durationColumn, 80}};
    for (const auto& [column, width] : widths) table_->horizontalHeader()->resizeSection(column, width);

    auto* filters = new QHBoxLayout;
    filters->addWidget(search_, 1);
    filters->addWidget(kind_);
    filters->addWidget(window_);
    filters->addWidget(pid_);
    auto* bottom = new QHBoxLayout;
    bottom->addWidget(status_, 1);
    bottom->addWidget(new QLabel(tr("Keep"), this));
    bottom->addWidget(retention_);
    bottom->addWidget(export_);
    auto* layout = new QVBoxLayout(this);
    layout->addLayout(filters);
    layout->addWidget(table_, 1);
    layout->addLayout(bottom);

    // Typing refines the search once the operator pauses, not at every keystroke.
    searchDelay_->setSingleShot(true);
    searchDelay_->setInterval(250);
    connect(searchDelay_, &QTimer::timeout, this, &HistoryPanel::applyFilter);
    connect(search_, &QLineEdit::textChanged, searchDelay_, qOverload<>(&QTimer::start));
    connect(pid_, &QLineEdit::textChanged, searchDelay_, qOverload<>(&QTimer::start));
    connect(kind_, &QComboBox::currentIndexChanged, this, &HistoryPanel::applyFilter);
    connect(window_, &QComboBox::currentIndexChanged, this, &HistoryPanel::applyFilter);
    connect(export_, &QPushButton::clicked, this, &HistoryPanel::askExport);
    // A shorter retention deletes rows: apply it once the operator stops clicking, not per step.
    retentionDelay_->setSingleShot(true);
    retentionDelay_->setInterval(800);
    connect(retention_, &QSpinBox::valueChanged, retentionDelay_, qOverload<>(&QTimer::start));
    connect(retentionDelay_, &QTimer::timeout, this, [this] {
        if (retention_->value() != recorder_->retentionDays()) recorder_->setRetentionDays(retention_->value());
    });

    connect(recorder_, &HistoryRecorder::opened, this, &HistoryPanel::onRecorderOpened);
    connect(recorder_, &HistoryRecorder::written, this, &HistoryPanel::onWritten);
    connect(recorder_, &HistoryRecorder::limitsEnforced, this, &HistoryPanel::onWritten);
    connect(recorder_, &HistoryRecorder::retentionDaysChanged, retention_, &QSpinBox::setValue);
    connect(recorder_, &HistoryRecorder::failed, this, [this](const QString& message) { status_->setText(message); });
    connect(model_, &HistoryModel::refreshed, this, &HistoryPanel::onRefreshed);
    connect(model_, &HistoryModel::exportFinished, this, [this](const QString& path, qint64 rows, const QString& error) {
        export_->setEnabled(true);
        exportMessage_ = rows < 0 ? tr("Export failed: %1").arg(error) : tr("Exported %Ln row(s) to %1", nullptr, static_cast<int>(rows)).arg(path);
        status_->setText(exportMessage_);
    });

    applyFilter();
    if (recorder_->isOpen()) model_->setDatabasePath(recorder_->path());
    else status_->setText(tr("No history yet: connect to a server"));
}

void HistoryPanel::applyFilter() {
    searchDelay_->stop();
    Filter f;
    f.text = search_->text().trimmed();
    if (const QVariant kind = kind_->currentData(); kind.isValid()) f.kind = static_cast<Kind>(kind.toInt());
    bool ok = false;
    if (const int pid = pid_->text().toInt(&ok); ok) f.pid = pid;
    const QVariant window = window_->currentData();
    // Both set the filter; the model coalesces the two refreshes into the newest one.
    model_->setWindow(window.isValid() ? std::optional<double>(window.toDouble()) : std::nullopt);
    model_->setFilter(f);
}

void HistoryPanel::onRecorderOpened(const QString& path, bool ok, const QString& error) {
    if (!ok) {
        model_->setDatabasePath({});
        status_->setText(tr("History is not recorded: %1").arg(error));
        return;
    }
    model_->setDatabasePath(path);
}

void HistoryPanel::onWritten() {
    // A hidden tab need not query after every poll; it catches up when shown.
    if (isVisible()) model_->refresh();
    else stale_ = true;
}

void HistoryPanel::showEvent(QShowEvent* event) {
    QWidget::showEvent(event);
    if (stale_ || window_->currentData().isValid()) model_->refresh();  // a window moves with time
    stale_ = false;
}

void HistoryPanel::onRefreshed(int shown, qint64 total, const QString& error) {
    if (!error.isEmpty()) {
        status_->setText(tr("History query failed: %1").arg(error));
        return;
    }
    status_->setText(shown < total ? tr("Showing the newest %L1 of %L2 matching rows").arg(shown).arg(total)
                                   : tr("Showing %L1 of %L2 matching rows").arg(shown).arg(total));
}

void HistoryPanel::askExport() {
    const QString path = QFileDialog::getSaveFileName(this, tr("Export history as CSV"), QStringLiteral("lockscope-history.csv"),
                                                      tr("CSV files (*.csv);;All files (*)"));
    if (!path.isEmpty()) exportTo(path);
}

void HistoryPanel::exportTo(const QString& path) {
    export_->setEnabled(false);  // one export at a time; the model says when it is done
    status_->setText(tr("Exporting to %1…").arg(path));
    model_->exportCsv(path);
}

}  // namespace lockscope::history
