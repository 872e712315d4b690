// The hold timeline: one lane per lock, one bar per hold (open ones run to the latest poll), and
// the number of waiting sessions at each poll.
//
// As an item model it is a two-level tree: lanes at the top (sorted by LockId), their bars as
// children — the finished bars first, in the order they ended, then the open ones by pid. The
// chart does not go through data() to paint; it reads lanes() directly.
//
// addPoll() costs O(what changed): new holds become open bars, holds that ended move from the
// open part to the end of the finished part, and trimming removes bars from the front of the
// finished parts only. Nothing is rebuilt and the model is reset only by clear(). Lanes new in a
// poll are built aside with their bars and inserted afterwards, one rowsInserted per run of
// adjacent new rows: the first poll of 10,000 locks is one insertion, not 10,000 insertions into
// a growing vector, each announced with its bars.
//
// The model also keeps its lanes in label order (lanesByLabel(), what the chart shows): every
// lane carries the collation key of its label, computed once when the lane or its name is new,
// and new lanes are merged into that order. A chart refresh walks it instead of sorting 10,000
// labels with locale-aware compares. Labelling is deferred: new lanes are labelled and merged
// kLabelChunk at a time in later event-loop turns (or at once when lanesByLabel() is asked), so
// that the first poll of 10,000 locks is not one long block on the GUI thread.
//
// Memory is bounded by Limits:
//   - finished bars that ended more than maxAgeSeconds (24 h) before the latest poll are dropped;
//   - a lane keeps at most maxBarsPerLane (5,000) finished bars, the model at most maxBars
//     (50,000) in all; the oldest-ended go first. Open bars are never dropped: they are what the
//     server holds right now, as many as it has;
//   - the waiters series keeps maxWaiterSamples (90,000: a day at the default 1 s poll) points.
// A bar is about 80 bytes plus shared strings, so 50,000 bars stay under ~5 MB.
#pragma once

#include <QAbstractItemModel>
#include <QCollator>
#include <QString>
#include <QTimer>

#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "charts/lock_label.hpp"
#include "poller/poll_result.hpp"

namespace lockscope::charts {

class TimelineModel : public QAbstractItemModel {
    Q_OBJECT

public:
    struct Limits {
        double maxAgeSeconds = 24 * 3600.0;
        std::size_t maxBarsPerLane = 5000;
        std::size_t maxBars = 50000;
        std::size_t maxWaiterSamples = 90000;
    };

    struct Bar {
        double start = 0;  // server epoch seconds
        double end = 0;    // server epoch seconds; for an open bar, the start (see TimelineModel::endOf)
        int pid = 0;
        bool shared = false;
        bool open = false;
        quint64 seenInPoll = 0;  // open bars: the last addPoll() whose snapshot showed the hold
        QString application;  // shared between bars of the same application (interned)
        QString user;
    };

    // A lane's finished bars: appended at the back, dropped from the front (the oldest-ended go
    // first). A vector with a moving head rather than a std::deque, which allocates ~600 bytes
    // for every lane before its first bar: 6 MB of allocations in the first poll of 10,000 locks.
    class BarQueue {
    public:
        std::size_t size() const { return bars_.size() - head_; }
        bool empty() const { return size() == 0; }
        const Bar& operator[](std::size_t i) const { return bars_[head_ + i]; }
        const Bar& front() const { return bars_[head_]; }
        const Bar& back() const { return bars_.back(); }
        void push_back(Bar bar) { bars_.push_back(std::move(bar)); }
        void dropFront(std::size_t count) {
            head_ += std::min(count, size());
            // Amortized O(1) per bar: compact once the dropped part outweighs the live one.
            if (head_ == bars_.size()) {
                bars_.clear();
                head_ = 0;
            } else if (head_ > 16 && head_ * 2 > bars_.size()) {
                bars_.erase(bars_.begin(), bars_.begin() + static_cast<std::ptrdiff_t>(head_));
                head_ = 0;
            }
        }

    private:
        std::vector<Bar> bars_;
        std::size_t head_ = 0;
    };

    struct Lane {
        pglock::monitor::LockId id;
        std::int64_t key = 0;
        QString label;  // empty until labelled (see labelPending); data() computes it meanwhile
        std::optional<QCollatorSortKey> sortKey;  // of label; set when labelled
        BarQueue finished;         // in the order they ended
        std::vector<Bar> open;     // sorted by (pid, start)
        quint64 serial = 0;        // stable identity for child indexes
        quint64 firstSeq = 0;      // sequence number of finished.front(), see trimFinished()
        bool gone = false;         // removed in this poll: removeEmptyLanes drops it from byLabel_
        bool inModel = false;      // false while addPoll() builds it (see insertNewLanes)
        std::size_t barCount() const { return finished.size() + open.size(); }
        const Bar& barAt(std::size_t i) const { return i < finished.size() ? finished[i] : open[i - finished.size()]; }
    };

    struct WaiterSample {
        double time = 0;  // server epoch seconds of the poll
        int waiters = 0;  // sessions waiting for an advisory lock
    };

    enum Column { Label, Start, End, Duration, Pid, Application, User, Mode, ColumnCount };
    Q_ENUM(Column)

    enum Role {
        KeyRole = Qt::UserRole + 1,  // qint64, the lane's key (bars: their lane's)
        StartRole,                   // double, server epoch seconds (bars only)
        EndRole,                     // double, or invalid while the hold lasts
        IsOpenRole,                  // bool
    };
    Q_ENUM(Role)

    static constexpr std::size_t kLabelChunk = 2000;  // lanes labelled per event-loop turn

    explicit TimelineModel(QObject* parent = nullptr) : TimelineModel(Limits{}, parent) {}
    explicit TimelineModel(Limits limits, QObject* parent = nullptr);
    ~TimelineModel() override;

    void addPoll(const PollResult& poll);
    void clear();  // a new connection; the one place that resets the model
    void setNamer(LockNamer namer);
    void refreshNames();
    // The names of these bigint keys changed (a name learned from a holder): their lanes are
    // relabelled and moved to their place in the label order; nothing else is touched.
    void relabel(const std::vector<std::int64_t>& keys);

    const Limits& limits() const { return limits_; }
    int laneCount() const { return static_cast<int>(lanes_.size()); }
    const Lane& laneAt(int row) const { return *lanes_.at(static_cast<std::size_t>(row)); }
    int rowOfLane(const pglock::monitor::LockId& id) const;  // -1 when absent
    // Every lane, sorted by label (locale-aware, as QString::localeAwareCompare) and then LockId;
    // labels the lanes still waiting for it first. Valid until the next addPoll(), clear() or
    // refreshNames().
    const std::vector<const Lane*>& lanesByLabel();
    std::size_t unlabelledCount() const { return unlabelled_.size(); }
    std::size_t finishedBarCount() const { return finishedCount_; }
    std::size_t barCount() const;
    // Server time of the latest poll (0 before the first): the right edge of the timeline.
    double latestTime() const { return latest_; }
    // Server time of the first poll since the last clear() (0 before it): the timeline has seen
    // nothing before it, so it need not show more.
    double watchedSince() const { return watchedSince_; }
    double endOf(const Bar& bar) const { return bar.open ? std::max(bar.start, latest_) : bar.end; }
    const std::deque<WaiterSample>& waiterSeries() const { return waiters_; }

    QModelIndex index(int row, int column, const QModelIndex& parent = {}) const override;
    QModelIndex parent(const QModelIndex& child) const override;
    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

signals:
    // After each addPoll() or clear(): the chart schedules a repaint on it.
    void updated();

private:
    // Lanes new in the poll being added, by LockId: not rows yet (see insertNewLanes).
    struct LaneRef {
        Lane* lane = nullptr;
        bool isNew = false;  // not in the model yet: its bars need no signals
    };
    struct IdHash {
        std::size_t operator()(const pglock::monitor::LockId& id) const noexcept {
            return std::hash<quint64>{}((quint64(id.tag.classid) << 32 | id.tag.objid) ^ quint64(id.form) << 63);
        }
    };
    using NewLanes = std::vector<std::unique_ptr<Lane>>;  // owned here, found through laneOfId_
    LaneRef findLane(const pglock::monitor::LockId& id) const;  // lane null when absent
    LaneRef laneFor(const pglock::monitor::LockId& id, std::int64_t key, NewLanes& fresh);
    int rowOf(const Lane& lane) const { return rowOfLane(lane.id); }
    QString labelOf(const Lane& lane) const { return lane.sortKey ? lane.label : lockLabel(lane.id, lane.key, namer_); }
    void insertNewLanes(NewLanes& fresh);
    void labelPending(std::size_t maxLanes);  // labels up to maxLanes new lanes, merges them into byLabel_
    bool labelBefore(const Lane* a, const Lane* b) const;
    Lane* laneOfSerial(quint64 serial) const;
    void appendFinished(LaneRef ref, Bar bar);  // ref.lane of the model, or a new one
    void closeOpenBar(int laneRow, std::size_t openIndex, double end);
    void trimFinished();
    void removeEmptyLanes(const std::vector<quint64>& candidates);
    void recordWaiters(const pglock::monitor::Snapshot& snap);
    QString intern(const std::string& text);
    QVariant barData(const Lane& lane, const Bar& bar, int column, int role) const;

    Limits limits_;
    std::vector<std::unique_ptr<Lane>> lanes_;  // sorted by LockId
    std::vector<const Lane*> byLabel_;          // the labelled lanes, sorted by labelBefore
    std::vector<Lane*> unlabelled_;             // lanes not labelled yet, oldest first
    QTimer labelTimer_;                         // zero timer: labels a chunk per event-loop turn
    QCollator collator_;                        // the default locale's, as localeAwareCompare
    std::unordered_map<quint64, Lane*> laneOfSerial_;
    // A poll looks up every lock it shows: a hash lookup each, not a binary search over 10,000
    // lanes. Also has the lanes addPoll() is building, not rows yet.
    std::unordered_map<pglock::monitor::LockId, Lane*, IdHash> laneOfId_;
    quint64 nextSerial_ = 1;  // 0 is "top-level row" in internalId
    // Every finished bar as (lane serial, sequence number), in the order they were appended: the
    // oldest-ended first, which is the order the age and total caps drop them in. Entries of bars
    // that a per-lane cap already dropped are stale and skipped (compacted when they pile up).
    std::deque<std::pair<quint64, quint64>> finishedOrder_;
    std::size_t finishedCount_ = 0;
    std::deque<WaiterSample> waiters_;
    std::size_t openBars_ = 0;
    double latest_ = 0;
    double watchedSince_ = 0;
    quint64 pollSeq_ = 0;  // counts addPoll() calls, for Bar::seenInPoll
    std::unordered_map<std::string, QString> interned_;
    LockNamer namer_;
};

}  // namespace lockscope::charts
