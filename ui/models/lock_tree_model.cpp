#include "models/lock_tree_model.hpp"

#include <QCoreApplication>
#include <QFont>

#include <algorithm>
#include <map>

#include "models/plain_text.hpp"
#include "models/server_text.hpp"
#include "pglock/duration_text.hpp"
#include "pglock/key.hpp"

namespace lockscope {

namespace {

using pglock::monitor::KeyForm;
using pglock::monitor::LockEntry;
using pglock::monitor::LockId;
using pglock::monitor::Snapshot;


// The snapshot's entry of an advisory lock (its holder's name names it); the snapshot is sorted
// by form, then by signed key or pair (monitor.hpp).
const LockEntry* entryOf(const Snapshot& snapshot, const LockId& id) {
    const auto less = [](const LockEntry& e, const LockId& id) {
        if (e.form != id.form) return e.form < id.form;
        if (e.form == KeyForm::int_pair)
            return std::pair(e.pair_first, e.pair_second) <
                   std::pair(static_cast<std::int32_t>(id.tag.classid), static_cast<std::int32_t>(id.tag.objid));
        return e.key < pglock::key_of(id.tag);
    };
    const auto it = std::lower_bound(snapshot.locks.begin(), snapshot.locks.end(), id, less);
    return it != snapshot.locks.end() && pglock::monitor::id_of(*it) == id ? &*it : nullptr;
}

QString durationText(std::optional<double> seconds) {
    return seconds ? QString::fromStdString(pglock::duration_text(*seconds)) : QStringLiteral("-");
}

}  // namespace

LockTreeModel::LockTreeModel(QObject* parent) : QAbstractItemModel(parent) {}

QString LockTreeModel::sessionText(int pid, const Snapshot& snapshot) const {
    const auto b = snapshot.backends.find(pid);
    if (b == snapshot.backends.end() || b->second.application_name.empty()) return tr("PID %1").arg(pid);
    return tr("PID %1 (%2)").arg(pid).arg(serverText(b->second.application_name));
}

QString LockTreeModel::lockText(const pglock::monitor::TreeNode& node, const Snapshot& snapshot) const {
    // Not advisory: the server's description ("row (0,3) of public.invoices"), whose schema and
    // table are anybody's names.
    if (!node.advisory || !namer_) return serverText(node.lock);
    const LockEntry* entry = entryOf(snapshot, *node.advisory);
    return namer_(*node.advisory, pglock::key_of(node.advisory->tag), entry ? entry->holder_name : std::nullopt).text;
}

int LockTreeModel::add(std::vector<Item>& items, const pglock::monitor::TreeNode& node, int parent, int row,
                       const Snapshot& snapshot) const {
    const int at = static_cast<int>(items.size());
    Item item;
    item.parent = parent;
    item.row = row;
    item.pid = node.pid;
    item.queued = node.queued;
    item.repeated = node.repeated;
    item.session = sessionText(node.pid, snapshot);
    item.lock = lockText(node, snapshot);
    if (node.mode == "shared") item.lock += tr(" (shared)");
    if (node.wait_start) item.waiting = std::max(0.0, snapshot.server_now - *node.wait_start);
    if (const auto b = snapshot.backends.find(node.pid); b != snapshot.backends.end()) {
        item.state = serverText(b->second.state);
        item.query = serverQuery(b->second.query);
    }
    items.push_back(std::move(item));
    std::size_t below = 0;
    for (std::size_t i = 0; i < node.children.size(); ++i) {
        const int child = add(items, node.children[i], at, static_cast<int>(i), snapshot);
        items[static_cast<std::size_t>(at)].children.push_back(child);
        below += 1 + items[static_cast<std::size_t>(child)].blocks;
    }
    items[static_cast<std::size_t>(at)].blocks = below;
    items[static_cast<std::size_t>(at)].directly = node.children.size();
    return at;
}

void LockTreeModel::setResult(const PollResultPtr& result) {
    if (!result || !result->snapshot) return clear();
    const Snapshot& snap = *result->snapshot;
    std::vector<Item> items;
    std::vector<int> roots;
    for (std::size_t r = 0; r < result->roots.size(); ++r) {
        const auto& root = result->roots[r];
        const int at = static_cast<int>(items.size());
        Item item;
        item.row = static_cast<int>(r);
        item.pid = root.pid;
        item.root = true;
        item.cycle = root.cycle;
        item.session = sessionText(root.pid, snap);
        item.lock = root.cycle ? tr("(a cycle: a deadlock in progress)") : tr("(nothing: the root)");
        if (root.oldest_wait_start) item.waiting = std::max(0.0, snap.server_now - *root.oldest_wait_start);
        item.blocks = root.blocked_total;
        item.directly = root.blocked_directly;
        if (const auto b = snap.backends.find(root.pid); b != snap.backends.end()) {
            item.state = serverText(b->second.state);
            item.query = serverQuery(b->second.query);
        }
        items.push_back(std::move(item));
        roots.push_back(at);
        for (std::size_t i = 0; i < root.children.size(); ++i) {
            const int child = add(items, root.children[i], at, static_cast<int>(i), snap);
            items[static_cast<std::size_t>(at)].children.push_back(child);
        }
    }

    // The worst root, named the way the rows name it.
    worst_.clear();
    if (!roots.empty()) {
        const Item& w = items[static_cast<std::size_t>(roots.front())];
        std::map<QString, int> via;
        QString best;
        int bestCount = 0;
        for (int c : w.children) {
            const QString& lock = items[static_cast<std::size_t>(c)].lock;
            if (++via[lock] > bestCount) {
                bestCount = via[lock];
                best = lock;
            }
        }
        worst_ = tr("%1 blocks %2").arg(w.session).arg(w.blocks == 1 ? tr("1 session") : tr("%1 sessions").arg(w.blocks));
        if (!best.isEmpty()) worst_ += tr(" via %1").arg(best);
        if (w.waiting) worst_ += QStringLiteral(", ") + durationText(w.waiting);
        if (w.cycle) worst_ += tr(" (a deadlock in progress)");
    }

    // The same shape: update the cells in place, so the view keeps its selection and expansion.
    bool same = items.size() == items_.size() && roots == roots_;
    for (std::size_t i = 0; same && i < items.size(); ++i) {
        const Item &a = items[i], &b = items_[i];
        same = a.parent == b.parent && a.pid == b.pid && a.children == b.children && a.lock == b.lock &&
               a.root == b.root && a.cycle == b.cycle && a.repeated == b.repeated;
    }
    if (same) {
        items_ = std::move(items);
        emitChanged(-1);
        return;
    }
    beginResetModel();
    items_ = std::move(items);
    roots_ = std::move(roots);
    endResetModel();
}

void LockTreeModel::emitChanged(int parent) {
    const std::vector<int>& rows = parent < 0 ? roots_ : items_[static_cast<std::size_t>(parent)].children;
    if (rows.empty()) return;
    const QModelIndex p = parent < 0 ? QModelIndex() : createIndex(items_[static_cast<std::size_t>(parent)].row, 0, quintptr(parent));
    emit dataChanged(index(0, 0, p), index(static_cast<int>(rows.size()) - 1, ColumnCount - 1, p));
    for (int r : rows) emitChanged(r);
}

void LockTreeModel::clear() {
    worst_.clear();
    if (items_.empty()) return;
    beginResetModel();
    items_.clear();
    roots_.clear();
    endResetModel();
}

QModelIndex LockTreeModel::index(int row, int column, const QModelIndex& parent) const {
    if (row < 0 || column < 0 || column >= ColumnCount) return {};
    const std::vector<int>& rows =
        parent.isValid() ? items_[static_cast<std::size_t>(parent.internalId())].children : roots_;
    if (row >= static_cast<int>(rows.size())) return {};
    return createIndex(row, column, quintptr(rows[static_cast<std::size_t>(row)]));
}

QModelIndex LockTreeModel::parent(const QModelIndex& child) const {
    if (!child.isValid()) return {};
    const int p = items_[static_cast<std::size_t>(child.internalId())].parent;
    if (p < 0) return {};
    return createIndex(items_[static_cast<std::size_t>(p)].row, 0, quintptr(p));
}

int LockTreeModel::rowCount(const QModelIndex& parent) const {
    if (!parent.isValid()) return static_cast<int>(roots_.size());
    if (parent.column() != 0) return 0;
    return static_cast<int>(items_[static_cast<std::size_t>(parent.internalId())].children.size());
}

int LockTreeModel::columnCount(const QModelIndex&) const { return ColumnCount; }

QVariant LockTreeModel::data(const QModelIndex& index, int role) const {
    if (!index.isValid()) return {};
    const Item& item = items_[static_cast<std::size_t>(index.internalId())];
    switch (role) {
    case Qt::DisplayRole:
        switch (index.column()) {
        case Session: return item.session;
        case WaitsFor:
            if (item.repeated) return tr("%1 (shown above)").arg(item.lock);
            return item.queued ? tr("%1 (queued behind other waiters)").arg(item.lock) : item.lock;
        case Waiting: return durationText(item.waiting);
        case Blocks:
            if (item.root) return tr("%1 (%2 directly)").arg(item.blocks).arg(item.directly);
            return item.blocks ? QVariant(qulonglong(item.blocks)) : QVariant(QString());
        case State: return item.state;
        }
        return {};
    case Qt::ToolTipRole:
        if (index.column() == Session && !item.query.isEmpty()) return plainToolTip(item.query);  // any user's SQL
        if (index.column() == Waiting && item.root) return tr("The oldest wait below this root");
        return {};
    case Qt::FontRole:
        if (item.root) {
            QFont f;
            f.setBold(true);
            return f;
        }
        return {};
    case PidRole: return item.pid;
    case IsRootRole: return item.root;
    case IsCycleRole: return item.cycle;
    }
    return {};
}

QVariant LockTreeModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return {};
    switch (section) {
    case Session: return tr("Session");
    case WaitsFor: return tr("Waits for");
    case Waiting: return tr("Waiting");
    case Blocks: return tr("Blocks");
    case State: return tr("State");
    }
    return {};
}

}  // namespace lockscope
