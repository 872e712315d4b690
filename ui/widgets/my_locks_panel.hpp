// "My locks": the locks this app holds (or waits for, or lost), with the buttons that act on
// the selected one. Talks to the LockController only; read-only mode disables what it refuses.
#pragma once

#include <QWidget>

class QLabel;
class QPushButton;
class QTableView;

namespace lockscope {

class LockController;
class MyLocksModel;
class ReadOnlySwitch;

class MyLocksPanel : public QWidget {
    Q_OBJECT
public:
    MyLocksPanel(LockController& controller, ReadOnlySwitch& readOnly, QWidget* parent = nullptr);

    MyLocksModel& model() { return *model_; }
    QTableView& view() { return *view_; }
    // Opens the take-lock dialog prefilled with `name` and takes the lock when accepted.
    void takeLock(const QByteArray& name = {});

signals:
    // A refusal or failure to show in the window's status bar.
    void message(const QString& text);

private:
    quint64 selectedId() const;
    void refreshButtons();
    void act(const char* what);

    LockController& controller_;
    ReadOnlySwitch& readOnly_;
    MyLocksModel* model_;
    QTableView* view_;
    QLabel* banner_;
    QPushButton* take_;
    QPushButton* release_;
    QPushButton* cancel_;
    QPushButton* commit_;
    QPushButton* rollback_;
    QPushButton* clear_;
};

}  // namespace lockscope
