// The columns of the locks view, described once: for each column its header and header tooltip,
// its alignment, what its cells show (per role, for a lock row and for a waiter row) and what
// makes them change: the model and its incremental merge ask the column, rather than keeping
// switches and lists of their own, so that a column cannot be shown without saying what it shows
// and when its cells must be redrawn. lock_columns.cpp holds the one table and each column's
// functions; static_asserts there require a complete entry per LocksModel::Column, in order.
#pragma once

#include <QVariant>

#include "models/lock_cells.hpp"
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
    // What a lock row's cell shows for `role`: Qt::DisplayRole, ToolTipRole, DecorationRole, the
    // column's own tint (BackgroundRole and ForegroundRole) and LocksModel::SortRole (invalid:
    // the display text sorts). The rest is the model's, the same in every cell of a row: the own
    // lock's italics, the alignment above, the grey of a stale row and the highlight of a row
    // idle in transaction (which take the place of a cell's tint), and every other LocksModel role.
    QVariant (*lockCell)(const LockRowView&, int role, const CellContext&);
    // The same for a waiter row's cell; a waiter cell without a tooltip shows the waiter's query.
    QVariant (*waiterCell)(const WaiterRowView&, int role, const CellContext&);
    // Time-driven: its text, sort value and highlight move with the clock, and tick() refreshes it
    // every second; the change predicates cover only what a poll changes.
    bool ticks;
};

// The column's entry; `column` in [0, ColumnCount).
const ColumnSpec& spec(int column);
// The columns whose entry says `asked`, as a mask (bit c for column c): the merge's loop.
unsigned columnsAsked(Asked asked);

}  // namespace lockscope::columns
