// The session behind the selected holder or waiter: full query, timestamps, wait event.
#pragma once

#include <QWidget>

#include "models/lock_naming.hpp"
#include "poller/poll_result.hpp"

class QLabel;
class QTableWidget;

namespace lockscope {

class SessionPanel : public QWidget {
    Q_OBJECT
public:
    explicit SessionPanel(QWidget* parent = nullptr);
    void show(const PollResultPtr& latest, int pid);  // pid 0: nothing selected
    // How its Holds and Waits for lines name the locks: the app's one rule (lock_naming.hpp).
    void setNamer(LockNamer namer) { namer_ = std::move(namer); }
    int pid() const noexcept { return pid_; }

private:
    QLabel* title_;
    QTableWidget* table_;
    int pid_ = 0;
    LockNamer namer_;
};

}  // namespace lockscope
