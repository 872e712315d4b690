#include "charts/hold_histogram_chart.hpp"
#include "models/plain_text.hpp"

#include <QBarCategoryAxis>
#include <QBarSeries>
#include <QBarSet>
#include <QChart>
#include <QChartView>
#include <QCheckBox>
#include <QComboBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>
#include <QValueAxis>
#include <QVBoxLayout>

#include <algorithm>

#include "charts/chart_style.hpp"
#include "charts/png_export.hpp"
#include "theme/app_palette.hpp"

namespace lockscope::charts {

namespace {

double total(const BucketCounts& counts) {
    double sum = 0;
    for (double c : counts) sum += c;
    return sum;
}

QString quantileLine(const QString& source, const BucketCounts& counts) {
    const double n = total(counts);
    if (n <= 0) return QObject::tr("%1: no holds").arg(source);
    QStringList parts;
    for (const auto& [label, q] : {std::pair{"p50", 0.5}, std::pair{"p90", 0.9}, std::pair{"p99", 0.99}}) {
        const auto value = estimateQuantile(counts, q);
        const bool beyond = value && *value >= pglock::hold_buckets[kFiniteBucketCount - 1];
        parts << QStringLiteral("%1 %2%3").arg(QLatin1String(label), beyond ? QStringLiteral("≥") : QString(),
                                                formatSeconds(*value));
    }
    return QObject::tr("%1: %2 (%3 holds)").arg(source, parts.join(QStringLiteral(" · "))).arg(static_cast<qulonglong>(n));
}

}  // namespace

HoldHistogramChart::HoldHistogramChart(HoldStatsModel* model, QWidget* parent) : QWidget(parent), model_(model) {
    lockCombo_ = new QComboBox(this);
    lockCombo_->setObjectName(QStringLiteral("histogramLock"));
    lockCombo_->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
    lockCombo_->setMinimumContentsLength(30);
    percent_ = new QCheckBox(tr("Share (%)"), this);
    percent_->setToolTip(tr("Each source as a percentage of its own holds, to compare their shapes"));
    auto* exportButton = new QPushButton(tr("Export PNG…"), this);
    quantiles_ = new QLabel;
    quantiles_->setObjectName(QStringLiteral("histogramQuantiles"));
    quantiles_->setTextFormat(Qt::PlainText);  // lock names: never as HTML (plain_text.hpp)
    quantiles_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    quantiles_->setWordWrap(true);

    series_ = new QBarSeries;
    chart_ = new QChart;
    chart_->addSeries(series_);
    QStringList categories;
    for (std::size_t i = 0; i < kBucketCount; ++i) categories << bucketLabel(i);
    xAxis_ = new QBarCategoryAxis;
    xAxis_->append(categories);
    xAxis_->setTitleText(tr("hold duration"));
    yAxis_ = new QValueAxis;
    yAxis_->setLabelFormat(QStringLiteral("%.0f"));
    chart_->addAxis(xAxis_, Qt::AlignBottom);
    chart_->addAxis(yAxis_, Qt::AlignLeft);
    series_->attachAxis(xAxis_);
    series_->attachAxis(yAxis_);
    chart_->legend()->setAlignment(Qt::AlignTop);
    chart_->legend()->setVisible(true);
    chart_->setMargins(QMargins(4, 4, 4, 4));
    chart_->setAnimationOptions(QChart::NoAnimation);  // polls arrive every second: no animations
    view_ = new QChartView(chart_);
    view_->setRenderHint(QPainter::Antialiasing);

    auto* top = new QHBoxLayout;
    top->addWidget(new QLabel(tr("Lock:"), this));
    top->addWidget(lockCombo_, 1);
    top->addWidget(percent_);
    top->addWidget(exportButton);
    // What "Export PNG" writes: the chart with its quantile line, without the controls.
    exportArea_ = new QWidget(this);
    auto* area = new QVBoxLayout(exportArea_);
    area->setContentsMargins(0, 0, 0, 0);
    area->addWidget(view_, 1);
    area->addWidget(quantiles_);
    auto* layout = new QVBoxLayout(this);
    layout->addLayout(top);
    layout->addWidget(exportArea_, 1);

    refreshTimer_.setSingleShot(true);
    refreshTimer_.setInterval(kRefreshMs);
    connect(&refreshTimer_, &QTimer::timeout, this, [this] {
        if (!isVisible()) {
            stale_ = true;
            return;
        }
        refresh();
    });
    connect(model_, &QAbstractItemModel::dataChanged, this,
            [this](const QModelIndex& tl, const QModelIndex&) {
                if (tl.column() == HoldStatsModel::Name) choicesDirty_ = true;
                scheduleRefresh();
            });
    const auto rowsChanged = [this] {
        choicesDirty_ = true;
        scheduleRefresh();
    };
    connect(model_, &QAbstractItemModel::rowsInserted, this, rowsChanged);
    connect(model_, &QAbstractItemModel::rowsRemoved, this, rowsChanged);
    connect(model_, &QAbstractItemModel::modelReset, this, rowsChanged);
    connect(lockCombo_, &QComboBox::currentIndexChanged, this, &HoldHistogramChart::refresh);
    connect(percent_, &QCheckBox::toggled, this, &HoldHistogramChart::refresh);
    connect(exportButton, &QPushButton::clicked, this, &HoldHistogramChart::exportInteractively);
    applyPalette();
    refresh();
}

void HoldHistogramChart::applyPalette() {
    charts::applyPalette(*chart_);
    const auto sets = series_->barSets();
    if (!sets.isEmpty()) sets[0]->setColor(theme::chartInk(theme::ChartInk::monitor));
    if (sets.size() > 1) sets[1]->setColor(theme::chartInk(theme::ChartInk::applications));
    for (QBarSet* set : sets) set->setBorderColor(set->color());
}

void HoldHistogramChart::changeEvent(QEvent* event) {
    QWidget::changeEvent(event);
    if (event->type() == QEvent::PaletteChange) applyPalette();
}

void HoldHistogramChart::showEvent(QShowEvent* event) {
    QWidget::showEvent(event);
    if (stale_) refreshNow();
}

void HoldHistogramChart::scheduleRefresh() {
    if (!refreshTimer_.isActive()) refreshTimer_.start();
}

void HoldHistogramChart::refreshNow() {
    refreshTimer_.stop();
    refresh();
}

void HoldHistogramChart::rebuildChoices() {
    const auto keep = selectedLock();
    std::vector<int> rows(static_cast<std::size_t>(model_->rowCount()));
    for (std::size_t i = 0; i < rows.size(); ++i) rows[i] = static_cast<int>(i);
    std::sort(rows.begin(), rows.end(), [this](int a, int b) {
        return QString::localeAwareCompare(model_->statsAt(a).label, model_->statsAt(b).label) < 0;
    });
    const QSignalBlocker block(lockCombo_);
    lockCombo_->clear();
    choiceIds_.clear();
    lockCombo_->addItem(tr("All locks"));
    choiceIds_.push_back(std::nullopt);
    int current = 0;
    for (int row : rows) {
        const auto& s = model_->statsAt(row);
        lockCombo_->addItem(s.label);
        lockCombo_->setItemData(lockCombo_->count() - 1, plainToolTip(QStringLiteral("%1\nkey %2").arg(s.label).arg(s.key)), Qt::ToolTipRole);
        choiceIds_.push_back(s.id);
        if (keep && *keep == s.id) current = lockCombo_->count() - 1;
    }
    lockCombo_->setCurrentIndex(current);
    choicesDirty_ = false;
}

void HoldHistogramChart::refresh() {
    stale_ = false;
    if (choicesDirty_) rebuildChoices();
    const auto id = selectedLock();
    BucketCounts observed{};
    std::optional<BucketCounts> reported;
    if (!id) {
        observed = model_->observedTotal();
        if (model_->hasScraped()) reported = model_->scrapedTotal();
    } else if (const int row = model_->rowOfLock(*id); row >= 0) {
        const auto& s = model_->statsAt(row);
        observed = s.observed;
        if (s.scraped) reported = s.scraped->buckets;
    }

    // Recreate the sets only when "applications" comes or goes; otherwise update values in place.
    const bool wantApplications = reported.has_value();
    if (series_->count() == 0 || wantApplications != showingApplications_) {
        // Re-added to the chart afterwards: the legend only makes markers for the sets a series
        // has when it is added.
        chart_->removeSeries(series_);
        series_->clear();
        series_->append(new QBarSet(tr("monitor")));
        if (wantApplications) series_->append(new QBarSet(tr("applications")));
        chart_->addSeries(series_);
        series_->attachAxis(xAxis_);
        series_->attachAxis(yAxis_);
        showingApplications_ = wantApplications;
        applyPalette();
    }
    const bool percent = percent_->isChecked();
    double maxValue = 0;
    const auto fill = [&](QBarSet* set, const BucketCounts& counts) {
        const double n = total(counts);
        for (std::size_t i = 0; i < kBucketCount; ++i) {
            const double v = percent ? (n > 0 ? 100.0 * counts[i] / n : 0.0) : counts[i];
            maxValue = std::max(maxValue, v);
            if (set->count() > static_cast<int>(i)) set->replace(static_cast<int>(i), v);
            else set->append(v);
        }
    };
    const auto sets = series_->barSets();
    fill(sets.at(0), observed);
    sets.at(0)->setLabel(tr("monitor (%1 holds seen end)").arg(static_cast<qulonglong>(total(observed))));
    if (wantApplications) {
        fill(sets.at(1), *reported);
        sets.at(1)->setLabel(tr("applications (%1 reported)").arg(static_cast<qulonglong>(total(*reported))));
    }
    yAxis_->setLabelFormat(percent ? QStringLiteral("%.0f %%") : QStringLiteral("%.0f"));
    yAxis_->setRange(0, std::max(percent ? 10.0 : 5.0, maxValue * 1.1));
    yAxis_->applyNiceNumbers();
    yAxis_->setTitleText(percent ? tr("share of holds") : tr("holds"));

    chart_->setTitle(id ? lockCombo_->currentText() : tr("All locks"));
    QStringList lines{quantileLine(tr("monitor"), observed)};
    if (reported) lines << quantileLine(tr("applications"), *reported);
    lines << tr("The monitor sees a hold only if it spans a poll, so holds shorter than the poll interval are mostly missing from its counts.");
    quantiles_->setText(lines.join(QLatin1Char('\n')));
}

void HoldHistogramChart::selectLock(std::optional<pglock::monitor::LockId> id) {
    if (choicesDirty_) rebuildChoices();
    const auto it = std::find(choiceIds_.begin(), choiceIds_.end(), id);
    lockCombo_->setCurrentIndex(it == choiceIds_.end() ? 0 : static_cast<int>(it - choiceIds_.begin()));
    refresh();
}

std::optional<pglock::monitor::LockId> HoldHistogramChart::selectedLock() const {
    const int i = lockCombo_->currentIndex();
    return i >= 0 && static_cast<std::size_t>(i) < choiceIds_.size() ? choiceIds_[static_cast<std::size_t>(i)] : std::nullopt;
}

void HoldHistogramChart::setShowPercent(bool on) { percent_->setChecked(on); }

QStringList HoldHistogramChart::barSetLabels() const {
    QStringList labels;
    for (const QBarSet* set : series_->barSets()) labels << set->label();
    return labels;
}

std::vector<double> HoldHistogramChart::barValues(int set) const {
    std::vector<double> values;
    const auto sets = series_->barSets();
    if (set < 0 || set >= sets.size()) return values;
    for (int i = 0; i < sets.at(set)->count(); ++i) values.push_back(sets.at(set)->at(i));
    return values;
}

QString HoldHistogramChart::quantileText() const { return quantiles_->text(); }

QStringList HoldHistogramChart::lockChoices() const {
    QStringList out;
    for (int i = 0; i < lockCombo_->count(); ++i) out << lockCombo_->itemText(i);
    return out;
}

QWidget* HoldHistogramChart::exportedWidget() const { return exportArea_; }

bool HoldHistogramChart::exportPng(const QString& path) {
    refreshNow();
    return writeWidgetPng(exportArea_, path);
}

void HoldHistogramChart::exportInteractively() {
    refreshNow();
    exportPngInteractively(exportArea_, this, QStringLiteral("lockscope-hold-durations.png"));
}

}  // namespace lockscope::charts
