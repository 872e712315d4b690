// The charts tab of the main window: the hold timeline and the hold-duration histogram, drawn from
// a ChartModels (a server session's, or one of the panel's own). The data calls below go to those
// models; the panel itself only draws.
#pragma once

#include <QByteArray>
#include <QWidget>

#include <vector>

#include "charts/chart_models.hpp"
#include "charts/hold_histogram_chart.hpp"
#include "charts/timeline_chart.hpp"

class QTabWidget;

namespace lockscope::charts {

class ChartsPanel : public QWidget {
    Q_OBJECT

public:
    // Draws models of its own (standalone use, the tests).
    explicit ChartsPanel(QWidget* parent = nullptr);
    // Draws `models` (a server session's), which outlive the panel.
    explicit ChartsPanel(ChartModels& models, QWidget* parent = nullptr);

    // A poll arrived. A result of another connection (generation) than the previous ones starts
    // the charts over, as clear() does.
    void addPoll(const PollResultPtr& poll) { models_->addPoll(poll); }
    // The app's naming rule (lock_naming.hpp); call refreshNames() when the catalog changes and
    // relabel() when the names of a few keys changed (a name learned from a holder).
    void setNamer(LockNamer namer) { models_->setNamer(std::move(namer)); }
    void refreshNames() { models_->refreshNames(); }
    void relabel(const std::vector<std::int64_t>& keys) { models_->relabel(keys); }
    // Replaces every scraped histogram (names not in `histograms` lose theirs).
    void setScrapedHistograms(const std::vector<ScrapedHistogram>& histograms) { models_->setScrapedHistograms(histograms); }
    // A new connection: forget holds, waiters and scraped data.
    void clear() { models_->clear(); }

    ChartModels& models() const { return *models_; }
    TimelineModel* timelineModel() const { return models_->timelineModel(); }
    HoldStatsModel* holdStatsModel() const { return models_->holdStatsModel(); }
    TimelineChart* timelineChart() const { return timelineChart_; }
    HoldHistogramChart* histogramChart() const { return histogramChart_; }
    QTabWidget* tabs() const { return tabs_; }

private:
    ChartModels* models_;
    TimelineChart* timelineChart_;
    HoldHistogramChart* histogramChart_;
    QTabWidget* tabs_;
};

}  // namespace lockscope::charts
