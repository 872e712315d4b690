#include "charts/chart_models.hpp"

namespace lockscope::charts {

ChartModels::ChartModels(QObject* parent)
    : QObject(parent), timeline_(new TimelineModel(this)), stats_(new HoldStatsModel(this)) {}

void ChartModels::addPoll(const PollResultPtr& poll) {
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

void ChartModels::setNamer(LockNamer namer) {
    timeline_->setNamer(namer);
    stats_->setNamer(std::move(namer));
}

void ChartModels::refreshNames() {
    timeline_->refreshNames();
    stats_->refreshNames();
}

void ChartModels::relabel(const std::vector<std::int64_t>& keys) {
    timeline_->relabel(keys);
    stats_->relabel(keys);
}

void ChartModels::setScrapedHistograms(const std::vector<ScrapedHistogram>& histograms) {
    stats_->clearScrapedHistograms();
    for (const auto& h : histograms) stats_->setScrapedHistogram(h.name, h.upperBounds, h.cumulativeCounts, h.sum, h.count);
}

void ChartModels::clear() {
    generation_.reset();
    timeline_->clear();
    stats_->clear();
}

}  // namespace lockscope::charts
