#include "charts/charts_panel.hpp"

#include <QTabWidget>
#include <QVBoxLayout>

namespace lockscope::charts {

ChartsPanel::ChartsPanel(QWidget* parent)
    : QWidget(parent),
      timeline_(new TimelineModel(this)),
      stats_(new HoldStatsModel(this)),
      timelineChart_(new TimelineChart(timeline_)),
      histogramChart_(new HoldHistogramChart(stats_)),
      tabs_(new QTabWidget(this)) {
    setObjectName(QStringLiteral("chartsPanel"));
    tabs_->addTab(timelineChart_, tr("Timeline"));
    tabs_->addTab(histogramChart_, tr("Hold durations"));
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(tabs_);
}

void ChartsPanel::addPoll(const PollResultPtr& poll) {
    if (!poll) return;
    if (generation_ && *generation_ != poll->generation) {
        // Another connection: its holds and times have nothing to do with the previous one's.
        timeline_->clear();
        stats_->clear();
    }
    generation_ = poll->generation;
    timeline_->addPoll(*poll);
    stats_->addPoll(*poll);
}

void ChartsPanel::setNamer(LockNamer namer) {
    timeline_->setNamer(namer);
    stats_->setNamer(std::move(namer));
}

void ChartsPanel::refreshNames() {
    timeline_->refreshNames();
    stats_->refreshNames();
}

void ChartsPanel::relabel(const std::vector<std::int64_t>& keys) {
    timeline_->relabel(keys);
    stats_->relabel(keys);
}

void ChartsPanel::setScrapedHistograms(const std::vector<ScrapedHistogram>& histograms) {
    stats_->clearScrapedHistograms();
    for (const auto& h : histograms) stats_->setScrapedHistogram(h.name, h.upperBounds, h.cumulativeCounts, h.sum, h.count);
}

void ChartsPanel::clear() {
    generation_.reset();
    timeline_->clear();
    stats_->clear();
}

}  // namespace lockscope::charts
