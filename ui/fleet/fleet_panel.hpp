// The Fleet tab: FleetModel as a sortable table (worst first until the operator sorts by another
// column), the waiters of the last polls as a sparkline, unreachable servers in the error colour.
// Double-click (or Enter) on a row asks the window to show that server's locks.
#pragma once

#include <QWidget>

class QSortFilterProxyModel;
class QTableView;

namespace lockscope {

class FleetModel;
class ServerSession;

class FleetPanel : public QWidget {
    Q_OBJECT
public:
    explicit FleetPanel(FleetModel& model, QWidget* parent = nullptr);

    QTableView& view() { return *view_; }
    // Back to the worst-first order (the Server column's rank).
    void sortWorstFirst();

signals:
    void serverActivated(lockscope::ServerSession* session);

private:
    FleetModel& model_;
    QSortFilterProxyModel* proxy_;
    QTableView* view_;
};

}  // namespace lockscope
