// The locks view: a QTreeView that ignores changes to rows under a collapsed lock.
//
// QAbstractItemView answers a one-cell dataChanged() by looking up that cell's rectangle, and
// QTreeView finds a row it does not show (a waiter under a collapsed lock) only by a scan of every
// shown row. LocksModel::tick() changes the "held for" cell of every waiter once a second: 1,000
// waiters under 50,000 locks made that one turn of the GUI thread ~50 ms of scans for rectangles
// that are empty anyway. A hidden row has nothing to repaint; when its lock is expanded the view
// lays the rows out and paints them from the model as they are then.
#pragma once

#include <QTreeView>

namespace lockscope {

class LocksTreeView : public QTreeView {
    Q_OBJECT
public:
    using QTreeView::QTreeView;

protected:
    void dataChanged(const QModelIndex& topLeft, const QModelIndex& bottomRight, const QList<int>& roles = {}) override;
};

}  // namespace lockscope
