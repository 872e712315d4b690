// The hold timeline: one lane per lock, one bar per hold (open ones run to the latest poll), and
// the number of waiting sessions at each poll.
//
// As an item model it is a two-level tree: lanes at the top (sorted by LockId), their bars as
// children — the finished bars first, in the order they ended, then the open ones by pid. The
// chart does not go through data() to paint; it reads lanes() directly.
//
// addPoll() costs O(what changed): new holds become open bars, holds that ended move from the
// open part to the end of the finished part, and trimming removes bars from the front of the
// finished parts only. Nothing is rebuilt and the model is reset only by clear().
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
#include <QHash>
#include <QString>

#include <cstdint>
#include <deque>
#include <memory>
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

    struct Lane {
        pglock::monitor::LockId id;
        std::int64_t key = 0;
        QString label;
        std::deque<Bar> finished;  // in the order they ended
        std::vector<Bar> open;     // sorted by (pid, start)
        quint64 serial = 0;        // stable identity for child indexes
        quint64 firstSeq = 0;      // sequence number of finished.front(), see trimFinished()
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

    explicit TimelineModel(QObject* parent = nullptr) : TimelineModel(Limits{}, parent) {}
    explicit TimelineModel(Limits limits, QObject* parent = nullptr);
    ~TimelineModel() override;

    void addPoll(const PollResult& poll);
    void clear();  // a new connection; the one place that resets the model
    void setNameResolver(NameResolver resolver);
    void refreshNames();

    const Limits& limits() const { return limits_; }
    int laneCount() const { return static_cast<int>(lanes_.size()); }
    const Lane& laneAt(int row) const { return *lanes_.at(static_cast<std::size_t>(row)); }
    int rowOfLane(const pglock::monitor::LockId& id) const;  // -1 when absent
    std::size_t finishedBarCount() const { return finishedCount_; }
    std::size_t barCount() const;
    // Server time of the latest poll (0 before the first): the right edge of the timeline.
    double latestTime() const { return latest_; }
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
    int ensureLane(const pglock::monitor::LockId& id, std::int64_t key);
    Lane* laneOfSerial(quint64 serial) const;
    void appendFinished(int laneRow, Bar bar);
    void closeOpenBar(int laneRow, std::size_t openIndex, double end);
    void trimFinished();
    void removeEmptyLanes(const std::vector<quint64>& candidates);
    void recordWaiters(const pglock::monitor::Snapshot& snap);
    QString intern(const std::string& text);
    QVariant barData(const Lane& lane, const Bar& bar, int column, int role) const;

    Limits limits_;
    std::vector<std::unique_ptr<Lane>> lanes_;  // sorted by LockId
    std::unordered_map<quint64, Lane*> laneOfSerial_;
    quint64 nextSerial_ = 1;  // 0 is "top-level row" in internalId
    // Every finished bar as (lane serial, sequence number), in the order they were appended: the
    // oldest-ended first, which is the order the age and total caps drop them in. Entries of bars
    // that a per-lane cap already dropped are stale and skipped (compacted when they pile up).
    std::deque<std::pair<quint64, quint64>> finishedOrder_;
    std::size_t finishedCount_ = 0;
    std::deque<WaiterSample> waiters_;
    std::unordered_map<quint64, bool> openLanes_;  // serials of the lanes that have open bars
    double latest_ = 0;
    quint64 pollSeq_ = 0;  // counts addPoll() calls, for Bar::seenInPoll
    QHash<QByteArray, QString> interned_;
    NameResolver resolver_;
};

}  // namespace lockscope::charts
