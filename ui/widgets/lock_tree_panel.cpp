#include "widgets/lock_tree_panel.hpp"

#include <QHeaderView>
#include <QLabel>
#include <QTreeView>
#include <QVBoxLayout>

#include "models/lock_tree_model.hpp"
#include "models/plain_text.hpp"

namespace lockscope {

LockTreePanel::LockTreePanel(LockTreeModel& model, QWidget* parent) : QWidget(parent), model_(model) {
    setObjectName(QStringLiteral("lockTreePanel"));
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(2);
    empty_ = new QLabel(tr("No session blocks another."), this);
    empty_->setContentsMargins(8, 8, 8, 8);
    view_ = new QTreeView(this);
    view_->setObjectName(QStringLiteral("lockTreeView"));
    view_->setModel(&model_);
    view_->setAlternatingRowColors(true);
    view_->setUniformRowHeights(true);
    view_->setSelectionBehavior(QAbstractItemView::SelectRows);
    view_->setTextElideMode(Qt::ElideMiddle);
    view_->header()->setStretchLastSection(true);
    layout->addWidget(empty_);
    layout->addWidget(view_, 1);

    worst_ = new QLabel(this);
    worst_->setObjectName(QStringLiteral("worstRootLabel"));
    worst_->setTextFormat(Qt::PlainText);  // an application_name and a lock name: any user's text
    worst_->setStyleSheet(QStringLiteral("color: white; background: #a04000; padding: 0 6px"));
    worst_->hide();

    // A new shape: show every chain open (they are short); a same-shape poll keeps what the user did.
    connect(&model_, &QAbstractItemModel::modelReset, this, [this] {
        view_->expandAll();
        for (int c = 0; c < LockTreeModel::State; ++c) view_->resizeColumnToContents(c);
        refresh();
    });
    connect(&model_, &QAbstractItemModel::dataChanged, this, &LockTreePanel::refresh);
    refresh();
}

void LockTreePanel::setWorstRootShown(bool shown) {
    worstShown_ = shown;
    refresh();
}

void LockTreePanel::refresh() {
    const QString worst = model_.worstRootText();
    worst_->setText(tr("Worst root: %1").arg(worst));
    worst_->setToolTip(worst.isEmpty() ? QString() : plainToolTip(worst_->text()));  // the whole line when the bar cuts it
    worst_->setVisible(worstShown_ && !worst.isEmpty());
    empty_->setVisible(model_.rowCount() == 0);
}

}  // namespace lockscope
