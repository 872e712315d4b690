#include "charts/timeline_chart.hpp"

#include <QCategoryAxis>
#include <QChart>
#include <QChartView>
#include <QComboBox>
#include <QCoreApplication>
#include <QDateTime>
#include <QDateTimeAxis>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineSeries>
#include <QPushButton>
#include <QScrollBar>
#include <QValueAxis>
#include <QVBoxLayout>
#include <QWheelEvent>

#include <algorithm>
#include <cmath>

#include "charts/chart_style.hpp"
#include "charts/png_export.hpp"
#include "charts/timeline_bars_item.hpp"
#include "models/locks_model.hpp"
#include "theme/app_palette.hpp"

namespace lockscope::charts {

namespace {

constexpr std::pair<int, const char*> kWindows[] = {
    {300, "5 min"}, {900, "15 min"}, {3600, "1 h"}, {6 * 3600, "6 h"}, {24 * 3600, "24 h"}};
constexpr int kDefaultWindowIndex = 1;
constexpr int kWaitersHeight = 150;
constexpr int kLaneLabelPx = 220;
const QMargins kLanesMargins(4, 4, 8, 4);
const QMargins kWaitersMargins(4, 0, 8, 4);  // longer names are elided in the middle; the tooltip has them whole

QDateTime dateTimeOf(double epochSeconds) {
    return QDateTime::fromMSecsSinceEpoch(static_cast<qint64>(std::llround(epochSeconds * 1000.0)));
}

constexpr double kMinSpanSeconds = 30;

QString timeFormat(int windowSeconds) { return windowSeconds <= 3600 ? QStringLiteral("HH:mm:ss") : QStringLiteral("HH:mm"); }

// A lane is shown when some bar of it reaches into [t0, ...]: open bars always do, and finished
// bars are kept in the order they ended, so the last one tells.
bool activeSince(const TimelineModel::Lane& lane, double t0) {
    return !lane.open.empty() || (!lane.finished.empty() && lane.finished.back().end >= t0);
}

}  // namespace

TimelineChart::TimelineChart(TimelineModel* model, QWidget* parent) : QWidget(parent), model_(model) {
    window_ = new QComboBox(this);
    window_->setObjectName(QStringLiteral("timelineWindow"));
    for (const auto& [seconds, label] : kWindows) window_->addItem(tr(label), seconds);
    window_->setCurrentIndex(kDefaultWindowIndex);
    legend_ = new QLabel(this);
    legend_->setObjectName(QStringLiteral("timelineLegend"));
    legend_->setTextFormat(Qt::RichText);  // only our own words and colours, never a lock name
    auto* exportButton = new QPushButton(tr("Export PNG…"), this);

    chart_ = new QChart;
    chart_->setAnimationOptions(QChart::NoAnimation);
    chart_->legend()->hide();
    chart_->setMargins(kLanesMargins);
    anchor_ = new QLineSeries;
    chart_->addSeries(anchor_);
    xAxis_ = new QDateTimeAxis;
    xAxis_->setTickCount(7);
    yAxis_ = new QCategoryAxis;
    yAxis_->setLabelsPosition(QCategoryAxis::AxisLabelsPositionCenter);
    yAxis_->setGridLineVisible(false);
    yAxis_->setTruncateLabels(false);  // names are elided in the middle beforehand, which keeps both ends
    chart_->addAxis(xAxis_, Qt::AlignBottom);
    chart_->addAxis(yAxis_, Qt::AlignLeft);
    anchor_->attachAxis(xAxis_);
    anchor_->attachAxis(yAxis_);
    bars_ = new TimelineBarsItem(model_, chart_);
    view_ = new QChartView(chart_);
    view_->setRenderHint(QPainter::Antialiasing, false);  // crisp lane bars; and faster
    view_->viewport()->installEventFilter(this);

    waitersChart_ = new QChart;
    waitersChart_->setAnimationOptions(QChart::NoAnimation);
    waitersChart_->legend()->hide();
    waitersChart_->setMargins(kWaitersMargins);
    waitersSeries_ = new QLineSeries;
    waitersSeries_->setName(tr("waiting sessions"));
    waitersChart_->addSeries(waitersSeries_);
    waitersX_ = new QDateTimeAxis;
    waitersX_->setTickCount(7);
    waitersY_ = new QValueAxis;
    waitersY_->setLabelFormat(QStringLiteral("%.0f"));
    waitersY_->setTitleText(tr("waiting"));
    // Counts are short; QChart would elide them to "…" when the alignment margin squeezes the axis.
    waitersY_->setTruncateLabels(false);
    waitersChart_->addAxis(waitersX_, Qt::AlignBottom);
    waitersChart_->addAxis(waitersY_, Qt::AlignLeft);
    waitersSeries_->attachAxis(waitersX_);
    waitersSeries_->attachAxis(waitersY_);
    waitersView_ = new QChartView(waitersChart_);
    waitersView_->setFixedHeight(kWaitersHeight);
    waitersView_->setRenderHint(QPainter::Antialiasing);

    laneScroll_ = new QScrollBar(Qt::Vertical);
    laneScroll_->setObjectName(QStringLiteral("timelineLaneScroll"));

    exportArea_ = new QWidget(this);
    auto* charts = new QVBoxLayout;
    charts->setSpacing(0);
    charts->addWidget(view_, 1);
    charts->addWidget(waitersView_);
    auto* area = new QHBoxLayout(exportArea_);
    area->setContentsMargins(0, 0, 0, 0);
    area->setSpacing(0);
    area->addLayout(charts, 1);
    area->addWidget(laneScroll_);

    auto* top = new QHBoxLayout;
    top->addWidget(new QLabel(tr("Window:"), this));
    top->addWidget(window_);
    top->addSpacing(12);
    top->addWidget(legend_, 1);
    top->addWidget(exportButton);
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
    connect(model_, &TimelineModel::updated, this, &TimelineChart::scheduleRefresh);
    connect(window_, &QComboBox::currentIndexChanged, this, &TimelineChart::refresh);
    connect(laneScroll_, &QScrollBar::valueChanged, this, &TimelineChart::refresh);
    // New axis labels move the plot area: lay the bars out again.
    connect(chart_, &QChart::plotAreaChanged, this, [this](const QRectF& plot) {
        bars_->setLayout(bars_->layout());
        if (static_cast<int>(plot.height()) / kMinLanePx != lastCapacity_) scheduleRefresh();
    });
    // Either chart lays itself out again (new labels, a resize): align again when the two differ.
    for (QChart* chart : {chart_, waitersChart_})
        connect(chart, &QChart::plotAreaChanged, this, [this] {
            const QRectF a = chart_->plotArea(), b = waitersChart_->plotArea();
            if (std::abs(a.left() - b.left()) > 0.5 || std::abs(a.right() - b.right()) > 0.5) alignPlotAreas();
        }, Qt::QueuedConnection);
    connect(exportButton, &QPushButton::clicked, this, [this] {
        refreshNow();
        exportPngInteractively(exportArea_, this, QStringLiteral("lockscope-timeline.png"));
    });
    applyPalette();
    refresh();
}

void TimelineChart::applyPalette() {
    using theme::ChartInk;
    const auto swatch = [](ChartInk ink, const QString& what) {
        return QStringLiteral("<span style='color:%1'>■</span> %2").arg(theme::chartInk(ink).name(), what);
    };
    legend_->setText(QStringList{swatch(ChartInk::exclusive, tr("exclusive")), swatch(ChartInk::shared, tr("shared")),
                                 swatch(ChartInk::heldExclusive, tr("held now (exclusive)")),
                                 swatch(ChartInk::heldShared, tr("held now (shared)")), tr("hover a bar for its holder")}
                         .join(QStringLiteral(" &nbsp; ")));
    charts::applyPalette(*chart_);
    charts::applyPalette(*waitersChart_);
    yAxis_->setLinePenColor(theme::chartInk(ChartInk::axisLine));
    waitersSeries_->setColor(theme::chartInk(ChartInk::waiters));
    bars_->update();
}

void TimelineChart::changeEvent(QEvent* event) {
    QWidget::changeEvent(event);
    if (event->type() == QEvent::PaletteChange) applyPalette();
}

void TimelineChart::alignPlotAreas() {
    // Each chart lays itself out (QChart's own layout keeps its axes, grid and plot consistent);
    // the one whose labels need less room gets that much more margin, so both plots start and end
    // at the same column. The padding given before is taken off first: what a chart needs now.
    const QRectF lanes = chart_->plotArea(), waiters = waitersChart_->plotArea();
    if (lanes.isEmpty() || waiters.isEmpty()) return;
    const double lanesLeft = lanes.left() - lanesPad_.left(), waitersLeft = waiters.left() - waitersPad_.left();
    const double lanesRight = chart_->size().width() - lanes.right() - lanesPad_.right();
    const double waitersRight = waitersChart_->size().width() - waiters.right() - waitersPad_.right();
    const double left = std::max(lanesLeft, waitersLeft), right = std::max(lanesRight, waitersRight);
    const auto px = [](double v) { return static_cast<int>(std::lround(v)); };
    const QMargins lanesPad(px(left - lanesLeft), 0, px(right - lanesRight), 0);
    const QMargins waitersPad(px(left - waitersLeft), 0, px(right - waitersRight), 0);
    if (lanesPad != lanesPad_) chart_->setMargins(kLanesMargins + (lanesPad_ = lanesPad));
    if (waitersPad != waitersPad_) waitersChart_->setMargins(kWaitersMargins + (waitersPad_ = waitersPad));
}

void TimelineChart::setWindowSeconds(int seconds) {
    int best = 0;
    for (int i = 0; i < static_cast<int>(std::size(kWindows)); ++i)
        if (std::abs(kWindows[i].first - seconds) < std::abs(kWindows[best].first - seconds)) best = i;
    window_->setCurrentIndex(best);
}

int TimelineChart::windowSeconds() const { return window_->currentData().toInt(); }

void TimelineChart::scheduleRefresh() {
    if (!refreshTimer_.isActive()) refreshTimer_.start();
}

void TimelineChart::refreshNow() {
    refreshTimer_.stop();
    refresh();
}

void TimelineChart::showEvent(QShowEvent* event) {
    QWidget::showEvent(event);
    if (stale_) refreshNow();
}

void TimelineChart::refresh() {
    ++refreshCount_;
    stale_ = false;
    const int window = windowSeconds();
    // The right edge is the server's time at the latest poll, not the local clock: the server's
    // clock is what hold times are in.
    const double t1 = model_->latestTime() > 0 ? model_->latestTime()
                                                : static_cast<double>(QDateTime::currentMSecsSinceEpoch()) / 1000.0;
    // While the app has watched less than the window, the axis covers what it has seen (at least
    // kMinSpanSeconds), not minutes of nothing before the first poll.
    const double watched = model_->watchedSince();
    const bool partial = watched > 0 && t1 - watched < window;
    const double t0 = partial ? std::min(watched, t1 - kMinSpanSeconds) : t1 - window;
    shownFrom_ = t0;
    shownTo_ = t1;
    const QString span = partial ? tr("%1 (watched so far)").arg(LocksModel::formatDuration(t1 - t0)) : window_->currentText();

    // Already in label order: a walk, not a sort of 10,000 labels every kRefreshMs.
    orderedLanes_.clear();
    for (const TimelineModel::Lane* lane : model_->lanesByLabel())
        if (activeSince(*lane, t0)) orderedLanes_.push_back(lane);

    const double plotHeight = chart_->plotArea().height();
    const int capacity = plotHeight > kMinLanePx ? static_cast<int>(plotHeight) / kMinLanePx : 10;
    lastCapacity_ = capacity;
    const int laneTotal = static_cast<int>(orderedLanes_.size());
    const int bands = std::max(1, std::min(capacity, laneTotal));
    {
        const QSignalBlocker block(laneScroll_);
        laneScroll_->setRange(0, std::max(0, laneTotal - bands));
        laneScroll_->setPageStep(bands);
        laneScroll_->setVisible(laneTotal > bands);
    }
    const int first = laneScroll_->value();
    const std::vector<const TimelineModel::Lane*> visible(orderedLanes_.begin() + std::min(first, laneTotal),
                                                          orderedLanes_.begin() + std::min(first + bands, laneTotal));
    updateLaneAxis(visible, bands);

    xAxis_->setFormat(timeFormat(window));
    xAxis_->setRange(dateTimeOf(t0), dateTimeOf(t1));
    chart_->setTitle(laneTotal > bands ? tr("%1 locks held in the last %2 (%3–%4 shown)")
                                             .arg(laneTotal).arg(span).arg(first + 1)
                                             .arg(first + static_cast<int>(visible.size()))
                                       : tr("%n lock(s) held in the last %1", nullptr, laneTotal).arg(span));

    TimelineBarsItem::Layout layout;
    layout.bandCount = bands;
    layout.t0 = t0;
    layout.t1 = t1;
    for (const TimelineModel::Lane* lane : visible) layout.lanes.push_back(lane->id);
    bars_->setLayout(std::move(layout));

    updateWaiters(t0, t1);
}

void TimelineChart::updateLaneAxis(const std::vector<const TimelineModel::Lane*>& visible, int bands) {
    for (const QString& label : yAxis_->categoriesLabels()) yAxis_->remove(label);
    const QFontMetrics metrics(yAxis_->labelsFont());
    QStringList used;
    // Category bands are appended bottom-up; lane 0 is the top band, [bands-1, bands].
    for (int band = 0; band < bands; ++band) {
        const int slot = bands - 1 - band;
        QString label;
        if (slot < static_cast<int>(visible.size()))
            label = metrics.elidedText(visible[static_cast<std::size_t>(slot)]->label, Qt::ElideMiddle, kLaneLabelPx);
        // A category axis needs distinct labels; elided names (or empty bands) may repeat.
        while (used.contains(label)) label += QChar(0x200B);
        used << label;
        yAxis_->append(label, band + 1);
    }
    yAxis_->setStartValue(0);
    yAxis_->setRange(0, bands);
}

void TimelineChart::updateWaiters(double t0, double t1) {
    const auto& samples = model_->waiterSeries();
    const auto from = std::lower_bound(samples.begin(), samples.end(), t0,
                                       [](const TimelineModel::WaiterSample& s, double t) { return s.time < t; });
    const auto inWindow = static_cast<std::size_t>(samples.end() - from);
    const int columns = std::max(50, static_cast<int>(waitersChart_->plotArea().width()));
    QList<QPointF> points;
    int maxWaiters = 0;
    if (inWindow <= static_cast<std::size_t>(2 * columns)) {
        // Few enough to draw as steps: the count holds until the next poll.
        points.reserve(static_cast<qsizetype>(2 * inWindow));
        for (auto it = from; it != samples.end(); ++it) {
            const double ms = it->time * 1000.0;
            if (!points.isEmpty()) points.append(QPointF(ms, points.last().y()));
            points.append(QPointF(ms, it->waiters));
            maxWaiters = std::max(maxWaiters, it->waiters);
        }
    } else {
        // More polls than pixels: the busiest poll of each pixel column, so no spike is lost.
        const double span = std::max(1e-9, t1 - t0);
        std::vector<int> peak(static_cast<std::size_t>(columns), -1);
        for (auto it = from; it != samples.end(); ++it) {
            const auto c = std::clamp(static_cast<int>((it->time - t0) / span * columns), 0, columns - 1);
            peak[static_cast<std::size_t>(c)] = std::max(peak[static_cast<std::size_t>(c)], it->waiters);
        }
        for (int c = 0; c < columns; ++c) {
            if (peak[static_cast<std::size_t>(c)] < 0) continue;
            points.append(QPointF((t0 + span * (c + 0.5) / columns) * 1000.0, peak[static_cast<std::size_t>(c)]));
            maxWaiters = std::max(maxWaiters, peak[static_cast<std::size_t>(c)]);
        }
    }
    waitersSeries_->replace(points);
    waitersX_->setFormat(timeFormat(windowSeconds()));
    waitersX_->setRange(dateTimeOf(t0), dateTimeOf(t1));
    waitersY_->setRange(0, std::max(4, maxWaiters + 1));
    waitersY_->applyNiceNumbers();
}

QStringList TimelineChart::visibleLaneLabels() const {
    QStringList out;
    const auto& layout = bars_->layout();
    for (const auto& id : layout.lanes)
        if (const int row = model_->rowOfLane(id); row >= 0) out << model_->laneAt(row).label;
    return out;
}

bool TimelineChart::exportPng(const QString& path) {
    refreshNow();
    return writeWidgetPng(exportArea_, path);
}

bool TimelineChart::eventFilter(QObject* watched, QEvent* event) {
    // The wheel over the lanes pages through them (the chart itself has nothing to scroll).
    if (watched == view_->viewport() && event->type() == QEvent::Wheel && laneScroll_->isVisible()) {
        QCoreApplication::sendEvent(laneScroll_, event);
        return true;
    }
    return QWidget::eventFilter(watched, event);
}

}  // namespace lockscope::charts
