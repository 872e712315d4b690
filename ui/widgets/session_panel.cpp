#include "widgets/session_panel.hpp"

#include <QHeaderView>
#include <QLabel>
#include <QTableWidget>
#include <QVBoxLayout>

#include "models/session_info.hpp"
#include "models/plain_text.hpp"

namespace lockscope {

SessionPanel::SessionPanel(QWidget* parent) : QWidget(parent) {
    auto* layout = new QVBoxLayout(this);
    title_ = new QLabel(tr("Select a lock or a waiter to see its session."), this);
    title_->setWordWrap(true);
    table_ = new QTableWidget(0, 2, this);
    table_->setObjectName(QStringLiteral("sessionTable"));
    table_->horizontalHeader()->hide();
    table_->verticalHeader()->hide();
    table_->horizontalHeader()->setSectionResizeMode(0, QHeaderView::ResizeToContents);
    table_->horizontalHeader()->setStretchLastSection(true);
    table_->setEditTriggers(QAbstractItemView::NoEditTriggers);
    table_->setWordWrap(true);
    layout->addWidget(title_);
    layout->addWidget(table_, 1);
}

void SessionPanel::show(const PollResultPtr& latest, int pid) {
    pid_ = pid;
    if (pid == 0 || !latest || !latest->snapshot) {
        table_->setRowCount(0);
        title_->setText(tr("Select a lock or a waiter to see its session."));
        return;
    }
    const SessionInfo info = SessionInfo::from(*latest->snapshot, pid, namer_);
    if (!info.found) {
        table_->setRowCount(0);
        title_->setText(tr("Session %1 no longer holds or waits for an advisory lock.").arg(pid));
        return;
    }
    title_->setText(tr("Session %1").arg(pid));
    table_->setRowCount(static_cast<int>(info.fields.size()));
    for (int i = 0; i < info.fields.size(); ++i) {
        const auto& f = info.fields.at(i);
        auto* label = table_->item(i, 0);
        if (!label) table_->setItem(i, 0, label = new QTableWidgetItem());
        auto* value = table_->item(i, 1);
        if (!value) table_->setItem(i, 1, value = new QTableWidgetItem());
        label->setText(f.label);
        value->setText(f.value);
        value->setToolTip(plainToolTip(f.value));
    }
    table_->resizeRowsToContents();
}

}  // namespace lockscope
