#include "fleet/fleet_panel.hpp"

#include <QHeaderView>
#include <QLabel>
#include <QPainter>
#include <QPainterPath>
#include <QSortFilterProxyModel>
#include <QStyledItemDelegate>
#include <QTableView>
#include <QVBoxLayout>

#include <algorithm>

#include "fleet/fleet_model.hpp"
#include "theme/app_palette.hpp"

namespace lockscope {

namespace {

// Every cell: an unreachable server's row in the error colour (its numbers are as of the last
// good poll); the Trend column: the waiters of the last polls as a line, scaled to the row's own
// peak (written beside it), so a server with 1 waiter and one with 50 both show their shape.
class FleetDelegate : public QStyledItemDelegate {
public:
    using QStyledItemDelegate::QStyledItemDelegate;

    void initStyleOption(QStyleOptionViewItem* option, const QModelIndex& index) const override {
        QStyledItemDelegate::initStyleOption(option, index);
        if (index.data(FleetModel::UnreachableRole).toBool())
            option->palette.setColor(QPalette::Text, theme::errorText());
    }

    void paint(QPainter* painter, const QStyleOptionViewItem& option, const QModelIndex& index) const override {
        QStyledItemDelegate::paint(painter, option, index);  // background, selection
        if (index.column() != FleetModel::Trend) return;
        const QList<int> values = index.data(FleetModel::WaitersHistoryRole).value<QList<int>>();
        if (values.isEmpty()) return;
        const int peak = std::max(1, *std::max_element(values.begin(), values.end()));
        const QString peakText = QString::number(*std::max_element(values.begin(), values.end()));
        const QRect area = option.rect.adjusted(4, 4, -4 - option.fontMetrics.horizontalAdvance(QStringLiteral("0000")), -4);
        if (area.width() < 8 || area.height() < 4) return;
        const double step = static_cast<double>(area.width()) / (FleetModel::kHistoryLength - 1);
        const double x0 = area.right() - step * static_cast<double>(values.size() - 1);  // newest at the right edge
        QPainterPath line;
        for (qsizetype i = 0; i < values.size(); ++i) {
            const QPointF p(x0 + step * static_cast<double>(i),
                            area.bottom() - static_cast<double>(values[i]) / peak * area.height());
            if (i == 0) line.moveTo(p);
            else line.lineTo(p);
        }
        painter->save();
        painter->setRenderHint(QPainter::Antialiasing);
        painter->setPen(QPen(theme::chartInk(theme::ChartInk::waiters), 1.5));
        painter->drawPath(line);
        painter->setPen(option.state & QStyle::State_Selected ? option.palette.color(QPalette::HighlightedText)
                                                              : option.palette.color(QPalette::Text));
        painter->drawText(option.rect.adjusted(0, 0, -4, 0), Qt::AlignRight | Qt::AlignVCenter, peakText);
        painter->restore();
    }
};

}  // namespace

FleetPanel::FleetPanel(FleetModel& model, QWidget* parent) : QWidget(parent), model_(model) {
    proxy_ = new QSortFilterProxyModel(this);
    proxy_->setSourceModel(&model_);
    proxy_->setSortRole(FleetModel::SortRole);
    proxy_->setDynamicSortFilter(true);  // a server that gets worse moves up as it happens

    view_ = new QTableView(this);
    view_->setObjectName(QStringLiteral("fleetView"));
    view_->setModel(proxy_);
    view_->setItemDelegate(new FleetDelegate(view_));
    view_->setSortingEnabled(true);
    view_->setSelectionBehavior(QAbstractItemView::SelectRows);
    view_->setSelectionMode(QAbstractItemView::SingleSelection);
    view_->setAlternatingRowColors(true);
    view_->setWordWrap(false);
    view_->setTextElideMode(Qt::ElideMiddle);
    view_->verticalHeader()->hide();
    // The numbers fit their contents (a few dozen rows: cheap); the sparkline a fixed width, and
    // the longest wait (with the lock's name) the rest.
    QHeaderView* header = view_->horizontalHeader();
    header->setSectionResizeMode(QHeaderView::ResizeToContents);
    header->setStretchLastSection(false);
    // Labels and socket paths can be long: they get a fixed share and are elided in the middle.
    const int em = fontMetrics().horizontalAdvance(QLatin1Char('M'));
    header->setSectionResizeMode(FleetModel::Server, QHeaderView::Interactive);
    view_->setColumnWidth(FleetModel::Server, 20 * em);
    header->setSectionResizeMode(FleetModel::Address, QHeaderView::Interactive);
    view_->setColumnWidth(FleetModel::Address, 12 * em);
    header->setSectionResizeMode(FleetModel::LongestWait, QHeaderView::Stretch);
    header->setSectionResizeMode(FleetModel::Trend, QHeaderView::Fixed);
    view_->setColumnWidth(FleetModel::Trend, 16 * em);
    view_->setAccessibleName(tr("Fleet"));
    view_->setAccessibleDescription(tr("Every server this window watches, the worst first"));
    sortWorstFirst();

    connect(view_, &QTableView::activated, this, [this](const QModelIndex& index) {
        if (ServerSession* s = model_.session(proxy_->mapToSource(index).row())) emit serverActivated(s);
    });

    auto* hint = new QLabel(tr("Worst first: servers that cannot be polled, then the longest wait, then the most waiters. "
                               "Double-click a server for its locks."),
                            this);
    hint->setWordWrap(true);
    auto* column = new QVBoxLayout(this);
    column->setContentsMargins(4, 4, 4, 4);
    column->addWidget(hint);
    column->addWidget(view_, 1);
}

void FleetPanel::sortWorstFirst() { view_->sortByColumn(FleetModel::Server, Qt::AscendingOrder); }

}  // namespace lockscope
