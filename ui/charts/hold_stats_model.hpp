// Per-lock hold-duration statistics for the histogram: one row per lock with the bucket counts of
// the holds the monitor saw end (pglock::hold_buckets plus overflow), their count, sum and maximum,
// and, when the app has scraped the services' /metrics, the lock_hold_duration_seconds histogram
// the applications themselves reported for that name.
//
// The two sources measure different things and are shown side by side, never added: the monitor
// only sees holds that span at least one poll (so it misses most holds shorter than the poll
// interval, and rounds the rest to poll times), while the applications time every hold exactly.
//
// addPoll() touches only the locks whose holds ended in that poll: new locks are inserted at their
// sorted place (one rowsInserted per run of adjacent new rows) and changed rows get one
// dataChanged each; the model is reset only by clear(). Rows are held by pointer, so an insertion
// or eviction in the middle of 20,000 rows shifts pointers, not ~300-byte records.
//
// Memory is bounded: a server that keeps taking locks on fresh keys (a key per job or per
// request) would otherwise add a row per key for as long as the app runs. Past maxRows() rows the
// ones whose last hold ended longest ago go, down to 98% of the cap (so that eviction is not paid
// at every poll); rows with scraped data stay (they are bounded by the scraped endpoints). The
// holds of evicted rows still count in observedTotal(), the "all locks" histogram.
#pragma once

#include <QAbstractTableModel>
#include <QByteArray>

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "charts/hold_histogram_math.hpp"
#include "charts/lock_label.hpp"
#include "poller/poll_result.hpp"

namespace lockscope::charts {

class HoldStatsModel : public QAbstractTableModel {
    Q_OBJECT

public:
    enum Column {
        Name,          // lockLabel() (the app's naming rule), or the scraped name escaped
        Key,           // the bigint key
        Count,         // holds the monitor saw end
        TotalSeconds,  // their summed duration
        MaxSeconds,    // the longest of them
        P50, P90, P99, // estimated from the observed buckets (histogram_quantile style)
        ScrapedCount,  // lock_hold_duration_seconds_count the applications reported, summed
        FirstBucket,   // then one column per bucket: observed holds in it ("≤1ms" … ">600s")
        ColumnCount = FirstBucket + static_cast<int>(kBucketCount)
    };
    Q_ENUM(Column)

    enum Role {
        KeyRole = Qt::UserRole + 1,  // qint64
        SortRole,                    // numbers for numeric columns, the label for Name
        ScrapedBucketRole,           // bucket columns: the scraped count in that bucket (double), else invalid
    };
    Q_ENUM(Role)

    struct Scraped {
        BucketCounts buckets{};
        double sum = 0;
        double count = 0;
    };
    struct LockStats {
        pglock::monitor::LockId id;
        std::int64_t key = 0;
        QString label;
        QByteArray scrapedName;  // set when the row has scraped data: the name it was reported as
        BucketCounts observed{};
        double count = 0;
        double sum = 0;
        double max = 0;
        double lastEnd = 0;  // server time the latest counted hold ended (what eviction goes by)
        std::optional<Scraped> scraped;
    };

    static constexpr std::size_t kDefaultMaxRows = 20000;

    explicit HoldStatsModel(QObject* parent = nullptr) : HoldStatsModel(kDefaultMaxRows, parent) {}
    explicit HoldStatsModel(std::size_t maxRows, QObject* parent = nullptr);
    std::size_t maxRows() const { return maxRows_; }

    // Counts the holds that ended in this poll.
    void addPoll(const PollResult& poll);
    // The applications' histogram for `name` (Prometheus cumulative buckets summed over endpoints;
    // see perBucketFromCumulative). Replaces what was set for that name before.
    void setScrapedHistogram(const QByteArray& name, std::vector<double> upperBounds,
                             std::vector<double> cumulativeCounts, double sum, double count);
    // Forgets every scraped histogram (rows left without observed holds go away).
    void clearScrapedHistograms();
    // A new connection: forget everything. The one place that resets the model.
    void clear();

    void setNamer(LockNamer namer);
    // The catalog changed: relabel every row (dataChanged on Name).
    void refreshNames();
    // The names of these bigint keys changed: relabel their rows only.
    void relabel(const std::vector<std::int64_t>& keys);

    const LockStats& statsAt(int row) const { return *rows_.at(static_cast<std::size_t>(row)); }
    int rowOfLock(const pglock::monitor::LockId& id) const;  // -1 when absent
    // Every row's buckets added up, for the "all locks" view.
    BucketCounts observedTotal() const;
    BucketCounts scrapedTotal() const;
    bool hasScraped() const;

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    // The row of `id`, inserted (with rowsInserted) when it is new.
    int ensureRow(const pglock::monitor::LockId& id, std::int64_t key);
    std::unique_ptr<LockStats> newRow(const pglock::monitor::LockId& id, std::int64_t key) const;
    QString labelOf(const LockStats& s) const;
    QVariant cell(const LockStats& s, int column) const;
    QVariant sortValue(const LockStats& s, int column) const;

    // Drops the rows whose last hold ended longest ago once there are more than maxRows_.
    void evict();

    std::vector<std::unique_ptr<LockStats>> rows_;  // sorted by LockId
    LockNamer namer_;
    std::size_t maxRows_;
    BucketCounts evicted_{};  // the observed buckets of evicted rows, for observedTotal()
};

}  // namespace lockscope::charts
