// The strip above the locks view: locks held, sessions waiting, the longest wait (a click selects
// its lock), idle-in-transaction holders and xmin pins, each highlighted when it needs a look.
#pragma once

#include <QFrame>

#include <functional>

#include "models/lock_summary.hpp"

class QLabel;
class QPushButton;

namespace lockscope {

class SummaryStrip : public QFrame {
    Q_OBJECT
public:
    // The name the locks view shows for a lock (one naming rule for every view).
    using LockName = std::function<QString(const pglock::monitor::LockId&)>;

    explicit SummaryStrip(LockName lockName, QWidget* parent = nullptr);

    void show(const LockSummary& summary, const SummaryThresholds& thresholds);
    void clear();
    const LockSummary& summary() const { return summary_; }

signals:
    void longestWaitClicked(const pglock::monitor::LockId& lock, int pid);

protected:
    void changeEvent(QEvent* event) override;

private:
    void paintTints();

    LockName lockName_;
    LockSummary summary_;
    SummaryThresholds thresholds_;
    QLabel* held_;
    QLabel* waiting_;
    QPushButton* longest_;
    QLabel* idle_;
    QLabel* xmin_;
};

}  // namespace lockscope
