// The Tree tab: root blockers first, each with the sessions it blocks to any depth, the lock on
// every edge (LockTreeModel), and the status bar's line naming the worst root.
#pragma once

#include <QWidget>

class QLabel;
class QTreeView;

namespace lockscope {

class LockTreeModel;

class LockTreePanel : public QWidget {
    Q_OBJECT
public:
    explicit LockTreePanel(LockTreeModel& model, QWidget* parent = nullptr);

    // "Worst root: PID 4711 (billing-worker) blocks 23 sessions via billing:invoice-run, 9m",
    // hidden while no session blocks another; for the window's status bar.
    QLabel* worstRootLabel() const { return worst_; }
    // With several servers in a window every server's panel has this line; only the current one's shows.
    void setWorstRootShown(bool shown);
    QTreeView* view() const { return view_; }

private:
    void refresh();

    LockTreeModel& model_;
    QTreeView* view_;
    QLabel* empty_;
    QLabel* worst_;
    bool worstShown_ = true;
};

}  // namespace lockscope
