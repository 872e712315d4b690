// The hold-duration histogram: bars per bucket (≤1ms … ≤600s, >600s) for one lock or all of
// them, "monitor" (holds the poller saw end) next to "applications" (what the services' own
// lock_hold_duration_seconds reported, when scraped), with p50/p90/p99 estimated from the buckets.
// Redraws are coalesced: model changes schedule one refresh at most every kRefreshMs.
#pragma once

#include <QTimer>
#include <QWidget>

#include <optional>
#include <vector>

#include "charts/hold_stats_model.hpp"

class QBarCategoryAxis;
class QBarSeries;
class QBarSet;
class QChart;
class QChartView;
class QCheckBox;
class QComboBox;
class QLabel;
class QValueAxis;

namespace lockscope::charts {

class HoldHistogramChart : public QWidget {
    Q_OBJECT

public:
    static constexpr int kRefreshMs = 250;

    explicit HoldHistogramChart(HoldStatsModel* model, QWidget* parent = nullptr);

    // nullopt = all locks.
    void selectLock(std::optional<pglock::monitor::LockId> id);
    std::optional<pglock::monitor::LockId> selectedLock() const;
    // Bars as percentages of each source's total rather than counts (to compare the shapes).
    void setShowPercent(bool on);

    // Applies pending model changes now instead of at the next throttled refresh.
    void refreshNow();
    bool exportPng(const QString& path);
    QWidget* exportedWidget() const;

    // What is drawn, for tests: the bar sets' labels and values, and the quantile line.
    QStringList barSetLabels() const;
    std::vector<double> barValues(int set) const;
    QString quantileText() const;
    QStringList lockChoices() const;

protected:
    void showEvent(QShowEvent* event) override;
    void changeEvent(QEvent* event) override;

private:
    // Colours from the palette (theme/app_palette.hpp): at construction and on every palette change.
    void applyPalette();
    void scheduleRefresh();
    void refresh();
    void rebuildChoices();
    void exportInteractively();

    HoldStatsModel* model_;
    QComboBox* lockCombo_ = nullptr;
    QCheckBox* percent_ = nullptr;
    QLabel* quantiles_ = nullptr;
    QWidget* exportArea_ = nullptr;
    QChartView* view_ = nullptr;
    QChart* chart_ = nullptr;
    QBarSeries* series_ = nullptr;
    QBarCategoryAxis* xAxis_ = nullptr;
    QValueAxis* yAxis_ = nullptr;
    std::vector<std::optional<pglock::monitor::LockId>> choiceIds_;  // parallel to lockCombo_
    bool choicesDirty_ = true;
    bool showingApplications_ = false;
    QTimer refreshTimer_;
    // Changes came while hidden: refresh when shown, not every kRefreshMs for nobody (rebuilding
    // a combo of up to 20,000 locks on the GUI thread).
    bool stale_ = false;
};

}  // namespace lockscope::charts
