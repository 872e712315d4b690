// The columns of the locks view, described once: for each column its header and header tooltip,
// its alignment, and what makes its cells change: the incremental merge asks the column, rather
// than keeping a list of its own, so that a column cannot be shown without saying when its cells
// must be redrawn. lock_columns.cpp holds the one table; static_asserts there require a complete
// entry per LocksModel::Column, in order.
#pragma once

#include "models/locks_model.hpp"
#include "pglock/monitor.hpp"

namespace lockscope::columns {

// One lock in two consecutive snapshots, as the merge compares them.
struct LockChange {
    const pglock::monitor::LockEntry& before;
    const pglock::monitor::Snapshot& then;
    const pglock::monitor::LockEntry& after;
    const pglock::monitor::Snapshot& now;
};

// One waiting session in two consecutive snapshots (sessions: null when pg_stat_activity had no row).
struct WaiterChange {
    const pglock::monitor::Waiter& before;
    const pglock::monitor::Backend* beforeSession;
    const pglock::monitor::Waiter& after;
    const pglock::monitor::Backend* afterSession;
};

// When the merge asks a column whether a lock cell changed. Only a shortcut: lockChanged is right
// whenever it is asked; this says when it can answer nothing but "no", so that most rows of a
// poll cost no lookups at all.
enum class Asked {
    everyPoll,             // it shows facts of the lock itself (its waiters)
    whenHoldersMoved,      // the holders, or a field of their sessions, changed
    whenHoldersMovedOrIdle,  // that, or some holder is idle in transaction (its idle time runs)
    never,                 // the lock's identity: another value is another row
};

struct ColumnSpec {
    LocksModel::Column column;
    const char* header;     // translated in LocksModel's context
    const char* headerTip;  // nullptr: none
    bool alignRight;        // numbers and durations
    Asked asked;
    // Does a lock row's cell of this column show anything else (any role) after the change?
    // Row-wide changes (own-lock italics, the idle-in-transaction highlight) are the merge's.
    bool (*lockChanged)(const LockChange&);
    // The same for a waiter row's cell. A changed query is row-wide (every cell's tooltip).
    bool (*waiterChanged)(const WaiterChange&);
    // Time-driven: its text, sort value and highlight move with the clock, and tick() refreshes it
    // every second; the change predicates cover only what a poll changes.
    bool ticks;
};

// The column's entry; `column` in [0, ColumnCount).
const ColumnSpec& spec(int column);
// The columns whose entry says `asked`, as a mask (bit c for column c): the merge's loop.
unsigned columnsAsked(Asked asked);

}  // namespace lockscope::columns
