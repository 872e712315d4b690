// What a column's cell functions (the column table, lock_columns.cpp) are given: the row they
// draw, as views into the snapshot it came from, and the model's naming rule, clock and settings.
// Also the text helpers every cell and the model's row-wide roles share, so that server text is
// shown one way everywhere.
#pragma once

#include <QString>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "models/lock_naming.hpp"
#include "pglock/monitor.hpp"

namespace lockscope {
class LocksModel;
}

namespace lockscope::columns {

// One lock row: the lock and the snapshot it came from.
struct LockRowView {
    const pglock::monitor::LockId& id;
    const pglock::monitor::LockEntry& entry;
    const pglock::monitor::Snapshot& snap;
    bool pair() const { return id.form == pglock::monitor::KeyForm::int_pair; }
};

// One waiter row: the waiting session under its lock.
struct WaiterRowView {
    const LockRowView& lock;
    int pid;
    const pglock::monitor::Waiter& waiter;
    const pglock::monitor::Backend* backend;  // null when pg_stat_activity had no row
};

// What a cell shows beyond its row's snapshot. Cheap to make (one reference): the model makes
// one per data() call.
class CellContext {
public:
    explicit CellContext(const LocksModel& model) : model_(model) {}
    // The app's one naming rule (lock_naming.hpp) for this lock, with its current holder's name.
    LockName name(const LockRowView& row) const;
    // Since the oldest current holder took the lock (the hold tracker's times); nullopt unknown.
    std::optional<double> heldSeconds(const LockRowView& row) const;
    // The server's clock now: the last poll's time moved on by the local time since; a stale
    // model's stays at that poll.
    double now() const;
    bool isOwnPid(int pid) const;  // one of LocksModel::setOwnPids()
    const LocksModel& model() const { return model_; }  // its thresholds

private:
    const LocksModel& model_;
};

// The values, each serverText() (server_text.hpp), joined by ", ".
QString joinedText(const std::vector<std::string_view>& values);
// A query as a tooltip shows it: serverQuery(), cut after 500 characters (the session panel shows
// all of it).
QString elidedQuery(const std::string& query);
// "(a, b) int4 pair".
QString int4PairText(const pglock::monitor::LockEntry& e);

}  // namespace lockscope::columns
