// The Tree view's model: each root blocker (a session that blocks others and waits on nothing) at
// the top, highest impact first, and under it the sessions it blocks, to any depth and across lock
// types (pglock/lock_tree.hpp builds the trees on the poll thread). Advisory locks on the edges are
// named by the app's one naming rule (lock_naming.hpp), other locks described ("row (0,3) of
// public.invoices").
//
// A poll that shows the same trees (the same sessions in the same places, waiting for the same
// locks) only updates the cells (dataChanged), so selection, expansion and scroll survive it; a
// changed shape resets the model. Trees are small (the sessions on chains), so a reset is cheap.
#pragma once

#include <QAbstractItemModel>
#include <QString>

#include <optional>
#include <vector>

#include "models/lock_naming.hpp"
#include "poller/poll_result.hpp"

namespace lockscope {

class LockTreeModel : public QAbstractItemModel {
    Q_OBJECT
public:
    enum Column { Session, WaitsFor, Waiting, Blocks, State, ColumnCount };
    enum Role { PidRole = Qt::UserRole + 1, IsRootRole, IsCycleRole };

    explicit LockTreeModel(QObject* parent = nullptr);

    void setNamer(LockNamer namer) { namer_ = std::move(namer); }
    // Shows the trees of `result` (its roots, named against its snapshot).
    void setResult(const PollResultPtr& result);
    void clear();

    // "PID 4711 (billing-worker) blocks 23 sessions via billing:invoice-run, 9m": the worst root
    // of the last result, or "" when no session blocks another.
    QString worstRootText() const { return worst_; }

    QModelIndex index(int row, int column, const QModelIndex& parent = {}) const override;
    QModelIndex parent(const QModelIndex& child) const override;
    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    struct Item {
        int parent = -1;  // index into items_, -1 for a root
        int row = 0;      // its row under its parent
        std::vector<int> children;
        int pid = 0;
        bool root = false, cycle = false, queued = false, repeated = false;
        QString session, lock, state, query;
        std::optional<double> waiting;  // seconds
        std::size_t blocks = 0;         // distinct sessions below it
        std::size_t directly = 0;
    };
    int add(std::vector<Item>& items, const pglock::monitor::TreeNode& node, int parent, int row,
            const pglock::monitor::Snapshot& snapshot) const;
    QString lockText(const pglock::monitor::TreeNode& node, const pglock::monitor::Snapshot& snapshot) const;
    QString sessionText(int pid, const pglock::monitor::Snapshot& snapshot) const;
    void emitChanged(int parent);

    LockNamer namer_;
    std::vector<Item> items_;
    std::vector<int> roots_;  // indexes of the root items, in rank order
    QString worst_;
};

}  // namespace lockscope
