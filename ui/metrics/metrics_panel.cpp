#include "metrics/metrics_panel.hpp"

#include <QHBoxLayout>
#include <QHeaderView>
#include <QItemSelectionModel>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSortFilterProxyModel>
#include <QSpinBox>
#include <QTableView>
#include <QVBoxLayout>

#include "metrics/endpoint_status_model.hpp"
#include "metrics/metrics_model.hpp"
#include "metrics/metrics_scraper.hpp"

namespace lockscope {

namespace {

const QString errorStyle = QStringLiteral("color: #b00020");

QTableView* makeTable(QWidget* parent) {
    auto* view = new QTableView(parent);
    view->setSelectionBehavior(QAbstractItemView::SelectRows);
    view->setEditTriggers(QAbstractItemView::NoEditTriggers);
    view->verticalHeader()->hide();
    view->horizontalHeader()->setStretchLastSection(true);
    view->setWordWrap(false);
    return view;
}

}  // namespace

MetricsPanel::MetricsPanel(MetricsScraper* scraper, MetricsModel* model, QWidget* parent)
    : QWidget(parent), scraper_(scraper), statusModel_(new EndpointStatusModel(scraper, this)),
      locksProxy_(new QSortFilterProxyModel(this)) {
    auto* layout = new QVBoxLayout(this);

    auto* controls = new QHBoxLayout();
    urlEdit_ = new QLineEdit(this);
    urlEdit_->setPlaceholderText(tr("http://host:port/metrics  or  host:port"));
    addButton_ = new QPushButton(tr("Add"), this);
    removeButton_ = new QPushButton(tr("Remove"), this);
    removeButton_->setEnabled(false);
    intervalSeconds_ = new QSpinBox(this);
    intervalSeconds_->setRange(1, 3600);
    intervalSeconds_->setSuffix(tr(" s"));
    intervalSeconds_->setValue(int(std::chrono::duration_cast<std::chrono::seconds>(scraper->interval()).count()));
    intervalSeconds_->setToolTip(tr("How often every endpoint is scraped"));
    scrapeNowButton_ = new QPushButton(tr("Scrape now"), this);
    controls->addWidget(urlEdit_, 1);
    controls->addWidget(addButton_);
    controls->addWidget(removeButton_);
    controls->addWidget(new QLabel(tr("every"), this));
    controls->addWidget(intervalSeconds_);
    controls->addWidget(scrapeNowButton_);
    layout->addLayout(controls);

    inputError_ = new QLabel(this);
    inputError_->setTextFormat(Qt::PlainText);  // shows server or user text: never as HTML (plain_text.hpp)
    inputError_->setStyleSheet(errorStyle);
    inputError_->hide();
    layout->addWidget(inputError_);
    summary_ = new QLabel(this);
    summary_->setTextFormat(Qt::PlainText);
    summary_->setStyleSheet(errorStyle);
    summary_->setWordWrap(true);
    summary_->hide();
    layout->addWidget(summary_);

    endpointsView_ = makeTable(this);
    endpointsView_->setModel(statusModel_);
    endpointsView_->setMaximumHeight(140);
    // URLs and lock names are what an operator reads first: give them room.
    endpointsView_->horizontalHeader()->resizeSection(0, 300);
    endpointsView_->horizontalHeader()->resizeSection(1, 260);
    layout->addWidget(endpointsView_);

    locksProxy_->setSourceModel(model);
    locksProxy_->setSortRole(MetricsModel::SortRole);
    locksView_ = makeTable(this);
    locksView_->setModel(locksProxy_);
    locksView_->setSortingEnabled(true);
    locksView_->sortByColumn(MetricsModel::NameColumn, Qt::AscendingOrder);
    locksView_->horizontalHeader()->setStretchLastSection(false);
    locksView_->horizontalHeader()->resizeSection(0, 260);
    locksView_->horizontalHeader()->resizeSection(MetricsModel::NameColumn, 240);
    layout->addWidget(locksView_, 1);

    connect(addButton_, &QPushButton::clicked, this, [this] {
        if (addEndpointFromText(urlEdit_->text())) urlEdit_->clear();
    });
    connect(urlEdit_, &QLineEdit::returnPressed, addButton_, &QPushButton::click);
    connect(removeButton_, &QPushButton::clicked, this, &MetricsPanel::removeSelectedEndpoints);
    connect(endpointsView_->selectionModel(), &QItemSelectionModel::selectionChanged, this,
            [this] { removeButton_->setEnabled(endpointsView_->selectionModel()->hasSelection()); });
    connect(intervalSeconds_, &QSpinBox::valueChanged, this,
            [this](int seconds) { scraper_->setInterval(std::chrono::seconds(seconds)); });
    connect(scrapeNowButton_, &QPushButton::clicked, scraper_, &MetricsScraper::scrapeNow);
    connect(statusModel_, &QAbstractItemModel::dataChanged, this, &MetricsPanel::updateSummary);
    connect(statusModel_, &QAbstractItemModel::rowsRemoved, this, &MetricsPanel::updateSummary);
    updateSummary();
}

bool MetricsPanel::addEndpointFromText(const QString& text) {
    QString error;
    const QUrl url = MetricsScraper::endpointFromUserInput(text, &error);
    if (url.isValid() && !scraper_->addEndpoint(url)) error = tr("already scraped: %1").arg(url.toDisplayString());
    inputError_->setText(error);
    inputError_->setVisible(!error.isEmpty());
    return error.isEmpty();
}

void MetricsPanel::removeSelectedEndpoints() {
    QList<QUrl> urls;
    for (const QModelIndex& index : endpointsView_->selectionModel()->selectedRows()) {
        urls << index.data(EndpointStatusModel::UrlRole).toUrl();
    }
    for (const QUrl& url : urls) scraper_->removeEndpoint(url);
}

void MetricsPanel::updateSummary() {
    int failing = 0;
    for (int row = 0; row < statusModel_->rowCount(); ++row) {
        if (statusModel_->status(row).state == EndpointStatus::State::error) ++failing;
    }
    summary_->setText(tr("%1 of %2 metrics endpoints failing: their rows below show why")
                          .arg(failing)
                          .arg(statusModel_->rowCount()));
    summary_->setVisible(failing > 0);
}

}  // namespace lockscope
