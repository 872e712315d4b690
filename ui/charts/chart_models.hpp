// The charts' data, without a widget: the hold timeline and the hold-duration histogram models,
// fed from the poller's results. A server session owns one; the charts panel draws it. Cheap per
// poll: the models merge the result, the charts repaint at most a few times a second.
#pragma once

#include <QByteArray>
#include <QObject>

#include <cstdint>
#include <optional>
#include <vector>

#include "charts/hold_stats_model.hpp"
#include "charts/lock_label.hpp"
#include "charts/timeline_model.hpp"
#include "poller/poll_result.hpp"

namespace lockscope::charts {

// One name's lock_hold_duration_seconds histogram, summed over the scraped endpoints.
struct ScrapedHistogram {
    QByteArray name;
    std::vector<double> upperBounds;       // le values, +Inf allowed
    std::vector<double> cumulativeCounts;  // the _bucket values, same order
    double sum = 0;
    double count = 0;
};

class ChartModels : public QObject {
    Q_OBJECT

public:
    explicit ChartModels(QObject* parent = nullptr);

    // A poll arrived. A result of another connection (generation) than the previous ones starts
    // the charts over, as clear() does.
    void addPoll(const PollResultPtr& poll);
    // The app's naming rule (lock_naming.hpp); call refreshNames() when the catalog changes and
    // relabel() when the names of a few keys changed (a name learned from a holder).
    void setNamer(LockNamer namer);
    void refreshNames();
    void relabel(const std::vector<std::int64_t>& keys);
    // Replaces every scraped histogram (names not in `histograms` lose theirs).
    void setScrapedHistograms(const std::vector<ScrapedHistogram>& histograms);
    // A new connection: forget holds, waiters and scraped data.
    void clear();

    TimelineModel* timelineModel() const { return timeline_; }
    HoldStatsModel* holdStatsModel() const { return stats_; }

private:
    TimelineModel* timeline_;
    HoldStatsModel* stats_;
    std::optional<quint64> generation_;
};

}  // namespace lockscope::charts
