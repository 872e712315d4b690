// The lockscope main window: the live locks view, the selected session, the resolver and the
// name catalog, with the connection state in the status bar. It runs no SQL itself: the poller
// does, on its own thread; this window only merges finished results into the models.
#pragma once

#include <QMainWindow>
#include <QTimer>

#include <memory>

#include "poller/poll_result.hpp"
#include "poller/poller.hpp"
#include "stores/profile_store.hpp"

class QDoubleSpinBox;
class QLabel;
class QLineEdit;
class QTabWidget;
class QTreeView;
class QAction;

namespace lockscope {

class CatalogPanel;
class CatalogStore;
class LocksFilterProxy;
class LocksModel;
class ResolverPanel;
class SessionPanel;

class MainWindow : public QMainWindow {
    Q_OBJECT
public:
    // The catalog is shared with the caller (main), which decides where it lives.
    explicit MainWindow(CatalogStore& catalog, QWidget* parent = nullptr);
    ~MainWindow() override;

    // Connects at once (as after the connection dialog); used by --dsn and the tests.
    void connectTo(const QString& conninfo, const QString& password = {}, const QString& label = {});
    void openConnectionDialog();
    void showTab(const QString& name);  // "session", "resolver" or "catalog"

    Poller& poller() { return poller_; }
    LocksModel& locksModel() { return *model_; }
    QTreeView& locksView() { return *view_; }
    ResolverPanel& resolver() { return *resolver_; }
    PollResultPtr latest() const { return latest_; }

private:
    void buildActions();
    void buildStatusBar();
    void onResult(const PollResultPtr& result);
    void onState(PollState state, const QString& message);
    void onSelection();
    void showContextMenu(const QPoint& pos);
    void nameUnknownKey(qint64 key);
    QStringList catalogNames(qint64 key) const;

    CatalogStore& catalog_;
    ProfileStore profiles_;
    Poller poller_;
    LocksModel* model_;
    LocksFilterProxy* proxy_;
    QTreeView* view_;
    QTabWidget* tabs_;
    SessionPanel* session_;
    ResolverPanel* resolver_;
    CatalogPanel* catalogPanel_;
    QLineEdit* filter_;
    QDoubleSpinBox* interval_;
    QAction* pause_;
    QLabel* stateLabel_;
    QLabel* serverLabel_;
    QLabel* standbyLabel_;
    QLabel* pollLabel_;
    QLabel* rowsLabel_;
    QTimer tick_;
    PollResultPtr latest_;
    QString connectionLabel_;
};

}  // namespace lockscope
