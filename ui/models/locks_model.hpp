// The locks view's model: one top-level row per advisory lock of the latest monitor snapshot, and
// under each lock one child row per session waiting for it.
//
// Polls arrive every second or so and usually change little, so applySnapshot() merges the new
// snapshot into the rows it already has: vanished locks are removed and new ones inserted in
// contiguous ranges, and dataChanged is emitted only for the cells whose shown data changed. It
// never resets the model, so a view's selection, expansion and scroll position survive a poll.
// Lock rows are kept in arrival order (waiters in pid order): gone locks leave as contiguous runs
// and new ones are appended in one range. A LockId-sorted index keeps the merge one linear walk;
// display order and the filter are the job of LocksFilterProxy, which relies on that order for
// its ties (arrival order).
//
// Rows point into the snapshot they came from (held by a shared_ptr), so merging an unchanged
// lock copies no strings and data() builds QStrings only when a view asks for them.
#pragma once

#include <QAbstractItemModel>
#include <QElapsedTimer>
#include <QList>
#include <QHash>
#include <QSet>
#include <QString>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <unordered_map>
#include <vector>

#include "models/lock_naming.hpp"
#include "pglock/monitor.hpp"
#include "pglock/orphan.hpp"
#include "poller/poll_result.hpp"

Q_DECLARE_METATYPE(pglock::monitor::LockId)

namespace lockscope {

namespace columns {
class CellContext;
}

class LocksModel : public QAbstractItemModel {
    Q_OBJECT

public:
    enum Column {
        Name,         // the lock's name as decideLockName() gives it (lock_naming.hpp): catalog,
                      // taken here, "… (from holder)", "(unknown) KEY" or "(a, b) int4 pair";
                      // waiters: "waiting: pid N"
        Key,          // the bigint key in decimal (tooltip: classid/objid)
        Mode,         // exclusive / shared / mixed; waiters: the mode they asked for
        Holders,      // "123, 456"; waiters: "blocked by 123"
        State,        // the holders' worst session state; waiters: their own state
        Application,
        User,
        Client,       // client_addr, or "local" for a unix-socket session; "(hostname)" after it
        HeldFor,      // since the oldest holder's hold started; waiters: "waiting 3.1 s", plus
                      // ", pins xmin for 45.0 s" past xminPinThreshold()
        Waiters,      // number of waiting sessions; a clock icon and a tint beside it when any
        ColumnCount
    };
    Q_ENUM(Column)

    enum Role {
        KeyRole = Qt::UserRole + 1,  // qint64; a waiter row gives its lock's key
        PidsRole,                    // QList<int>: the holders; a waiter row: {its pid}
        LockIdRole,                  // pglock::monitor::LockId (waiters: their lock's)
        IsUnknownRole,               // bool: no name for the key, neither from the catalog nor verified
                                     // from a holder (int4 pairs never have one)
        IdleInTxSecondsRole,         // double: longest a holder has been idle in transaction, else invalid
        SortRole,                    // numbers for Key / Holders / Held for / Waiters, text elsewhere
        IsOwnRole,                   // bool: held (or waited for) by one of setOwnPids()
        IsWaiterRole,                // bool: a child row
        FilterRole,                  // QString: the text LocksFilterProxy matches (name, key, application)
        NameSourceRole,              // QString: nameSourceText() of the name's source: "catalog", "holder"
                                     // (verified by its hash), "holder prefix" (a cut name: not verified), ...
        HolderNameRole,              // QByteArray: the name (or prefix) read from a holder; invalid if none
        // double: waiter rows whose backend_xmin is set, for how long they have pinned the xmin
        // horizon (see monitor::Waiter::xmin_since); else invalid
        PinsXminSecondsRole,
        // QString: what scraped applications believe about this key against what the server
        // holds (ghosts and leaks, ClaimsTracker), one line each; invalid when they agree
        ClaimsRole,
    };
    Q_ENUM(Role)

    // When the hold of `pid` on `lock` started, in server epoch seconds (monitor::HoldTracker).
    using HeldSinceProvider = std::function<std::optional<double>(const pglock::monitor::LockId& lock, int pid)>;

    explicit LocksModel(QObject* parent = nullptr);
    ~LocksModel() override;

    // Merges `snapshot` into the rows (see the file comment). A null snapshot is an empty one.
    void applySnapshot(std::shared_ptr<const pglock::monitor::Snapshot> snapshot);
    // Disconnected: forget everything. The one place that resets the model.
    void clear();
    // The server's clock now: the last poll's server_now plus the time since it reached the rows
    // (the poll's own, while stale). Every duration a row shows is counted to it.
    double now() const;
    // Time passed: dataChanged for the Held-for column only (the window calls it every second),
    // then ticked(). Nothing while stale.
    void tick();
    // A poll failed: the rows are what the last good poll saw, no longer the server's state. They
    // are drawn grey and their timers stop at that poll's time, until setStale(false).
    void setStale(bool stale);
    bool stale() const { return stale_; }

    // The app's one naming rule (lock_naming.hpp); the model hands it each lock's current holder name.
    void setNamer(LockNamer namer);
    // The catalog (or what the namer knows) changed: dataChanged for the Name column of every lock.
    void refreshNames();
    void setHeldSinceProvider(HeldSinceProvider provider);
    // The poll result whose snapshot is being merged (StagedSnapshotFeeder::feedResult()): the
    // Held-for column counts from the hold start times it carries (PollResult::held_since), so the
    // model needs no closure into its owner. A provider set above wins (tests, the merge bench).
    void setHoldStarts(PollResultPtr result);
    // The backends of this application: their locks are shown in italics.
    void setOwnPids(QSet<int> pids);
    QSet<int> ownPids() const { return ownPids_; }
    // Keys with a ghost or a leak (ClaimsTracker::marksByKey()): their Name cell gets a red
    // marker and the lines in its tooltip.
    void setClaimMarks(QHash<qint64, QString> marks);
    // Each holder's orphan evidence (pglock/orphan.hpp, from the poll result): the State cell of
    // a lock with such a holder shows a marker and the evidence in its tooltip.
    using OrphanEvidence = std::map<int, std::vector<pglock::monitor::OrphanEvidence>>;
    void setOrphanEvidence(const OrphanEvidence& evidence);
    const std::vector<pglock::monitor::OrphanEvidence>* orphanEvidence(int pid) const;
    // Holders idle in transaction longer than this are highlighted (default 30 s).
    void setIdleInTransactionThreshold(double seconds);
    double idleInTransactionThreshold() const { return idleThreshold_; }
    // Waiters whose snapshot has pinned the xmin horizon longer than this (default 10 s) say
    // "pins xmin for N s" in their Held-for cell and are highlighted: a pg_advisory_lock waiter
    // keeps VACUUM from cleaning up after anything newer than its snapshot.
    void setXminPinThreshold(double seconds);
    double xminPinThreshold() const { return xminThreshold_; }
    // The four thresholds above, as the summary strip and the poll thread's summaries take them.
    SummaryThresholds summaryThresholds() const {
        return {longWaitThreshold_, longHoldThreshold_, idleThreshold_, xminThreshold_};
    }
    // A lock held (by its oldest holder) this long has its Held-for cell highlighted; likewise a
    // waiter's cell once it has waited longWait (defaults 60 s and 5 s).
    void setLongHoldThreshold(double seconds);
    double longHoldThreshold() const { return longHoldThreshold_; }
    void setLongWaitThreshold(double seconds);
    double longWaitThreshold() const { return longWaitThreshold_; }

    std::shared_ptr<const pglock::monitor::Snapshot> snapshot() const { return snapshot_; }
    // The top-level index of a lock, invalid when it is not in the model.
    QModelIndex indexOfLock(const pglock::monitor::LockId& id, int column = 0) const;
    // The model's own bookkeeping is consistent (rows sorted and unique, id map in step, rows
    // pointing into the current snapshot). Checked with Q_ASSERT after each merge; public so that
    // tests can check it in release builds too.
    bool invariantsHold() const;
    // While the model says layoutAboutToBeChanged/layoutChanged around gathering a poll's gone
    // locks at the end (gatherGoneRows()): the new row of each old row. Empty at any other time.
    // LocksFilterProxy follows the move with it instead of starting over.
    const std::vector<int>& gatheredRows() const { return gathered_; }

    // pglock::duration_text: "250ms", "4.2s", "3m5s", "1h2m", "2d3h".
    static QString formatDuration(double seconds);

    QModelIndex index(int row, int column, const QModelIndex& parent = {}) const override;
    QModelIndex parent(const QModelIndex& child) const override;
    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;
    Qt::ItemFlags flags(const QModelIndex& index) const override;

signals:
    // tick() moved the durations on: whatever shows one of them beside the rows (the summary
    // strip) moves on with them, by now() - the poll's server_now.
    void ticked();

private:
    // A waiter row. The pointers go into the snapshot the row was last merged from.
    struct WaiterRow {
        int pid = 0;
        const pglock::monitor::Waiter* waiter = nullptr;
        const pglock::monitor::Backend* backend = nullptr;  // null when pg_stat_activity had no row
    };
    // A lock row. `serial` is its stable identity for child indexes (see index()).
    struct LockRow {
        pglock::monitor::LockId id;
        quint64 serial = 0;
        const pglock::monitor::LockEntry* entry = nullptr;
        const pglock::monitor::Snapshot* snap = nullptr;
        std::vector<WaiterRow> waiters;  // sorted by pid
        bool idleInTx = false;           // some holder is idle in transaction (cached for the merge)
    };
    const LockRow& lockAt(int row) const;
    int lockCount() const;
    int rowOfSerial(quint64 serial) const;

    LockRow makeRow(const pglock::monitor::LockEntry& entry, const pglock::monitor::Snapshot& snap);
    void fillWaiters(const LockRow& row, std::vector<WaiterRow>& out) const;
    unsigned diffLock(const LockRow& old, const pglock::monitor::LockEntry& entry,
                      const pglock::monitor::Snapshot& snap, const std::vector<int>& changedPids,
                      bool& idleInTx) const;
    void mergeWaiters(int lockRow, const std::vector<WaiterRow>& next);
    void emitRowChanges(const QModelIndex& parent, const std::vector<std::pair<int, unsigned>>& changes);
    // More runs of gone rows than this in one poll are gathered at the end first (one layout
    // change), so that they leave as one range: each range costs every listener, the proxy and
    // the view behind it, a pass over all rows (500 scattered gone locks at 50,000 locks were
    // 500 such passes, a 140 ms GUI stall per poll).
    static constexpr std::size_t kMaxRemoveRuns = 32;
    void gatherGoneRows(std::vector<const pglock::monitor::LockEntry*>& entryOfRow);

    // The cells' functions (lock_columns.cpp) read the naming rule, the hold times, the clock and
    // the own pids through this.
    friend class columns::CellContext;

    QVariant cellData(const QModelIndex& index, int role) const;  // data() before tooltips are made plain
    // The roles a whole row shares; each cell's own data is its column's (columns::ColumnSpec).
    QVariant lockData(const LockRow& row, int column, int role) const;
    QVariant waiterData(const LockRow& lock, const WaiterRow& w, int column, int role) const;
    LockName nameOf(const pglock::monitor::LockId& id, const pglock::monitor::LockEntry& entry) const;
    LockName shownName(const LockRow& row) const;
    bool isOwn(const LockRow& row) const;
    bool isOwnEntry(const pglock::monitor::LockEntry& entry) const;  // held by one of ownPids_
    double idleSeconds(const LockRow& row) const;  // < 0 when no holder is idle in transaction
    bool highlighted(const LockRow& row) const;

    std::shared_ptr<const pglock::monitor::Snapshot> snapshot_;
    // The lock rows in arrival order (see applySnapshot()). Owned through pointers so that removing
    // a run of rows moves 8 bytes per row behind it, not a whole LockRow.
    std::vector<std::unique_ptr<LockRow>> rows_;
    // Every lock's (LockId, serial), sorted by LockId: the merge's and indexOfLock()'s index.
    std::vector<std::pair<pglock::monitor::LockId, quint64>> byId_;
    // serial -> row of every lock row, for parent(): a child index carries its lock's serial.
    std::unordered_map<quint64, int> rowOfSerial_;
    quint64 nextSerial_ = 1;  // 0 is "top-level row" in internalId; serials are never reused
    // Scratch space of applySnapshot(), kept between polls so that a merge does not allocate.
    std::vector<const pglock::monitor::LockEntry*> order_;
    std::vector<WaiterRow> waiters_;
    std::vector<const pglock::monitor::LockEntry*> entryOfRow_;
    std::vector<int> gathered_;  // see gatheredRows()
    bool merging_ = false;
    bool stale_ = false;
    QElapsedTimer sinceSnapshot_;

    LockNamer namer_;
    HeldSinceProvider heldSince_;
    PollResultPtr holdStarts_;
    QSet<int> ownPids_;
    QHash<qint64, QString> claimMarks_;
    OrphanEvidence orphans_;
    double idleThreshold_ = 30.0;
    double xminThreshold_ = 10.0;
    double longHoldThreshold_ = 60.0;
    double longWaitThreshold_ = 5.0;
};

}  // namespace lockscope
