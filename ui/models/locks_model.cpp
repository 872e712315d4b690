#include "models/locks_model.hpp"
#include "models/lock_cells.hpp"
#include "models/lock_columns.hpp"
#include "models/lock_facts.hpp"
#include "models/plain_text.hpp"
#include "models/server_text.hpp"

#include "pglock/duration_text.hpp"

#include "theme/app_palette.hpp"

#include <QFont>
#include <QScopedValueRollback>

#include <algorithm>
#include <bit>
#include <string_view>
#include <utility>

namespace lockscope {

using namespace facts;
using pglock::monitor::Backend;
using pglock::monitor::LockEntry;
using pglock::monitor::LockId;
using pglock::monitor::Snapshot;
using pglock::monitor::Waiter;

namespace {

constexpr unsigned bit(int column) { return 1u << column; }
constexpr unsigned kAllColumns = (1u << LocksModel::ColumnCount) - 1;
static_assert(LocksModel::ColumnCount < 32, "column masks are 32-bit");

}  // namespace

LocksModel::LocksModel(QObject* parent) : QAbstractItemModel(parent) { sinceSnapshot_.start(); }

LocksModel::~LocksModel() = default;

// ---- row bookkeeping ------------------------------------------------------------------------

const LocksModel::LockRow& LocksModel::lockAt(int row) const { return *rows_[static_cast<std::size_t>(row)]; }

int LocksModel::lockCount() const { return static_cast<int>(rows_.size()); }

// rowOfSerial_ is exact between merges; while a merge removes runs of rows the rows behind a run
// have shifted, so a stale entry falls back to a scan (only reached from a slot that asks then).
int LocksModel::rowOfSerial(quint64 serial) const {
    const auto it = rowOfSerial_.find(serial);
    if (it == rowOfSerial_.end()) return -1;
    const int row = it->second;
    if (row < lockCount() && lockAt(row).serial == serial) return row;
    for (int r = 0; r < lockCount(); ++r)
        if (lockAt(r).serial == serial) return r;
    return -1;
}

QModelIndex LocksModel::indexOfLock(const LockId& id, int column) const {
    const auto it = std::lower_bound(byId_.begin(), byId_.end(), id,
                                     [](const std::pair<LockId, quint64>& e, const LockId& key) { return e.first < key; });
    if (it == byId_.end() || !(it->first == id)) return {};
    const int row = rowOfSerial(it->second);
    return row < 0 ? QModelIndex() : index(row, column);
}

void LocksModel::fillWaiters(const LockRow& row, std::vector<WaiterRow>& out) const {
    out.clear();
    out.reserve(row.entry->waiters.size());
    for (const Waiter& w : row.entry->waiters) out.push_back({w.pid, &w, backendOf(*row.snap, w.pid)});
    std::stable_sort(out.begin(), out.end(), [](const WaiterRow& a, const WaiterRow& b) { return a.pid < b.pid; });
    // A backend waits for one lock at a time, so a pid waits at most once per lock; be safe anyway.
    out.erase(std::unique(out.begin(), out.end(), [](const WaiterRow& a, const WaiterRow& b) { return a.pid == b.pid; }),
              out.end());
}

LocksModel::LockRow LocksModel::makeRow(const LockEntry& entry, const Snapshot& snap) {
    LockRow row;
    row.id = pglock::monitor::id_of(entry);
    row.serial = nextSerial_++;
    row.entry = &entry;
    row.snap = &snap;
    row.idleInTx = anyIdleInTx(entry, snap);
    if (!entry.waiters.empty()) fillWaiters(row, row.waiters);
    return row;
}

// ---- the merge ------------------------------------------------------------------------------

// Which cells of a lock row show something else with `entry` than with what `old` points at: the
// column table's answer (lock_columns.cpp) per column, plus the changes that touch the whole row.
unsigned LocksModel::diffLock(const LockRow& old, const LockEntry& entry, const Snapshot& snap,
                              const std::vector<int>& changed, bool& idleInTx) const {
    const LockEntry& before = *old.entry;
    const Snapshot& then = *old.snap;

    // Clean: same holders, and none of their sessions changed. Most rows of most polls are clean
    // and cost a few comparisons, without a single backend lookup.
    bool dirty = !sameHolders(before, entry);
    for (std::size_t i = 0; !dirty && i < entry.holders.size(); ++i)
        dirty = std::binary_search(changed.begin(), changed.end(), entry.holders[i].pid);
    idleInTx = dirty ? anyIdleInTx(entry, snap) : old.idleInTx;

    // Only the columns that can have changed are asked (the table says when): a clean row asks
    // the ones that show facts of the lock itself.
    static const unsigned everyPoll = columns::columnsAsked(columns::Asked::everyPoll);
    static const unsigned holdersMoved = columns::columnsAsked(columns::Asked::whenHoldersMoved);
    static const unsigned orIdle = columns::columnsAsked(columns::Asked::whenHoldersMovedOrIdle);
    const unsigned ask = everyPoll | (dirty ? holdersMoved : 0u) | (dirty || old.idleInTx ? orIdle : 0u);
    const columns::LockChange change{before, then, entry, snap};
    unsigned mask = 0;
    for (unsigned left = ask; left != 0; left &= left - 1) {
        const int c = std::countr_zero(left);
        if (columns::spec(c).lockChanged(change)) mask |= bit(c);
    }

    // Row-wide: the italics of a lock this application holds, the highlight of one held idle in
    // transaction past the threshold (time moved on the server since the last poll).
    if (dirty && isOwnEntry(before) != isOwnEntry(entry)) mask |= kAllColumns;
    if ((dirty || old.idleInTx) && (idleSecondsOf(before, then) > idleThreshold_) != (idleSecondsOf(entry, snap) > idleThreshold_))
        mask |= kAllColumns;
    return mask;
}

void LocksModel::applySnapshot(std::shared_ptr<const Snapshot> next) {
    // A slot that applies another snapshot (or clears) from inside a merge signal would pull the
    // rows from under the walk.
    Q_ASSERT(!merging_);
    if (merging_) {
        qWarning("LocksModel::applySnapshot called from inside a merge; ignored");
        return;
    }
    const QScopedValueRollback<bool> merging(merging_, true);
    if (!next) next = std::make_shared<const Snapshot>();
    // The previous snapshot stays alive until the end: unvisited rows still point into it.
    const std::shared_ptr<const Snapshot> prev = std::exchange(snapshot_, next);
    sinceSnapshot_.restart();

    // The incoming locks in LockId order, each lock once. The monitor already sorts them; checking
    // costs one pass, sorting only happens for a producer that does not.
    std::vector<const LockEntry*>& order = order_;  // a member only to keep its capacity
    order.clear();
    order.reserve(next->locks.size());
    for (const LockEntry& e : next->locks) order.push_back(&e);
    const auto byId = [](const LockEntry* a, const LockEntry* b) { return pglock::monitor::id_of(*a) < pglock::monitor::id_of(*b); };
    if (!std::is_sorted(order.begin(), order.end(), byId)) std::stable_sort(order.begin(), order.end(), byId);
    order.erase(std::unique(order.begin(), order.end(),
                            [](const LockEntry* a, const LockEntry* b) { return pglock::monitor::id_of(*a) == pglock::monitor::id_of(*b); }),
                order.end());

    static const std::map<int, Backend> kNone;
    const std::vector<int> changed = changedPids(prev ? prev->backends : kNone, next->backends);

    // Rows stay in arrival order, and a poll's changes go out as few ranges as possible (each
    // range costs every listener a pass of its own bookkeeping). Gone locks leave as
    // contiguous runs (from the back, so the runs ahead keep their numbers), the survivors are
    // updated in place, and every new lock is appended in one range at the end. Which old rows
    // match which incoming locks comes from walking byId_ (the previous locks by LockId) and
    // `order` together, so the merge stays O(n).
    const std::size_t oldCount = rows_.size();
    std::vector<const LockEntry*>& entryOfRow = entryOfRow_;  // null: the lock is gone
    entryOfRow.assign(oldCount, nullptr);
    std::vector<LockRow> added;
    std::vector<std::pair<LockId, quint64>> nextById;
    nextById.reserve(order.size());
    std::size_t i = 0, j = 0;
    while (i < byId_.size() || j < order.size()) {
        if (j == order.size() || (i < byId_.size() && byId_[i].first < pglock::monitor::id_of(*order[j]))) {
            ++i;  // gone: its row keeps a null entry
        } else if (i == byId_.size() || pglock::monitor::id_of(*order[j]) < byId_[i].first) {
            LockRow& row = added.emplace_back(makeRow(*order[j++], *next));
            nextById.emplace_back(row.id, row.serial);
        } else {
            entryOfRow[static_cast<std::size_t>(rowOfSerial_.at(byId_[i].second))] = order[j++];
            nextById.push_back(byId_[i++]);
        }
    }

    std::size_t goneRuns = 0;
    for (std::size_t r = 0; r < oldCount; ++r) goneRuns += !entryOfRow[r] && (r == 0 || entryOfRow[r - 1]) ? 1 : 0;
    if (goneRuns > kMaxRemoveRuns) gatherGoneRows(entryOfRow);
    for (std::size_t end = oldCount; end > 0;) {
        if (entryOfRow[end - 1]) {
            --end;
            continue;
        }
        std::size_t begin = end - 1;
        while (begin > 0 && !entryOfRow[begin - 1]) --begin;
        beginRemoveRows({}, static_cast<int>(begin), static_cast<int>(end) - 1);
        for (std::size_t k = begin; k < end; ++k) rowOfSerial_.erase(rows_[k]->serial);
        rows_.erase(rows_.begin() + static_cast<std::ptrdiff_t>(begin), rows_.begin() + static_cast<std::ptrdiff_t>(end));
        entryOfRow.erase(entryOfRow.begin() + static_cast<std::ptrdiff_t>(begin),
                         entryOfRow.begin() + static_cast<std::ptrdiff_t>(end));
        endRemoveRows();
        end = begin;
    }
    for (std::size_t r = 0; r < rows_.size(); ++r) rowOfSerial_[rows_[r]->serial] = static_cast<int>(r);

    // The survivors, repointed at the new snapshot, their waiters merged under them.
    std::vector<std::pair<int, unsigned>> changes;  // (row, column mask)
    for (std::size_t r = 0; r < rows_.size(); ++r) {
        LockRow& row = *rows_[r];
        const LockEntry& entry = *entryOfRow[r];
        Q_ASSERT(row.id == pglock::monitor::id_of(entry));
        bool idleInTx = false;
        const unsigned mask = diffLock(row, entry, *next, changed, idleInTx);
        row.entry = &entry;
        row.snap = next.get();
        row.idleInTx = idleInTx;
        if (!row.waiters.empty() || !entry.waiters.empty()) {
            fillWaiters(row, waiters_);
            mergeWaiters(static_cast<int>(r), waiters_);
        }
        if (mask) changes.emplace_back(static_cast<int>(r), mask);
    }
    entryOfRow.clear();
    byId_ = std::move(nextById);
    emitRowChanges({}, changes);

    if (!added.empty()) {
        const int first = lockCount();
        beginInsertRows({}, first, first + static_cast<int>(added.size()) - 1);
        for (LockRow& row : added) {
            rowOfSerial_.emplace(row.serial, lockCount());
            rows_.push_back(std::make_unique<LockRow>(std::move(row)));
        }
        endInsertRows();
    }
    order.clear();
    Q_ASSERT(invariantsHold());
}

// The same walk for one lock's waiters (sorted by pid), under the lock's (final) row.
void LocksModel::mergeWaiters(int lockRow, const std::vector<WaiterRow>& next) {
    const QModelIndex parent = index(lockRow, 0);
    std::vector<WaiterRow>& cur = rows_[static_cast<std::size_t>(lockRow)]->waiters;
    std::vector<std::pair<int, unsigned>> changes;
    std::size_t i = 0, k = 0;
    const auto curBefore = [&](std::size_t a, std::size_t b) { return b == next.size() || cur[a].pid < next[b].pid; };
    const auto nextBefore = [&](std::size_t b, std::size_t a) { return a == cur.size() || next[b].pid < cur[a].pid; };
    while (i < cur.size() || k < next.size()) {
        if (i < cur.size() && curBefore(i, k)) {
            std::size_t end = i + 1;
            while (end < cur.size() && curBefore(end, k)) ++end;
            beginRemoveRows(parent, static_cast<int>(i), static_cast<int>(end) - 1);
            cur.erase(cur.begin() + static_cast<std::ptrdiff_t>(i), cur.begin() + static_cast<std::ptrdiff_t>(end));
            endRemoveRows();
        } else if (nextBefore(k, i)) {
            std::size_t end = k + 1;
            while (end < next.size() && nextBefore(end, i)) ++end;
            beginInsertRows(parent, static_cast<int>(i), static_cast<int>(i + (end - k)) - 1);
            cur.insert(cur.begin() + static_cast<std::ptrdiff_t>(i), next.begin() + static_cast<std::ptrdiff_t>(k),
                       next.begin() + static_cast<std::ptrdiff_t>(end));
            endInsertRows();
            i += end - k;
            k = end;
        } else {
            const WaiterRow& a = cur[i];
            const WaiterRow& b = next[k];
            unsigned mask = 0;
            const auto query = [](const Backend* be) { return be ? std::string_view(be->query) : std::string_view(); };
            if (query(a.backend) != query(b.backend)) {
                mask = kAllColumns;  // the query is every cell's tooltip
            } else {
                const columns::WaiterChange change{*a.waiter, a.backend, *b.waiter, b.backend};
                for (int c = 0; c < ColumnCount; ++c)
                    if (columns::spec(c).waiterChanged(change)) mask |= bit(c);
            }
            cur[i] = b;
            if (mask) changes.emplace_back(static_cast<int>(i), mask);
            ++i;
            ++k;
        }
    }
    emitRowChanges(parent, changes);
}

// One dataChanged per run of consecutive rows with the same changed columns, per run of columns.
void LocksModel::emitRowChanges(const QModelIndex& parent, const std::vector<std::pair<int, unsigned>>& changes) {
    for (std::size_t a = 0; a < changes.size();) {
        std::size_t b = a + 1;
        while (b < changes.size() && changes[b].first == changes[b - 1].first + 1 && changes[b].second == changes[a].second) ++b;
        const unsigned mask = changes[a].second;
        for (int c = 0; c < ColumnCount;) {
            if (!(mask & bit(c))) {
                ++c;
                continue;
            }
            int e = c;
            while (e + 1 < ColumnCount && (mask & bit(e + 1))) ++e;
            emit dataChanged(index(changes[a].first, c, parent), index(changes[b - 1].first, e, parent));
            c = e + 1;
        }
        a = b;
    }
}

void LocksModel::clear() {
    Q_ASSERT(!merging_);
    if (merging_) return;
    beginResetModel();
    rows_.clear();
    byId_.clear();
    rowOfSerial_.clear();
    snapshot_.reset();
    holdStarts_.reset();
    endResetModel();
}

void LocksModel::setStale(bool stale) {
    if (stale_ == stale) return;
    stale_ = stale;
    const int n = lockCount();
    if (n == 0) return;
    // Every cell's colour, and Held-for's text (it goes back to the last poll's time).
    emit dataChanged(index(0, 0), index(n - 1, ColumnCount - 1));
    for (int r = 0; r < n; ++r) {
        const auto& w = lockAt(r).waiters;
        if (w.empty()) continue;
        const QModelIndex parent = index(r, 0);
        emit dataChanged(index(0, 0, parent), index(static_cast<int>(w.size()) - 1, ColumnCount - 1, parent));
    }
}

void LocksModel::tick() {
    if (stale_) return;
    const int n = lockCount();
    if (n == 0) {
        emit ticked();
        return;
    }
    // The highlight of a hold or wait over its threshold comes with time too.
    const QList<int> roles{Qt::DisplayRole, SortRole, Qt::BackgroundRole, Qt::ForegroundRole};
    for (int c = 0; c < ColumnCount; ++c) {
        if (!columns::spec(c).ticks) continue;
        emit dataChanged(index(0, c), index(n - 1, c), roles);
        for (int r = 0; r < n; ++r) {
            const auto& w = lockAt(r).waiters;
            if (w.empty()) continue;
            const QModelIndex parent = index(r, 0);
            emit dataChanged(index(0, c, parent), index(static_cast<int>(w.size()) - 1, c, parent), roles);
        }
    }
    emit ticked();
}

void LocksModel::setNamer(LockNamer namer) {
    namer_ = std::move(namer);
    refreshNames();
}

void LocksModel::refreshNames() {
    const int n = lockCount();
    // All roles: the name is also the tooltip, IsUnknownRole, SortRole and FilterRole.
    if (n > 0) emit dataChanged(index(0, Name), index(n - 1, Name));
}

void LocksModel::setHeldSinceProvider(HeldSinceProvider provider) {
    heldSince_ = std::move(provider);
    tick();
}

void LocksModel::setHoldStarts(PollResultPtr result) { holdStarts_ = std::move(result); }

void LocksModel::setClaimMarks(QHash<qint64, QString> marks) {
    if (marks == claimMarks_) return;
    const QHash<qint64, QString> before = std::exchange(claimMarks_, std::move(marks));
    std::vector<std::pair<int, unsigned>> changes;
    for (int r = 0; r < lockCount(); ++r) {
        const qint64 key = lockAt(r).entry->key;
        if (before.value(key) != claimMarks_.value(key)) changes.emplace_back(r, bit(Name));
    }
    emitRowChanges({}, changes);
}

void LocksModel::setOwnPids(QSet<int> pids) {
    const QSet<int> before = std::exchange(ownPids_, std::move(pids));
    const auto holdsAny = [](const LockRow& row, const QSet<int>& set) {
        return std::any_of(row.entry->holders.begin(), row.entry->holders.end(), [&](const auto& h) { return set.contains(h.pid); });
    };
    std::vector<std::pair<int, unsigned>> changes;
    for (int r = 0; r < lockCount(); ++r) {
        const LockRow& row = lockAt(r);
        if (holdsAny(row, before) != holdsAny(row, ownPids_))
            changes.emplace_back(r, kAllColumns);  // the italics of the whole row
        else if (std::any_of(row.entry->holders.begin(), row.entry->holders.end(),
                             [&](const auto& h) { return before.contains(h.pid) != ownPids_.contains(h.pid); }))
            changes.emplace_back(r, bit(Holders));  // "(this app)" moved to another holder
        std::vector<std::pair<int, unsigned>> kids;
        for (std::size_t i = 0; i < row.waiters.size(); ++i)
            if (before.contains(row.waiters[i].pid) != ownPids_.contains(row.waiters[i].pid)) kids.emplace_back(static_cast<int>(i), kAllColumns);
        if (!kids.empty()) emitRowChanges(index(r, 0), kids);
    }
    emitRowChanges({}, changes);
}

void LocksModel::setOrphanEvidence(const OrphanEvidence& evidence) {
    const auto same = [](const std::vector<pglock::monitor::OrphanEvidence>& a, const std::vector<pglock::monitor::OrphanEvidence>& b) {
        return std::equal(a.begin(), a.end(), b.begin(), b.end(),
                          [](const auto& x, const auto& y) { return x.sign == y.sign && x.text == y.text; });
    };
    // Usually nothing changed: one comparison of two small maps, no row visited.
    if (evidence.size() == orphans_.size() &&
        std::equal(evidence.begin(), evidence.end(), orphans_.begin(),
                   [&](const auto& a, const auto& b) { return a.first == b.first && same(a.second, b.second); }))
        return;
    const OrphanEvidence before = std::exchange(orphans_, evidence);
    const auto changedFor = [&](int pid) {
        const auto a = before.find(pid);
        const auto b = orphans_.find(pid);
        if ((a == before.end()) != (b == orphans_.end())) return true;
        return a != before.end() && !same(a->second, b->second);
    };
    std::vector<std::pair<int, unsigned>> changes;
    for (int r = 0; r < lockCount(); ++r) {
        const LockRow& row = lockAt(r);
        if (std::any_of(row.entry->holders.begin(), row.entry->holders.end(), [&](const auto& h) { return changedFor(h.pid); }))
            changes.emplace_back(r, bit(State));
    }
    emitRowChanges({}, changes);
}

const std::vector<pglock::monitor::OrphanEvidence>* LocksModel::orphanEvidence(int pid) const {
    const auto it = orphans_.find(pid);
    return it == orphans_.end() ? nullptr : &it->second;
}

void LocksModel::setLongHoldThreshold(double seconds) {
    longHoldThreshold_ = seconds;
    if (lockCount() > 0) emit dataChanged(index(0, HeldFor), index(lockCount() - 1, HeldFor), {Qt::BackgroundRole, Qt::ForegroundRole});
}

void LocksModel::setLongWaitThreshold(double seconds) {
    longWaitThreshold_ = seconds;
    setXminPinThreshold(xminThreshold_);  // the same cells: every waiter's Held for
}

void LocksModel::setXminPinThreshold(double seconds) {
    xminThreshold_ = seconds;
    for (int r = 0; r < lockCount(); ++r) {
        const auto n = static_cast<int>(lockAt(r).waiters.size());
        if (n == 0) continue;
        const QModelIndex parent = index(r, 0);
        emit dataChanged(index(0, HeldFor, parent), index(n - 1, HeldFor, parent));
    }
}

void LocksModel::setIdleInTransactionThreshold(double seconds) {
    const double before = std::exchange(idleThreshold_, seconds);
    std::vector<std::pair<int, unsigned>> changes;
    for (int r = 0; r < lockCount(); ++r) {
        const LockRow& row = lockAt(r);
        if (!row.idleInTx) continue;
        const double idle = idleSeconds(row);
        if ((idle > before) != (idle > idleThreshold_)) changes.emplace_back(r, kAllColumns);
    }
    emitRowChanges({}, changes);
}

bool LocksModel::invariantsHold() const {
    if (rowOfSerial_.size() != rows_.size() || byId_.size() != rows_.size()) return false;
    for (std::size_t i = 0; i < byId_.size(); ++i) {
        if (i > 0 && !(byId_[i - 1].first < byId_[i].first)) return false;  // strictly sorted: unique and ordered
        const auto it = rowOfSerial_.find(byId_[i].second);
        if (it == rowOfSerial_.end() || !(rows_[static_cast<std::size_t>(it->second)]->id == byId_[i].first)) return false;
    }
    for (std::size_t i = 0; i < rows_.size(); ++i) {
        const LockRow& row = *rows_[i];
        const auto it = rowOfSerial_.find(row.serial);
        if (it == rowOfSerial_.end() || it->second != static_cast<int>(i)) return false;
        if (row.serial == 0 || row.serial >= nextSerial_) return false;
        if (!snapshot_ || row.snap != snapshot_.get()) return false;
        const auto& locks = snapshot_->locks;
        if (locks.empty() || row.entry < locks.data() || row.entry >= locks.data() + locks.size()) return false;
        if (!(pglock::monitor::id_of(*row.entry) == row.id)) return false;
        if (row.idleInTx != anyIdleInTx(*row.entry, *row.snap)) return false;
        const auto& ws = row.entry->waiters;
        if (row.waiters.size() > ws.size()) return false;
        for (std::size_t k = 0; k < row.waiters.size(); ++k) {
            const WaiterRow& w = row.waiters[k];
            if (k > 0 && !(row.waiters[k - 1].pid < w.pid)) return false;
            if (w.waiter < ws.data() || w.waiter >= ws.data() + ws.size() || w.waiter->pid != w.pid) return false;
            if (w.backend != backendOf(*row.snap, w.pid)) return false;
        }
    }
    return true;
}

// ---- item model -----------------------------------------------------------------------------
//
// internalId: 0 for a lock (top-level) row; for a waiter row, the serial of its lock. A serial is
// handed out when a lock first appears and never reused, and rowOfSerial_ maps it to the lock's
// row. Not a row number, not a pointer: rows shift when locks come
// and go, and rows_ reallocates, but a waiter's index (and a QPersistentModelIndex on it, whose
// row Qt updates) keeps naming the same lock. An index of a lock that is gone has parent()
// invalid and data() empty rather than pointing at another lock.

QModelIndex LocksModel::index(int row, int column, const QModelIndex& parent) const {
    if (row < 0 || column < 0 || column >= ColumnCount) return {};
    if (!parent.isValid()) return row < lockCount() ? createIndex(row, column, quintptr(0)) : QModelIndex();
    if (parent.internalId() != 0 || parent.column() != 0 || parent.row() >= lockCount()) return {};
    const LockRow& lock = lockAt(parent.row());
    if (static_cast<std::size_t>(row) >= lock.waiters.size()) return {};
    return createIndex(row, column, static_cast<quintptr>(lock.serial));
}

QModelIndex LocksModel::parent(const QModelIndex& child) const {
    if (!child.isValid() || child.internalId() == 0) return {};
    const int row = rowOfSerial(child.internalId());
    return row < 0 ? QModelIndex() : createIndex(row, 0, quintptr(0));
}

int LocksModel::rowCount(const QModelIndex& parent) const {
    if (!parent.isValid()) return lockCount();
    if (parent.internalId() != 0 || parent.column() != 0 || parent.row() >= lockCount()) return 0;
    return static_cast<int>(lockAt(parent.row()).waiters.size());
}

int LocksModel::columnCount(const QModelIndex&) const { return ColumnCount; }

Qt::ItemFlags LocksModel::flags(const QModelIndex& index) const {
    if (!index.isValid()) return Qt::NoItemFlags;
    Qt::ItemFlags f = Qt::ItemIsSelectable | Qt::ItemIsEnabled;
    if (index.internalId() != 0) f |= Qt::ItemNeverHasChildren;
    return f;
}

QVariant LocksModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation != Qt::Horizontal || section < 0 || section >= ColumnCount) return {};
    const columns::ColumnSpec& column = columns::spec(section);
    switch (role) {
    case Qt::DisplayRole: return tr(column.header);
    case Qt::ToolTipRole: return column.headerTip ? QVariant(tr(column.headerTip)) : QVariant();
    case Qt::TextAlignmentRole: return column.alignRight ? QVariant(int(Qt::AlignRight | Qt::AlignVCenter)) : QVariant();
    default: return {};
    }
}

QVariant LocksModel::data(const QModelIndex& index, int role) const {
    // Tooltips show application names, query text and names: never as HTML (plain_text.hpp).
    if (role == Qt::ToolTipRole) return plainToolTip(cellData(index, role));
    return cellData(index, role);
}

QVariant LocksModel::cellData(const QModelIndex& index, int role) const {
    if (!index.isValid() || index.model() != this || index.column() >= ColumnCount) return {};
    if (index.internalId() == 0) {
        if (index.row() >= lockCount()) return {};
        return lockData(lockAt(index.row()), index.column(), role);
    }
    const int lockRow = rowOfSerial(index.internalId());
    if (lockRow < 0) return {};
    const LockRow& lock = lockAt(lockRow);
    if (static_cast<std::size_t>(index.row()) >= lock.waiters.size()) return {};
    return waiterData(lock, lock.waiters[static_cast<std::size_t>(index.row())], index.column(), role);
}

// ---- cell contents --------------------------------------------------------------------------

double LocksModel::now() const {
    // The server's clock at the last poll, moved on by the time elapsed here since: hold starts
    // and wait starts are server times, and the local clock may be off. Stale rows stay at the
    // time of the poll that saw them: nobody knows what happened since.
    if (!snapshot_) return 0.0;
    return stale_ ? snapshot_->server_now : snapshot_->server_now + static_cast<double>(sinceSnapshot_.elapsed()) / 1000.0;
}

LockName LocksModel::nameOf(const LockId& id, const LockEntry& entry) const {
    if (namer_) return namer_(id, entry.key, entry.holder_name);
    // No namer (a bare model): the rule with no catalog, so still the one rule.
    NameFacts facts;
    facts.holder = entry.holder_name;
    return decideLockName(id, entry.key, facts);
}

LockName LocksModel::shownName(const LockRow& row) const { return nameOf(row.id, *row.entry); }

bool LocksModel::isOwn(const LockRow& row) const { return isOwnEntry(*row.entry); }

bool LocksModel::isOwnEntry(const LockEntry& entry) const {
    return std::any_of(entry.holders.begin(), entry.holders.end(), [this](const auto& h) { return ownPids_.contains(h.pid); });
}

double LocksModel::idleSeconds(const LockRow& row) const { return idleSecondsOf(*row.entry, *row.snap); }

bool LocksModel::highlighted(const LockRow& row) const { return row.idleInTx && idleSeconds(row) > idleThreshold_; }

QString LocksModel::formatDuration(double seconds) { return QString::fromStdString(pglock::duration_text(seconds)); }

namespace {

// A cell's italics: a lock or wait of this application.
QVariant italicIf(bool own) {
    if (!own) return {};
    QFont font;
    font.setItalic(true);
    return font;
}

// What a view sorts a cell by: the column's sort value, or else its text.
template <typename Row>
QVariant sortValue(QVariant (*cell)(const Row&, int, const columns::CellContext&), const Row& row, const columns::CellContext& ctx) {
    QVariant v = cell(row, LocksModel::SortRole, ctx);
    return v.isValid() ? v : cell(row, Qt::DisplayRole, ctx);
}

}  // namespace

// The roles that are the same in every cell of a lock row, and the row-wide parts of the colours;
// a cell's own data is its column's (lock_columns.cpp).
QVariant LocksModel::lockData(const LockRow& row, int column, int role) const {
    const LockEntry& e = *row.entry;
    const columns::ColumnSpec& spec = columns::spec(column);
    const columns::LockRowView view{row.id, e, *row.snap};
    const columns::CellContext ctx(*this);
    // A ghost or a leak on this key (bigint keys only: claims name no int4 pair): a red marker
    // on the name, and what disagrees in its tooltip.
    const auto mark = column == Name && !view.pair() ? claimMarks_.constFind(static_cast<qint64>(e.key)) : claimMarks_.cend();
    switch (role) {
    case Qt::DisplayRole: return spec.lockCell(view, role, ctx);
    case Qt::ToolTipRole:
        if (mark != claimMarks_.cend()) return spec.lockCell(view, role, ctx).toString() + QStringLiteral("\n\n") + *mark;
        return spec.lockCell(view, role, ctx);
    case Qt::DecorationRole:
        if (mark != claimMarks_.cend()) return theme::errorText();
        return spec.lockCell(view, role, ctx);
    case ClaimsRole: {
        const auto it = view.pair() ? claimMarks_.cend() : claimMarks_.constFind(static_cast<qint64>(e.key));
        return it != claimMarks_.cend() ? QVariant(*it) : QVariant();
    }
    case SortRole: return sortValue(spec.lockCell, view, ctx);
    case Qt::BackgroundRole:
    case Qt::ForegroundRole:
        // Stale: grey text on the plain background. A highlight says "look at this now", which
        // an old poll cannot back up, and grey does not read on a tint.
        if (stale_) return role == Qt::ForegroundRole ? QVariant(theme::staleText()) : QVariant();
        // Idle in transaction: the whole row; else the column's own tint (waiters, a long hold).
        if (highlighted(row)) return role == Qt::BackgroundRole ? theme::background(theme::Tint::attention) : theme::foreground(theme::Tint::attention);
        return spec.lockCell(view, role, ctx);
    case Qt::FontRole: return italicIf(isOwn(row));
    case Qt::TextAlignmentRole:
        if (spec.alignRight) return int(Qt::AlignRight | Qt::AlignVCenter);
        return {};
    case KeyRole: return QVariant::fromValue(static_cast<qint64>(e.key));
    case PidsRole: {
        QList<int> pids;
        pids.reserve(static_cast<qsizetype>(e.holders.size()));
        for (const auto& h : e.holders) pids << h.pid;
        return QVariant::fromValue(pids);
    }
    case LockIdRole: return QVariant::fromValue(row.id);
    case IsUnknownRole: return !shownName(row).known();
    case HolderNameRole: {
        if (view.pair()) return {};
        // The name the row shows when a holder gave it (now or earlier), else the current holder's.
        if (const LockName name = shownName(row);
            name.name && (name.source == LockNameSource::holder || name.source == LockNameSource::holderPrefix))
            return *name.name;
        if (!e.holder_name) return {};
        return QByteArray::fromStdString(e.holder_name->name);
    }
    case NameSourceRole: return nameSourceText(shownName(row).source);
    case IdleInTxSecondsRole: {
        const double idle = idleSeconds(row);
        return idle >= 0 ? QVariant(idle) : QVariant();
    }
    case IsOwnRole: return isOwn(row);
    case IsWaiterRole: return false;
    case FilterRole: {
        std::vector<std::string_view> apps;
        distinctValues(e, *row.snap, Field::application, apps);
        const QString name = view.pair() ? columns::int4PairText(e) : shownName(row).text;
        return name + QLatin1Char('\n') + QString::number(e.key) + QLatin1Char('\n') + columns::joinedText(apps);
    }
    default: return {};
    }
}

// The same for a waiter row.
QVariant LocksModel::waiterData(const LockRow& lock, const WaiterRow& w, int column, int role) const {
    const Backend* b = w.backend;
    const columns::ColumnSpec& spec = columns::spec(column);
    const columns::LockRowView lockView{lock.id, *lock.entry, *lock.snap};
    const columns::WaiterRowView view{lockView, w.pid, *w.waiter, b};
    const columns::CellContext ctx(*this);
    switch (role) {
    case Qt::DisplayRole:
    case Qt::DecorationRole: return spec.waiterCell(view, role, ctx);
    case Qt::ToolTipRole: {
        // The waiter's query, in every cell that has nothing else to say.
        if (QVariant tip = spec.waiterCell(view, role, ctx); tip.isValid()) return tip;
        return b && !b->query.empty() ? QVariant(columns::elidedQuery(b->query)) : QVariant();
    }
    case SortRole: return sortValue(spec.waiterCell, view, ctx);
    case Qt::BackgroundRole:
    case Qt::ForegroundRole:
        if (stale_) return role == Qt::ForegroundRole ? QVariant(theme::staleText()) : QVariant();  // as lockData()
        return spec.waiterCell(view, role, ctx);
    case PinsXminSecondsRole: {
        const auto since = pglock::monitor::xmin_pinned_seconds(*w.waiter, lock.snap->server_now);
        if (!since) return {};
        // Moved on by the time since the poll, like the wait itself.
        return *since + std::max(0.0, now() - lock.snap->server_now);
    }
    case Qt::FontRole: return italicIf(ownPids_.contains(w.pid));
    case Qt::TextAlignmentRole:
        if (spec.alignRight) return int(Qt::AlignRight | Qt::AlignVCenter);
        return {};
    case KeyRole: return QVariant::fromValue(static_cast<qint64>(lock.entry->key));
    case PidsRole: return QVariant::fromValue(QList<int>{w.pid});
    case LockIdRole: return QVariant::fromValue(lock.id);
    case IsUnknownRole: return !shownName(lock).known();
    case IdleInTxSecondsRole: return {};
    case IsOwnRole: return ownPids_.contains(w.pid);
    case IsWaiterRole: return true;
    case FilterRole: return b ? serverText(b->application_name) : QString();
    default: return {};
    }
}

}  // namespace lockscope
