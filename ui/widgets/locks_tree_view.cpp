#include "widgets/locks_tree_view.hpp"

#include <QAccessible>

namespace lockscope {

void LocksTreeView::dataChanged(const QModelIndex& topLeft, const QModelIndex& bottomRight, const QList<int>& roles) {
    // Rows under a collapsed parent are not shown: no cell to repaint, no editor (the view is
    // read-only). A screen reader still hears of every change.
    const QModelIndex parent = topLeft.parent();
    if (parent.isValid() && !isExpanded(parent) && !QAccessible::isActive()) return;
    QTreeView::dataChanged(topLeft, bottomRight, roles);
}

}  // namespace lockscope
