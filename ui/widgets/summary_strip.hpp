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

    // The summary of a poll; the longest wait shows as of that poll until advance().
    void show(const LockSummary& summary, const SummaryThresholds& thresholds);
    // The rows' durations moved on to `secondsSincePoll` after the poll shown: the longest wait
    // says the same time as its row (and turns long as its row does).
    void advance(double secondsSincePoll);
    void clear();
    const LockSummary& summary() const { return summary_; }

signals:
    void longestWaitClicked(const pglock::monitor::LockId& lock, int pid);

protected:
    void changeEvent(QEvent* event) override;

private:
    void paintTints();
    void showLongestWait();
    double longestWaitSeconds() const;

    LockName lockName_;
    LockSummary summary_;
    SummaryThresholds thresholds_;
    double sincePoll_ = 0.0;
    QLabel* held_;
    QLabel* waiting_;
    QPushButton* longest_;
    QLabel* idle_;
    QLabel* xmin_;
};

}  // namespace lockscope
