// The hold timeline: one lane per lock that was held in the chosen window (5 min … 24 h), a bar
// per hold (see TimelineBarsItem), and below it the number of waiting sessions over the same
// time. Lanes are sorted by name (the model keeps that order, so a refresh only filters it) and
// at least kMinLanePx tall; when they do not all fit, a scroll bar (or the mouse wheel) pages
// through them.
//
// Polls only mark the chart stale; it redraws at most every kRefreshMs, so a burst of polls or a
// poll of thousands of holds costs one repaint.
#pragma once

#include <QMargins>
#include <QTimer>
#include <QWidget>

#include <vector>

#include "charts/timeline_model.hpp"

class QCategoryAxis;
class QChart;
class QChartView;
class QComboBox;
class QDateTimeAxis;
class QLabel;
class QLineSeries;
class QScrollBar;
class QValueAxis;

namespace lockscope::charts {

class TimelineBarsItem;

class TimelineChart : public QWidget {
    Q_OBJECT

public:
    static constexpr int kRefreshMs = 250;
    static constexpr int kMinLanePx = 22;

    explicit TimelineChart(TimelineModel* model, QWidget* parent = nullptr);

    // One of 300, 900, 3600, 21600, 86400 seconds (others snap to the nearest offered).
    void setWindowSeconds(int seconds);
    int windowSeconds() const;

    void refreshNow();
    bool exportPng(const QString& path);
    QWidget* exportedWidget() const { return exportArea_; }

    // For tests: what the last refresh laid out.
    QStringList visibleLaneLabels() const;
    int laneTotal() const { return static_cast<int>(orderedLanes_.size()); }
    int refreshCount() const { return refreshCount_; }
    const TimelineBarsItem* barsItem() const { return bars_; }
    QChart* chart() const { return chart_; }
    QChart* waitersChart() const { return waitersChart_; }
    // The time span (server epoch seconds) the last refresh showed.
    double shownFrom() const { return shownFrom_; }
    double shownTo() const { return shownTo_; }
    const QLineSeries* waitersSeries() const { return waitersSeries_; }

protected:
    bool eventFilter(QObject* watched, QEvent* event) override;
    void showEvent(QShowEvent* event) override;
    void changeEvent(QEvent* event) override;

private:
    // Colours from the palette (theme/app_palette.hpp): at construction and on every palette change.
    void applyPalette();
    // The waiting chart's plot gets the lanes' exact left and right (and the lanes the waiting
    // chart's, where its labels need more), so a time is one pixel column in both.
    void alignPlotAreas();
    void scheduleRefresh();
    void refresh();
    void updateLaneAxis(const std::vector<const TimelineModel::Lane*>& visible, int bands);
    void updateWaiters(double t0, double t1);

    TimelineModel* model_;
    QComboBox* window_ = nullptr;
    QLabel* legend_ = nullptr;
    QWidget* exportArea_ = nullptr;
    QChartView* view_ = nullptr;
    QChart* chart_ = nullptr;
    QDateTimeAxis* xAxis_ = nullptr;
    double shownFrom_ = 0, shownTo_ = 0;
    QCategoryAxis* yAxis_ = nullptr;
    QLineSeries* anchor_ = nullptr;  // empty: gives the axes a series, so the plot area has a domain
    TimelineBarsItem* bars_ = nullptr;
    QScrollBar* laneScroll_ = nullptr;
    QChartView* waitersView_ = nullptr;
    QChart* waitersChart_ = nullptr;
    QLineSeries* waitersSeries_ = nullptr;
    QDateTimeAxis* waitersX_ = nullptr;
    QValueAxis* waitersY_ = nullptr;
    QMargins lanesPad_, waitersPad_;  // margin added to each chart's own by alignPlotAreas()
    std::vector<const TimelineModel::Lane*> orderedLanes_;  // lanes active in the window, by label (valid in refresh())
    QTimer refreshTimer_;
    int refreshCount_ = 0;
    int lastCapacity_ = 0;
    // Polls came while the chart was hidden (another tab): it refreshes when shown, not every
    // kRefreshMs for nobody.
    bool stale_ = false;
};

}  // namespace lockscope::charts
