#include "models/locks_filter_proxy.hpp"

#include "models/locks_model.hpp"

#include <algorithm>
#include <functional>

namespace lockscope {

struct LocksFilterProxy::RowsBeingRemoved {
    int first, last;
    bool has(int r) const { return r >= first && r <= last; }
};

namespace {

// A dataChanged over more source rows than this (tick(), refreshNames()) goes out as one range
// over the proxy rows it touches instead of one signal per row; more sort keys changed at once
// than this are checked together instead of placed one by one.
constexpr int kWideChange = 64;

bool affects(const QList<int>& roles, int role) { return roles.isEmpty() || roles.contains(role); }

}  // namespace

LocksFilterProxy::LocksFilterProxy(QObject* parent) : QAbstractProxyModel(parent) {}

const std::vector<int>* LocksFilterProxy::gatheredRows() const {
    const auto* locks = qobject_cast<const LocksModel*>(sourceModel());
    return locks && !locks->gatheredRows().empty() ? &locks->gatheredRows() : nullptr;
}

LocksFilterProxy::~LocksFilterProxy() = default;

// ---- keys and the filter ---------------------------------------------------------------------

// <0, 0, >0. No value sorts after every value, as in QSortFilterProxyModel::lessThan.
int LocksFilterProxy::compare(const SortKey& a, const SortKey& b) {
    if (a.kind == SortKey::None || b.kind == SortKey::None) return int(a.kind == SortKey::None) - int(b.kind == SortKey::None);
    if (a.kind == SortKey::Text || b.kind == SortKey::Text) {
        if (a.kind != b.kind) return a.kind == SortKey::Text ? 1 : -1;
        return a.text.compare(b.text);
    }
    if (a.kind == SortKey::Int && b.kind == SortKey::Int) return a.i < b.i ? -1 : (b.i < a.i ? 1 : 0);
    const double x = a.kind == SortKey::Int ? double(a.i) : a.d;
    const double y = b.kind == SortKey::Int ? double(b.i) : b.d;
    return x < y ? -1 : (y < x ? 1 : 0);
}

LocksFilterProxy::SortKey LocksFilterProxy::keyOf(const QModelIndex& source) const {
    SortKey k;
    if (sortColumn_ < 0) return k;
    const QVariant v = sourceModel()->index(source.row(), sortColumn_, source.parent()).data(LocksModel::SortRole);
    switch (v.typeId()) {
    case QMetaType::UnknownType: break;
    case QMetaType::Int:
    case QMetaType::LongLong:
    case QMetaType::Short:
    case QMetaType::Long:
    case QMetaType::UInt:
    case QMetaType::Bool:
        k.kind = SortKey::Int;
        k.i = v.toLongLong();
        break;
    case QMetaType::Double:
    case QMetaType::Float:
        k.kind = SortKey::Real;
        k.d = v.toDouble();
        break;
    default:
        k.kind = SortKey::Text;
        k.text = v.toString().toCaseFolded();
    }
    return k;
}

// Ties in arrival order (node ids are handed out as rows arrive; LocksModel appends new locks,
// so this is its row order too) in both directions.
bool LocksFilterProxy::sortsBefore(const Node* a, const Node* b) const {
    if (sortColumn_ >= 0) {
        const int c = compare(a->key, b->key);
        if (c != 0) return sortOrder_ == Qt::AscendingOrder ? c < 0 : c > 0;
    }
    return a->id < b->id;
}

// The proxy row of a shown node, for a waiter index's parent: its last known row if still right,
// else a binary search (order_ is sorted by sortsBefore()), else a scan (only mid-move). -1: hidden.
int LocksFilterProxy::rowOfNode(const Node* n) const {
    const auto at = [this](std::size_t p) { return &node(order_[p]); };
    if (n->hint >= 0 && std::size_t(n->hint) < order_.size() && at(std::size_t(n->hint)) == n) return n->hint;
    std::size_t lo = 0, hi = order_.size();
    while (lo < hi) {
        const std::size_t mid = (lo + hi) / 2;
        if (sortsBefore(at(mid), n)) lo = mid + 1;
        else hi = mid;
    }
    if (lo < order_.size() && at(lo) == n) return n->hint = int(lo);
    for (std::size_t p = 0; p < order_.size(); ++p)
        if (at(p) == n) return n->hint = int(p);
    return -1;
}

bool LocksFilterProxy::matches(const QModelIndex& source) const {
    if (text_.isEmpty()) return true;
    if (source.data(LocksModel::FilterRole).toString().contains(text_, Qt::CaseInsensitive)) return true;
    return pid_ && source.data(LocksModel::PidsRole).value<QList<int>>().contains(*pid_);
}

// Shown: no filter, the lock matches, or one of its waiters does.
bool LocksFilterProxy::shouldShow(int src, const RowsBeingRemoved* removing) const {
    if (text_.isEmpty() || node(src).lockMatches) return true;
    const QModelIndex parent = sourceModel()->index(src, 0);
    const int count = sourceModel()->rowCount(parent);
    for (int r = 0; r < count; ++r)
        if (!(removing && removing->has(r)) && matches(sourceModel()->index(r, 0, parent))) return true;
    return false;
}

// A shown lock's waiters: all of them when the lock matches, else the matching ones; sorted.
std::vector<int> LocksFilterProxy::waitersToShow(int src, const RowsBeingRemoved* removing) const {
    const bool all = text_.isEmpty() || node(src).lockMatches;
    const QModelIndex parent = sourceModel()->index(src, 0);
    const int count = sourceModel()->rowCount(parent);
    std::vector<std::pair<SortKey, int>> waiters;
    for (int r = 0; r < count; ++r) {
        if (removing && removing->has(r)) continue;
        const QModelIndex kid = sourceModel()->index(r, 0, parent);
        if (all || matches(kid)) waiters.emplace_back(keyOf(kid), r);
    }
    if (sortColumn_ >= 0 && waiters.size() > 1) {
        std::stable_sort(waiters.begin(), waiters.end(), [this](const auto& a, const auto& b) {
            const int c = compare(a.first, b.first);
            return sortOrder_ == Qt::AscendingOrder ? c < 0 : c > 0;
        });
    }
    std::vector<int> out;
    out.reserve(waiters.size());
    for (const auto& k : waiters) out.push_back(k.second);
    return out;
}

// ---- the shown rows ----------------------------------------------------------------------------

// Inserts hidden rows at their sorted places: one range per gap between shown rows they land in.
void LocksFilterProxy::insertShown(std::vector<int> rows) {
    if (rows.empty()) return;
    for (int r : rows) node(r).key = keyOf(sourceModel()->index(r, 0));
    const auto less = displayOrder();
    std::sort(rows.begin(), rows.end(), less);
    // Rows that land in many places (a staged first poll: 2,000 new locks among those shown) would
    // be as many insert ranges, each one O(rows) here and in a QTreeView: append them in one range
    // and put them in place with one layout change instead.
    std::size_t runs = 0;
    for (std::size_t k = 0; k < rows.size() && runs <= kMaxInsertRuns; ++runs) {
        const auto pos = std::lower_bound(order_.begin(), order_.end(), rows[k], less);
        ++k;
        while (k < rows.size() && (pos == order_.end() || less(rows[k], *pos))) ++k;
    }
    if (runs > kMaxInsertRuns) {
        const auto at = shownCount();
        beginInsertRows({}, at, at + int(rows.size()) - 1);
        for (int r : rows) {
            node(r).waiters = waitersToShow(r);
            proxyRowOf(r) = shownCount();
            order_.push_back(r);
        }
        endInsertRows();
        // The rows before them are in order and so are they: a merge, not a sort of all.
        const auto before = order_.end() - std::ptrdiff_t(rows.size());
        relayout([&] { std::inplace_merge(order_.begin(), before, order_.end(), less); });
        return;
    }
    std::size_t k = 0;
    while (k < rows.size()) {
        const auto pos = std::size_t(std::lower_bound(order_.begin(), order_.end(), rows[k], less) - order_.begin());
        std::size_t end = k + 1;
        while (end < rows.size() && (pos == order_.size() || less(rows[end], order_[pos]))) ++end;
        const auto count = int(end - k);
        for (std::size_t i = k; i < end; ++i) node(rows[i]).waiters = waitersToShow(rows[i]);
        beginInsertRows({}, int(pos), int(pos) + count - 1);
        for (int& p : proxyOf_)
            if (p >= int(pos)) p += count;
        order_.insert(order_.begin() + std::ptrdiff_t(pos), rows.begin() + std::ptrdiff_t(k),
                      rows.begin() + std::ptrdiff_t(end));
        for (std::size_t i = k; i < end; ++i) proxyRowOf(rows[i]) = int(pos + (i - k));
        endInsertRows();
        k = end;
    }
}

// Removes shown rows: one range per run of adjacent proxy rows, from the back. Rows scattered
// over many runs are gathered at the end first (one layout change) and leave as one range: each
// range costs the view a pass over all its rows.
void LocksFilterProxy::removeShown(std::vector<int> rows) {
    if (rows.empty()) return;
    std::vector<int> at;
    at.reserve(rows.size());
    for (int r : rows) at.push_back(proxyRowOf(r));
    std::sort(at.begin(), at.end(), std::greater<>());
    std::size_t runs = 1;
    for (std::size_t k = 1; k < at.size(); ++k) runs += at[k] == at[k - 1] - 1 ? 0 : 1;
    if (runs > kMaxInsertRuns) {
        std::vector<char> going(order_.size(), 0);
        for (int p : at) going[std::size_t(p)] = 1;
        relayout([&] {
            std::stable_partition(order_.begin(), order_.end(), [&](int src) { return !going[std::size_t(proxyRowOf(src))]; });
        });
        const int count = int(at.size());
        for (int k = 0; k < count; ++k) at[std::size_t(k)] = shownCount() - 1 - k;
    }
    std::size_t k = 0;
    while (k < at.size()) {
        std::size_t end = k + 1;
        while (end < at.size() && at[end] == at[end - 1] - 1) ++end;
        const int first = at[end - 1], last = at[k], count = last - first + 1;
        beginRemoveRows({}, first, last);
        for (int p = first; p <= last; ++p) {
            const auto src = std::size_t(sourceRowAt(p));
            proxyOf_[src] = -1;
            nodes_[src]->waiters.clear();
        }
        order_.erase(order_.begin() + first, order_.begin() + last + 1);
        for (int& p : proxyOf_)
            if (p > last) p -= count;
        endRemoveRows();
        k = end;
    }
}

// A shown row whose key changed (every other row is in place): move it where it belongs. A move,
// not remove + insert, so that its selection, expansion and persistent indexes stay.
void LocksFilterProxy::moveToSortedPlace(int src) {
    const auto less = displayOrder();
    const int row = proxyRowOf(src);
    const auto self = order_.begin() + row;
    auto renumberFrom = self, renumberTo = self + 1;  // the rows that get new numbers
    if (self != order_.begin() && less(src, self[-1])) {
        const auto target = std::lower_bound(order_.begin(), self, src, less);
        beginMoveRows({}, row, row, {}, int(target - order_.begin()));
        std::rotate(target, self, self + 1);
        renumberFrom = target;
    } else if (self + 1 != order_.end() && less(self[1], src)) {
        const auto target = std::lower_bound(self + 1, order_.end(), src, less);
        beginMoveRows({}, row, row, {}, int(target - order_.begin()));
        std::rotate(self, self + 1, target);
        renumberTo = target;
    } else {
        return;
    }
    for (auto it = renumberFrom; it != renumberTo; ++it) proxyRowOf(*it) = int(it - order_.begin());
    endMoveRows();
}

// Brings a shown row's waiter rows to waitersToShow(): removals, then a re-sort of the survivors if
// their order changed (a layout change of this parent only), then insertions.
void LocksFilterProxy::syncWaiters(int src, const RowsBeingRemoved* removing) {
    Node* n = &node(src);
    const std::vector<int> want = waitersToShow(src, removing);
    if (want == n->waiters) return;
    const QModelIndex parent = createIndex(proxyRowOf(src), 0, quintptr(0));
    for (std::size_t i = n->waiters.size(); i-- > 0;) {
        if (std::find(want.begin(), want.end(), n->waiters[i]) != want.end()) continue;
        beginRemoveRows(parent, int(i), int(i));
        n->waiters.erase(n->waiters.begin() + std::ptrdiff_t(i));
        endRemoveRows();
    }
    std::vector<int> survivors;
    for (int r : want)
        if (std::find(n->waiters.begin(), n->waiters.end(), r) != n->waiters.end()) survivors.push_back(r);
    if (survivors != n->waiters) {
        const QList<QPersistentModelIndex> parents{QPersistentModelIndex(parent)};
        emit layoutAboutToBeChanged(parents, QAbstractItemModel::VerticalSortHint);
        QModelIndexList from, to;
        for (const QModelIndex& idx : persistentIndexList()) {
            if (idx.internalId() != n->id) continue;
            const int r = n->waiters[std::size_t(idx.row())];
            const auto at = std::find(survivors.begin(), survivors.end(), r) - survivors.begin();
            from << idx;
            to << createIndex(int(at), idx.column(), quintptr(n->id));
        }
        n->waiters = survivors;
        changePersistentIndexList(from, to);
        emit layoutChanged(parents, QAbstractItemModel::VerticalSortHint);
    }
    for (std::size_t j = 0; j < want.size(); ++j) {
        if (j < n->waiters.size() && n->waiters[j] == want[j]) continue;
        beginInsertRows(parent, int(j), int(j));
        n->waiters.insert(n->waiters.begin() + std::ptrdiff_t(j), want[j]);
        endInsertRows();
    }
}

// After a change under a lock: its own match read again (the lock's row may have been merged
// before its dataChanged arrives), then shown, hidden or its waiters brought up to date.
void LocksFilterProxy::refreshLock(int src) {
    Node* n = &node(src);
    if (!text_.isEmpty()) n->lockMatches = matches(sourceModel()->index(src, 0));
    const bool want = shouldShow(src);
    const bool shown = proxyRowOf(src) >= 0;
    if (shown && !want)
        removeShown({src});
    else if (!shown && want)
        insertShown({src});
    else if (shown)
        syncWaiters(src);
}

void LocksFilterProxy::rebuild() {
    nodes_.clear();
    proxyOf_.clear();
    order_.clear();
    byId_.clear();
    if (!sourceModel()) return;
    const int count = sourceModel()->rowCount();
    nodes_.reserve(std::size_t(count));
    proxyOf_.assign(std::size_t(count), -1);
    for (int r = 0; r < count; ++r) {
        auto n = std::make_unique<Node>();
        n->id = nextId_++;
        n->lockMatches = matches(sourceModel()->index(r, 0));
        byId_.emplace(n->id, n.get());
        nodes_.push_back(std::move(n));
    }
    for (int r = 0; r < count; ++r) {
        if (!shouldShow(r)) continue;
        Node* n = &node(r);
        n->key = keyOf(sourceModel()->index(r, 0));
        n->waiters = waitersToShow(r);
        order_.push_back(r);
    }
    std::sort(order_.begin(), order_.end(),
              displayOrder());
    for (std::size_t p = 0; p < order_.size(); ++p) proxyRowOf(order_[p]) = int(p);
}

void LocksFilterProxy::refilter() {
    std::vector<int> gone, come, stay;
    for (int r = 0; r < int(nodes_.size()); ++r) {
        node(r).lockMatches = matches(sourceModel()->index(r, 0));
        const bool want = shouldShow(r);
        const bool shown = proxyRowOf(r) >= 0;
        if (shown && !want) gone.push_back(r);
        else if (!shown && want) come.push_back(r);
        else if (shown) stay.push_back(r);
    }
    removeShown(std::move(gone));
    for (int r : stay) syncWaiters(r);
    insertShown(std::move(come));
}

// ---- the operator's requests -----------------------------------------------------------------

void LocksFilterProxy::setFilterText(const QString& text) {
    const QString trimmed = text.trimmed();
    if (trimmed == text_) return;
    text_ = trimmed;
    bool ok = false;
    const int pid = text_.toInt(&ok);
    pid_ = ok && pid > 0 ? std::optional<int>(pid) : std::nullopt;
    if (sourceModel()) refilter();
}

// One layout change: every shown lock's key is read again (the one full pass a click costs).
void LocksFilterProxy::sort(int column, Qt::SortOrder order) {
    sortColumn_ = column;
    sortOrder_ = order;
    if (sourceModel())
        for (int src : order_) node(src).key = keyOf(sourceModel()->index(src, 0));
    resort();
}

// Puts every shown row (and its waiters) in order under the keys they have, as one layout change
// that carries the persistent indexes (selection, current, expansion) along.
void LocksFilterProxy::resort() {
    relayout([this] {
        for (int src : order_) {
            Node* n = &node(src);
            if (n->waiters.size() > 1) n->waiters = waitersToShow(src);
        }
        std::sort(order_.begin(), order_.end(), displayOrder());
    });
}

// One layout change around `reorder`, which rearranges order_ (and may reorder waiters): proxy
// rows are renumbered after it and the persistent indexes follow their rows.
void LocksFilterProxy::relayout(const std::function<void()>& reorder) {
    emit layoutAboutToBeChanged({}, QAbstractItemModel::VerticalSortHint);
    const QModelIndexList from = persistentIndexList();
    struct Was {
        int src;  // the lock's source row
        int kid;  // source child row, or -1 for a lock row
    };
    std::vector<Was> was;
    was.reserve(std::size_t(from.size()));
    for (const QModelIndex& idx : from) {
        if (idx.internalId() == 0) {
            was.push_back({sourceRowAt(idx.row()), -1});
        } else {
            const Node* n = byId_.at(idx.internalId());
            const int src = sourceRowAt(rowOfNode(n));
            was.push_back({src, n->waiters[std::size_t(idx.row())]});
        }
    }
    if (sourceModel()) {
        reorder();
        for (std::size_t p = 0; p < order_.size(); ++p) proxyRowOf(order_[p]) = int(p);
    }
    QModelIndexList to;
    to.reserve(from.size());
    for (qsizetype i = 0; i < from.size(); ++i) {
        const Was& w = was[std::size_t(i)];
        if (w.kid < 0) {
            to << createIndex(proxyRowOf(w.src), from[i].column(), quintptr(0));
        } else {
            const Node* n = &node(w.src);
            const auto at = std::find(n->waiters.begin(), n->waiters.end(), w.kid) - n->waiters.begin();
            to << createIndex(int(at), from[i].column(), quintptr(n->id));
        }
    }
    changePersistentIndexList(from, to);
    emit layoutChanged({}, QAbstractItemModel::VerticalSortHint);
}

// LocksModel moved its rows (gatherGoneRows()): the same nodes at their new source rows. The
// proxy's rows, their order (arrival order is the node ids, which move along) and its indexes
// (a waiter index carries its node's id) stay as they are, so the view hears nothing.
void LocksFilterProxy::followGatheredRows(const std::vector<int>& newRowOf) {
    std::vector<std::unique_ptr<Node>> nodes(nodes_.size());
    std::vector<int> proxyOf(proxyOf_.size());
    for (std::size_t src = 0; src < nodes_.size(); ++src) {
        const auto to = std::size_t(newRowOf[src]);
        nodes[to] = std::move(nodes_[src]);
        proxyOf[to] = proxyOf_[src];
    }
    nodes_ = std::move(nodes);
    proxyOf_ = std::move(proxyOf);
    for (int& src : order_) src = newRowOf[std::size_t(src)];
}

// ---- source signals ------------------------------------------------------------------------

void LocksFilterProxy::setSourceModel(QAbstractItemModel* source) {
    beginResetModel();
    for (const auto& c : connections_) disconnect(c);
    connections_.clear();
    QAbstractProxyModel::setSourceModel(source);
    if (source) {
        const auto reset = [this] { beginResetModel(); };
        const auto rebuilt = [this] {
            rebuild();
            endResetModel();
        };
        connections_ = {
            connect(source, &QAbstractItemModel::rowsInserted, this, &LocksFilterProxy::onRowsInserted),
            connect(source, &QAbstractItemModel::rowsAboutToBeRemoved, this, &LocksFilterProxy::onRowsAboutToBeRemoved),
            connect(source, &QAbstractItemModel::rowsRemoved, this, &LocksFilterProxy::onRowsRemoved),
            connect(source, &QAbstractItemModel::dataChanged, this, &LocksFilterProxy::onDataChanged),
            connect(source, &QAbstractItemModel::headerDataChanged, this, &QAbstractItemModel::headerDataChanged),
            // LocksModel changes its layout only to gather gone rows (followed, see
            // followGatheredRows()) and never moves rows; should a source do more, start over.
            connect(source, &QAbstractItemModel::modelAboutToBeReset, this, reset),
            connect(source, &QAbstractItemModel::modelReset, this, rebuilt),
            connect(source, &QAbstractItemModel::layoutAboutToBeChanged, this,
                    [this, reset] {
                        if (!gatheredRows()) reset();
                    }),
            connect(source, &QAbstractItemModel::layoutChanged, this,
                    [this, rebuilt] {
                        if (const std::vector<int>* moved = gatheredRows()) followGatheredRows(*moved);
                        else rebuilt();
                    }),
            connect(source, &QAbstractItemModel::rowsAboutToBeMoved, this, reset),
            connect(source, &QAbstractItemModel::rowsMoved, this, rebuilt),
            // The base class switches to an empty model then; the nodes must not outlive theirs.
            connect(source, &QObject::destroyed, this,
                    [this] {
                        beginResetModel();
                        nodes_.clear();
                        proxyOf_.clear();
                        order_.clear();
                        byId_.clear();
                        endResetModel();
                    }),
        };
    }
    rebuild();
    endResetModel();
}

void LocksFilterProxy::onRowsInserted(const QModelIndex& parent, int first, int last) {
    const int count = last - first + 1;
    if (!parent.isValid()) {
        std::vector<std::unique_ptr<Node>> added;
        for (int r = first; r <= last; ++r) {
            auto n = std::make_unique<Node>();
            n->id = nextId_++;
            byId_.emplace(n->id, n.get());
            added.push_back(std::move(n));
        }
        nodes_.insert(nodes_.begin() + first, std::make_move_iterator(added.begin()), std::make_move_iterator(added.end()));
        proxyOf_.insert(proxyOf_.begin() + first, std::size_t(count), -1);
        for (int& s : order_)
            if (s >= first) s += count;
        std::vector<int> shown;
        for (int r = first; r <= last; ++r) {
            node(r).lockMatches = matches(sourceModel()->index(r, 0));
            if (shouldShow(r)) shown.push_back(r);
        }
        insertShown(std::move(shown));
        return;
    }
    if (parent.parent().isValid()) return;  // LocksModel has two levels
    Node* n = &node(parent.row());
    for (int& r : n->waiters)
        if (r >= first) r += count;
    refreshLock(parent.row());
}

void LocksFilterProxy::onRowsAboutToBeRemoved(const QModelIndex& parent, int first, int last) {
    if (!parent.isValid()) {
        std::vector<int> shown;
        for (int r = first; r <= last; ++r)
            if (proxyRowOf(r) >= 0) shown.push_back(r);
        removeShown(std::move(shown));
        return;
    }
    if (parent.parent().isValid()) return;
    // A hidden lock can only come back once the rows are gone (onRowsRemoved).
    const int src = parent.row();
    if (proxyRowOf(src) < 0) return;
    if (!text_.isEmpty()) node(src).lockMatches = matches(parent);
    const RowsBeingRemoved removing{first, last};
    if (!shouldShow(src, &removing))
        removeShown({src});
    else
        syncWaiters(src, &removing);
}

void LocksFilterProxy::onRowsRemoved(const QModelIndex& parent, int first, int last) {
    const int count = last - first + 1;
    if (!parent.isValid()) {
        for (int r = first; r <= last; ++r) byId_.erase(node(r).id);
        nodes_.erase(nodes_.begin() + first, nodes_.begin() + last + 1);
        proxyOf_.erase(proxyOf_.begin() + first, proxyOf_.begin() + last + 1);
        for (int& s : order_)
            if (s > last) s -= count;
        return;
    }
    if (parent.parent().isValid()) return;
    Node* n = &node(parent.row());
    for (int& r : n->waiters)
        if (r > last) r -= count;
    if (proxyRowOf(parent.row()) < 0) refreshLock(parent.row());
}

void LocksFilterProxy::onDataChanged(const QModelIndex& topLeft, const QModelIndex& bottomRight, const QList<int>& roles) {
    if (!topLeft.isValid()) return;
    const bool sortHit = sortColumn_ >= topLeft.column() && sortColumn_ <= bottomRight.column() && affects(roles, LocksModel::SortRole);
    const bool filterHit = !text_.isEmpty() && (affects(roles, LocksModel::FilterRole) || affects(roles, LocksModel::PidsRole));
    const QModelIndex sourceParent = topLeft.parent();

    if (!sourceParent.isValid()) {
        std::vector<int> gone, come;
        std::vector<std::pair<int, SortKey>> moved;
        for (int r = topLeft.row(); r <= bottomRight.row(); ++r) {
            Node* n = &node(r);
            const bool shown = proxyRowOf(r) >= 0;
            if (filterHit) {
                const bool lockMatchesNow = matches(sourceModel()->index(r, 0));
                if (lockMatchesNow != n->lockMatches) {
                    n->lockMatches = lockMatchesNow;
                    const bool want = shouldShow(r);
                    if (shown && !want) {
                        gone.push_back(r);
                        continue;
                    }
                    if (!shown && want) come.push_back(r);
                    if (shown) syncWaiters(r);  // all waiters or the matching ones
                }
            }
            if (sortHit && shown) {
                SortKey key = keyOf(sourceModel()->index(r, 0));
                if (compare(key, n->key) != 0 || key.kind != n->key.kind) moved.emplace_back(r, std::move(key));
            }
        }
        removeShown(std::move(gone));
        if (moved.size() > std::size_t(kWideChange)) {
            // Many keys at once (tick() when sorted by Held for: every key moves by the same
            // second): placing them one by one against neighbours that still have their old keys
            // would move rows for nothing. All keys first, then one check, a re-sort only if needed.
            for (auto& [r, key] : moved) node(r).key = std::move(key);
            const auto less = displayOrder();
            if (!std::is_sorted(order_.begin(), order_.end(), less)) resort();
        } else {
            // One at a time: every row but the one being placed is in order, so binary search holds.
            for (auto& [r, key] : moved) {
                if (proxyRowOf(r) < 0) continue;
                node(r).key = std::move(key);
                moveToSortedPlace(r);
            }
        }
        insertShown(std::move(come));

        if (bottomRight.row() - topLeft.row() >= kWideChange) {
            int lo = -1, hi = -1;
            for (int r = topLeft.row(); r <= bottomRight.row(); ++r) {
                const int p = proxyRowOf(r);
                if (p < 0) continue;
                lo = lo < 0 ? p : std::min(lo, p);
                hi = std::max(hi, p);
            }
            if (lo >= 0) emit dataChanged(index(lo, topLeft.column()), index(hi, bottomRight.column()), roles);
        } else {
            for (int r = topLeft.row(); r <= bottomRight.row(); ++r) {
                const int p = proxyRowOf(r);
                if (p >= 0) emit dataChanged(index(p, topLeft.column()), index(p, bottomRight.column()), roles);
            }
        }
        return;
    }

    if (sourceParent.parent().isValid()) return;
    const int src = sourceParent.row();
    if (sortHit || filterHit) refreshLock(src);
    const int lockRow = proxyRowOf(src);
    if (lockRow < 0) return;
    const Node* n = &node(src);
    const QModelIndex parent = createIndex(lockRow, 0, quintptr(0));
    for (int r = topLeft.row(); r <= bottomRight.row(); ++r) {
        const auto at = std::find(n->waiters.begin(), n->waiters.end(), r);
        if (at == n->waiters.end()) continue;
        const int k = int(at - n->waiters.begin());
        emit dataChanged(index(k, topLeft.column(), parent), index(k, bottomRight.column(), parent), roles);
    }
}

// ---- item model ------------------------------------------------------------------------------
//
// internalId: 0 for a lock row; for a waiter row, the id of its lock's node (stable while the
// lock exists, never reused, looked up in byId_), so a stale waiter index finds no parent rather
// than another lock.

QModelIndex LocksFilterProxy::index(int row, int column, const QModelIndex& parent) const {
    if (row < 0 || column < 0 || column >= columnCount()) return {};
    if (!parent.isValid()) return row < shownCount() ? createIndex(row, column, quintptr(0)) : QModelIndex();
    if (parent.internalId() != 0 || parent.column() != 0 || parent.row() >= shownCount()) return {};
    const Node* n = &node(sourceRowAt(parent.row()));
    if (std::size_t(row) >= n->waiters.size()) return {};
    n->hint = parent.row();
    return createIndex(row, column, quintptr(n->id));
}

QModelIndex LocksFilterProxy::parent(const QModelIndex& child) const {
    if (!child.isValid() || child.internalId() == 0) return {};
    const auto it = byId_.find(child.internalId());
    if (it == byId_.end()) return {};
    const int row = rowOfNode(it->second);
    return row < 0 ? QModelIndex() : createIndex(row, 0, quintptr(0));
}

QModelIndex LocksFilterProxy::sibling(int row, int column, const QModelIndex& idx) const {
    return idx.isValid() ? index(row, column, parent(idx)) : QModelIndex();
}

int LocksFilterProxy::rowCount(const QModelIndex& parent) const {
    if (!parent.isValid()) return shownCount();
    if (parent.internalId() != 0 || parent.column() != 0 || parent.row() >= shownCount()) return 0;
    return int(node(sourceRowAt(parent.row())).waiters.size());
}

int LocksFilterProxy::columnCount(const QModelIndex&) const { return sourceModel() ? sourceModel()->columnCount() : 0; }

bool LocksFilterProxy::hasChildren(const QModelIndex& parent) const { return rowCount(parent) > 0; }

QVariant LocksFilterProxy::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation == Qt::Horizontal && sourceModel()) return sourceModel()->headerData(section, orientation, role);
    return QAbstractProxyModel::headerData(section, orientation, role);
}

QModelIndex LocksFilterProxy::mapToSource(const QModelIndex& proxyIndex) const {
    if (!proxyIndex.isValid() || !sourceModel()) return {};
    if (proxyIndex.internalId() == 0) {
        if (proxyIndex.row() >= shownCount()) return {};
        return sourceModel()->index(sourceRowAt(proxyIndex.row()), proxyIndex.column());
    }
    const auto it = byId_.find(proxyIndex.internalId());
    if (it == byId_.end() || std::size_t(proxyIndex.row()) >= it->second->waiters.size()) return {};
    const int lockRow = rowOfNode(it->second);
    if (lockRow < 0) return {};
    const QModelIndex parent = sourceModel()->index(sourceRowAt(lockRow), 0);
    return sourceModel()->index(it->second->waiters[std::size_t(proxyIndex.row())], proxyIndex.column(), parent);
}

QModelIndex LocksFilterProxy::mapFromSource(const QModelIndex& sourceIndex) const {
    if (!sourceIndex.isValid() || sourceIndex.model() != sourceModel()) return {};
    const QModelIndex sourceParent = sourceIndex.parent();
    if (!sourceParent.isValid()) {
        const int p = proxyRowOf(sourceIndex.row());
        return p < 0 ? QModelIndex() : createIndex(p, sourceIndex.column(), quintptr(0));
    }
    const int p = proxyRowOf(sourceParent.row());
    if (p < 0) return {};
    const Node* n = &node(sourceParent.row());
    const auto at = std::find(n->waiters.begin(), n->waiters.end(), sourceIndex.row());
    if (at == n->waiters.end()) return {};
    return createIndex(int(at - n->waiters.begin()), sourceIndex.column(), quintptr(n->id));
}

bool LocksFilterProxy::invariantsHold() const {
    if (!sourceModel()) return order_.empty() && nodes_.empty();
    const std::size_t count = std::size_t(sourceModel()->rowCount());
    if (nodes_.size() != count || proxyOf_.size() != count || byId_.size() != count) return false;
    std::size_t shown = 0;
    for (std::size_t r = 0; r < count; ++r) {
        const Node* n = nodes_[r].get();
        const auto it = byId_.find(n->id);
        if (it == byId_.end() || it->second != n) return false;
        const int src = int(r);
        if (n->lockMatches != matches(sourceModel()->index(src, 0))) return false;
        const int p = proxyOf_[r];
        if ((p >= 0) != shouldShow(src)) return false;
        if (p < 0) {
            if (!n->waiters.empty()) return false;
            continue;
        }
        ++shown;
        if (std::size_t(p) >= order_.size() || sourceRowAt(p) != src) return false;
        if (rowOfNode(n) != p) return false;
        if (compare(keyOf(sourceModel()->index(src, 0)), n->key) != 0) return false;
        if (n->waiters != waitersToShow(src)) return false;
    }
    if (shown != order_.size()) return false;
    for (std::size_t i = 1; i < order_.size(); ++i)
        if (!sortsBefore(&node(order_[i - 1]), &node(order_[i]))) return false;
    return true;
}

}  // namespace lockscope
