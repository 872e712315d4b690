#include "widgets/summary_strip.hpp"

#include <QEvent>

#include <algorithm>
#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>

#include "models/locks_model.hpp"
#include "theme/app_palette.hpp"
#include "widgets/name_input.hpp"

namespace lockscope {

namespace {

QLabel* part(QWidget* parent, const char* name) {
    auto* label = new QLabel(parent);
    label->setObjectName(QString::fromLatin1(name));
    label->setTextFormat(Qt::PlainText);
    label->setContentsMargins(6, 2, 6, 2);
    return label;
}

// The tint of a part that needs a look; nothing otherwise. Its text says the same (never colour alone).
void tint(QWidget* w, bool on) {
    w->setAutoFillBackground(on);
    QPalette p = w->parentWidget()->palette();
    if (on) {
        p.setColor(QPalette::Window, theme::background(theme::Tint::attention));
        p.setColor(QPalette::Button, theme::background(theme::Tint::attention));
        p.setColor(QPalette::WindowText, theme::foreground(theme::Tint::attention));
        p.setColor(QPalette::ButtonText, theme::foreground(theme::Tint::attention));
    }
    w->setPalette(p);
}

}  // namespace

SummaryStrip::SummaryStrip(LockName lockName, QWidget* parent) : QFrame(parent), lockName_(std::move(lockName)) {
    setObjectName(QStringLiteral("summaryStrip"));
    setAccessibleName(tr("Lock summary"));
    setFrameShape(QFrame::StyledPanel);
    auto* row = new QHBoxLayout(this);
    row->setContentsMargins(4, 2, 4, 2);
    held_ = part(this, "summaryHeld");
    waiting_ = part(this, "summaryWaiting");
    longest_ = new QPushButton(this);
    longest_->setObjectName(QStringLiteral("summaryLongestWait"));
    longest_->setFlat(true);
    longest_->setToolTip(tr("Select this lock in the list"));
    longest_->setAccessibleName(tr("Longest wait"));
    idle_ = part(this, "summaryIdleInTransaction");
    xmin_ = part(this, "summaryXminPins");
    row->addWidget(held_);
    row->addWidget(waiting_);
    row->addWidget(longest_);
    row->addWidget(idle_);
    row->addWidget(xmin_);
    row->addStretch(1);
    connect(longest_, &QPushButton::clicked, this, [this] {
        if (summary_.longestWait) emit longestWaitClicked(summary_.longestWait->lock, summary_.longestWait->pid);
    });
    clear();
}

void SummaryStrip::clear() { show(LockSummary{}, thresholds_); }

void SummaryStrip::show(const LockSummary& summary, const SummaryThresholds& thresholds) {
    summary_ = summary;
    thresholds_ = thresholds;
    sincePoll_ = 0.0;
    held_->setText(tr("%1 held").arg(counted(summary.locksHeld, tr("lock"), tr("locks"))) +
                   (summary.longHolds ? tr(" (%1 over %2)").arg(summary.longHolds).arg(LocksModel::formatDuration(thresholds.longHold))
                                      : QString()));
    waiting_->setText(summary.sessionsWaiting ? tr("⚠ %1 waiting").arg(counted(summary.sessionsWaiting, tr("session"), tr("sessions")))
                                              : tr("no session waiting"));
    showLongestWait();
    idle_->setText(tr("%1 idle in transaction").arg(counted(summary.idleInTransactionHolders, tr("holder"), tr("holders"))) +
                   tr(" over %1").arg(LocksModel::formatDuration(thresholds.idleInTransaction)));
    xmin_->setText(summary.xminPins == 1 ? tr("1 waiter pins xmin") : tr("%1 waiters pin xmin").arg(summary.xminPins));
    idle_->setToolTip(tr("Sessions holding an advisory lock while idle in transaction longer than the threshold (Settings)"));
    xmin_->setToolTip(tr("Waiters whose snapshot has held back VACUUM's xmin horizon longer than %1")
                          .arg(LocksModel::formatDuration(thresholds.xminPin)));
    paintTints();
}

void SummaryStrip::advance(double secondsSincePoll) {
    sincePoll_ = std::max(0.0, secondsSincePoll);
    showLongestWait();
    paintTints();
}

double SummaryStrip::longestWaitSeconds() const { return summary_.longestWait ? summary_.longestWait->seconds + sincePoll_ : 0.0; }

void SummaryStrip::showLongestWait() {
    if (summary_.longestWait) {
        const auto& w = *summary_.longestWait;
        longest_->setText(tr("Longest wait: %1, %2 (pid %3)")
                              .arg(lockName_ ? lockName_(w.lock) : QString::number(w.lock.tag.objid),
                                   LocksModel::formatDuration(longestWaitSeconds()))
                              .arg(w.pid));
        longest_->setEnabled(true);
    } else {
        longest_->setText(tr("Longest wait: none"));
        longest_->setEnabled(false);
    }
}

void SummaryStrip::paintTints() {
    tint(held_, summary_.longHolds > 0);
    tint(waiting_, summary_.sessionsWaiting > 0);
    tint(longest_, summary_.longestWait && longestWaitSeconds() >= thresholds_.longWait);
    tint(idle_, summary_.idleInTransactionHolders > 0);
    tint(xmin_, summary_.xminPins > 0);
}

void SummaryStrip::changeEvent(QEvent* event) {
    QFrame::changeEvent(event);
    // Light/dark switched: the tints follow. (setPalette on the parts sends no change to this frame.)
    if (event->type() == QEvent::PaletteChange || event->type() == QEvent::ApplicationPaletteChange) paintTints();
}

}  // namespace lockscope
