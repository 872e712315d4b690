// The Fleet tab's model, without a widget: one row per server session of the window, each with
// what an operator scans a fleet for. Label, state (connecting, disconnected-retrying, standby,
// primary), the host:port the last poll reached (libpq's pick on a multi-host conninfo, so a
// failover shows), read-only or not, locks, waiters, the longest wait with its lock's name, the
// longest hold, holders idle in transaction, the oldest xmin pin, the poll latency, and the
// waiters of the last kHistoryLength polls for a sparkline.
//
// It only listens: every number comes from the session's own poll results on the GUI thread
// (queued from each session's poller thread), so a slow or dead server stalls nothing here.
//
// data() and rank() are current at once; the views hear of the changes at most every
// kNotifyInterval, in one dataChanged over every row. With 50 servers each polled once a second,
// a dataChanged per result meant ~50 re-sorts and repaints of the Fleet table a second: half the
// GUI thread's time in the 50-server benchmark (docs/performance.md).
//
// "Worst first" (the order of rank(), and the Server column's SortRole ascending):
//   1. a server that cannot be polled (disconnected and retrying, or its last poll failed),
//      then one still connecting, then the reachable ones;
//   2. then the longest current wait, longest first;
//   3. then more waiting sessions; 4. more holders idle in transaction; 5. the longest hold;
//   6. then by label, so that equal servers keep a stable order.
#pragma once

#include <QAbstractTableModel>
#include <QList>
#include <QString>
#include <QTimer>

#include <chrono>
#include <deque>
#include <optional>
#include <vector>

#include "models/lock_summary.hpp"
#include "poller/poll_result.hpp"

namespace lockscope {

class ServerSession;

class FleetModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column {
        Server, State, Address, Access, Locks, Waiters, LongestWait, LongestHold, IdleInTransaction, XminPin, PollLatency,
        Trend, ColumnCount
    };
    enum Role {
        SortRole = Qt::UserRole + 1,  // numbers for the numeric columns; the worst-first rank for Server
        WaitersHistoryRole,           // QList<int>: waiters of the last polls, oldest first (Trend)
        UnreachableRole,              // bool: the row's numbers are as of the last good poll
    };
    // What the State column says, worst first.
    enum class ServerState { retrying, connecting, stopped, standby, primary };
    static constexpr int kHistoryLength = 60;
    static constexpr std::chrono::milliseconds kNotifyInterval{250};  // the GUI's shortest poll interval

    explicit FleetModel(QObject* parent = nullptr);

    // The model follows the session until it is removed or destroyed; it does not own it.
    void addSession(ServerSession* session);
    void removeSession(ServerSession* session);
    // The thresholds of "idle in transaction" (and the summary's other counts), as the window's.
    void setThresholds(const SummaryThresholds& thresholds) { thresholds_ = thresholds; }

    ServerSession* session(int row) const;
    int rowOf(const ServerSession* session) const;  // -1 when not shown
    ServerState state(int row) const;
    quint64 pollCount(int row) const;  // poll results the row has taken since it was added
    int rank(int row) const;           // 0 = the worst server
    static QString stateText(ServerState state);

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    struct Row {
        ServerSession* session = nullptr;
        LockSummary summary;
        QString longestWaitName;  // the lock's name by the session's naming rule
        QString address;          // host:port of the last poll ("" before the first)
        bool inRecovery = false;
        bool polled = false;      // a result since the last connectTo()
        int locks = 0;
        double latencyMs = 0;
        quint64 polls = 0;
        std::deque<int> waiters;  // the sparkline: at most kHistoryLength
        int rank = 0;
    };
    void onResult(ServerSession* session, const PollResultPtr& result);
    void onChanged(ServerSession* session);  // state or read-only: the row's cells, then the ranks
    void clearRow(ServerSession* session);
    void rerank();
    void changed();  // the views hear of it within kNotifyInterval
    void notifyViews();
    bool unreachable(const Row& row) const;
    int severity(const Row& row) const;  // 2 unreachable, 1 connecting or stopped, 0 polled
    QVariant display(const Row& row, int column) const;
    QVariant sortValue(const Row& row, int column) const;

    std::vector<Row> rows_;
    SummaryThresholds thresholds_;
    QTimer notify_;  // single shot: one dataChanged for what changed since it started
};

}  // namespace lockscope
