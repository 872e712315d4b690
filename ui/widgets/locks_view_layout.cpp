#include "widgets/locks_view_layout.hpp"

#include <QEvent>
#include <QHeaderView>
#include <QSettings>
#include <QSplitter>
#include <QStyledItemDelegate>
#include <QScrollArea>
#include <QTabWidget>
#include <QTimer>
#include <QTreeView>

#include <algorithm>
#include <memory>
#include <utility>

#include "models/locks_model.hpp"

namespace lockscope {

namespace {

// The side panel's width on a first start: enough for the session's fields, the rest is the list.
constexpr int kSidePanelWidth = 330;

// Elides at the end: an application name's start says what it is ("billing-worker-…").
class ElideEndDelegate : public QStyledItemDelegate {
public:
    using QStyledItemDelegate::QStyledItemDelegate;

protected:
    void initStyleOption(QStyleOptionViewItem* option, const QModelIndex& index) const override {
        QStyledItemDelegate::initStyleOption(option, index);
        option->textElideMode = Qt::ElideRight;
    }
};

// Gives the side panel its default width the first time the splitter is laid out at its real
// width (before that, sizes are relative to a width it does not have yet), then leaves.
class FirstWidth : public QObject {
public:
    using QObject::QObject;

    bool eventFilter(QObject* watched, QEvent* event) override {
        auto* split = qobject_cast<QSplitter*>(watched);
        if (split && event->type() == QEvent::Resize && split->isVisible()) {
            // After the splitter's own resizeEvent, which would spread the new width by the old sizes.
            QTimer::singleShot(0, split, [split] {
                const int width = split->width();
                const int side = std::min(kSidePanelWidth, width / 3);
                split->setSizes({width - side, side});
            });
            split->removeEventFilter(this);
            deleteLater();
        }
        return false;
    }
};

struct ColumnWidth {
    int column;
    int initial;  // before any row arrived
    int min;
    int max;
};

// Sum of the initial widths 1,095 px: every column is in view at 1440 px beside the side panel.
// Holders and Held for fit a waiter's "blocked by 12345" and "waiting 12.3 s" at their minimum.
constexpr ColumnWidth kWidths[] = {
    {LocksModel::Name, 205, 140, 360},    {LocksModel::Waiters, 70, 60, 90},      {LocksModel::Key, 140, 90, 170},
    {LocksModel::Mode, 75, 60, 90},       {LocksModel::Holders, 115, 115, 170},     {LocksModel::State, 115, 80, 170},
    {LocksModel::Application, 130, 90, 220}, {LocksModel::User, 70, 50, 120},     {LocksModel::Client, 70, 50, 170},
    {LocksModel::HeldFor, 105, 105, 170},
};

void fitColumns(QTreeView& view) {
    QHeaderView* header = view.header();
    const QAbstractItemView& asView = view;  // QTreeView makes its override protected
    int total = 0;
    for (const ColumnWidth& w : kWidths) {
        const int content = std::max(asView.sizeHintForColumn(w.column), header->sectionSizeHint(w.column));
        header->resizeSection(w.column, std::clamp(content, w.min, w.max));
        total += header->sectionSize(w.column);
    }
    // Every column in view beats a wide one: long text gives way first (it is elided, and its
    // tooltip or the session panel has all of it), Held for and Waiters never scroll away.
    int over = total - view.viewport()->width();
    for (const int column : {LocksModel::Application, LocksModel::Name, LocksModel::Client, LocksModel::State}) {
        if (over <= 0) break;
        const auto it = std::find_if(std::begin(kWidths), std::end(kWidths), [column](const ColumnWidth& w) { return w.column == column; });
        const int give = std::min(over, header->sectionSize(column) - it->min);
        if (give <= 0) continue;
        header->resizeSection(column, header->sectionSize(column) - give);
        over -= give;
    }
}

}  // namespace

void setUpLocksColumns(QTreeView& view) {
    QHeaderView* header = view.header();
    header->setSectionResizeMode(QHeaderView::Interactive);
    header->setMinimumSectionSize(40);
    for (const ColumnWidth& w : kWidths) header->resizeSection(w.column, w.initial);
    // The number of waiters is what an operator looks for first: next to the name.
    header->moveSection(header->visualIndex(LocksModel::Waiters), 1);
    view.setItemDelegateForColumn(LocksModel::Application, new ElideEndDelegate(&view));

    // Fitted once, to the first rows: later polls never undo what the operator resized.
    auto fitted = std::make_shared<QMetaObject::Connection>();
    *fitted = QObject::connect(view.model(), &QAbstractItemModel::rowsInserted, &view, [&view, fitted](const QModelIndex& parent) {
        if (parent.isValid()) return;
        QObject::disconnect(*fitted);
        // After the insert has been laid out: sizeHintForColumn looks at the rows in view.
        QTimer::singleShot(0, &view, [&view] { fitColumns(view); });
    });

    // Waiters and Held for: the first click sorts the biggest first, which is what is looked for.
    auto previous = std::make_shared<int>(header->sortIndicatorSection());
    QObject::connect(header, &QHeaderView::sortIndicatorChanged, &view, [&view, previous](int column, Qt::SortOrder order) {
        const int before = std::exchange(*previous, column);
        const bool biggestFirst = column == LocksModel::Waiters || column == LocksModel::HeldFor;
        if (biggestFirst && before != column && order == Qt::AscendingOrder) view.sortByColumn(column, Qt::DescendingOrder);
    });
}

void setUpSidePanelSplitter(QSplitter& split, const QString& settingsKey) {
    split.setStretchFactor(0, 1);
    split.setStretchFactor(1, 0);  // a wider window widens the list, not the side panel
    split.setCollapsible(0, false);
    split.setCollapsible(1, true);
    const QByteArray saved = QSettings().value(settingsKey).toByteArray();
    if (saved.isEmpty() || !split.restoreState(saved)) split.installEventFilter(new FirstWidth(&split));
    QObject::connect(&split, &QSplitter::splitterMoved, &split,
                     [&split, settingsKey] { QSettings().setValue(settingsKey, split.saveState()); });
}

void addSidePanel(QTabWidget& tabs, QWidget* panel, const QString& label) {
    auto* scroll = new QScrollArea(&tabs);
    scroll->setObjectName(panel->objectName() + QStringLiteral("Scroll"));
    scroll->setFrameShape(QFrame::NoFrame);
    scroll->setWidgetResizable(true);  // as wide as the panel allows, scrolled below its minimum
    scroll->setWidget(panel);
    tabs.addTab(scroll, label);
}

void showSidePanel(QTabWidget& tabs, QWidget* panel) {
    for (int i = 0; i < tabs.count(); ++i) {
        auto* scroll = qobject_cast<QScrollArea*>(tabs.widget(i));
        if (tabs.widget(i) == panel || (scroll && scroll->widget() == panel)) tabs.setCurrentIndex(i);
    }
}

}  // namespace lockscope
