#include "charts/timeline_bars_item.hpp"
#include "models/plain_text.hpp"

#include <QChart>
#include <QDateTime>
#include <QGraphicsSceneHoverEvent>
#include <QPainter>
#include <QToolTip>

#include <algorithm>
#include <array>
#include <cmath>

#include "charts/hold_histogram_math.hpp"
#include "theme/app_palette.hpp"

namespace lockscope::charts {

namespace {

// Bars thinner than this would vanish: a 50 ms hold in a 24 h window is far below a pixel.
constexpr double kMinBarWidth = 2.0;
constexpr double kMaxBarHeight = 16.0;
constexpr double kHitSlop = 3.0;  // pixels either side of a bar that still hover it

enum Paint { Exclusive, Shared, OpenExclusive, OpenShared, PaintCount };

// Per paint, not once: the theme can change while the chart is open.
std::array<QColor, PaintCount> colours() {
    using theme::ChartInk;
    return {theme::chartInk(ChartInk::exclusive), theme::chartInk(ChartInk::shared), theme::chartInk(ChartInk::heldExclusive),
            theme::chartInk(ChartInk::heldShared)};
}

Paint paintOf(const TimelineModel::Bar& bar) {
    if (bar.open) return bar.shared ? OpenShared : OpenExclusive;
    return bar.shared ? Shared : Exclusive;
}

}  // namespace

TimelineBarsItem::TimelineBarsItem(const TimelineModel* model, QChart* chart)
    : QGraphicsItem(chart), model_(model), chart_(chart) {
    setAcceptHoverEvents(true);
    setZValue(10);  // above the grid, below the legend and axes labels (which live outside the plot)
    setFlag(ItemClipsToShape);
}

void TimelineBarsItem::setLayout(Layout layout) {
    prepareGeometryChange();  // the plot area may have moved with new axis labels
    layout_ = std::move(layout);
    update();
}

QRectF TimelineBarsItem::boundingRect() const { return chart_->plotArea(); }

double TimelineBarsItem::xOf(double t, const QRectF& plot) const {
    const double span = std::max(1e-9, layout_.t1 - layout_.t0);
    return plot.left() + (t - layout_.t0) / span * plot.width();
}

QRectF TimelineBarsItem::band(int slot, const QRectF& plot) const {
    const double h = plot.height() / std::max(1, layout_.bandCount);
    return {plot.left(), plot.top() + slot * h, plot.width(), h};
}

void TimelineBarsItem::paint(QPainter* painter, const QStyleOptionGraphicsItem*, QWidget*) {
    const QRectF plot = chart_->plotArea();
    if (plot.isEmpty()) return;
    painter->save();
    painter->setClipRect(plot);
    painter->setPen(Qt::NoPen);
    std::array<QList<QRectF>, PaintCount> rects;
    const QColor stripe = theme::laneStripe();
    const double t0 = layout_.t0, t1 = layout_.t1;
    for (std::size_t slot = 0; slot < layout_.lanes.size(); ++slot) {
        const QRectF b = band(static_cast<int>(slot), plot);
        if (slot % 2 == 1) painter->fillRect(b, stripe);  // zebra lanes: easier to follow a row
        const int row = model_->rowOfLane(layout_.lanes[slot]);
        if (row < 0) continue;
        const TimelineModel::Lane& lane = model_->laneAt(row);
        const double h = std::min(kMaxBarHeight, b.height() * 0.7);
        const double top = b.center().y() - h / 2;
        // Per colour, the rectangle being grown: bars that touch it on screen are merged into it.
        std::array<QRectF, PaintCount> growing;
        for (std::size_t i = 0, n = lane.barCount(); i < n; ++i) {
            const TimelineModel::Bar& bar = lane.barAt(i);
            const double end = model_->endOf(bar);
            if (end < t0 || bar.start > t1) continue;
            double x0 = xOf(std::max(bar.start, t0), plot);
            double x1 = std::max(xOf(std::min(end, t1), plot), x0 + kMinBarWidth);
            QRectF& g = growing[paintOf(bar)];
            if (!g.isNull() && x0 <= g.right() + 0.5 && x1 >= g.left() - 0.5) {
                g.setLeft(std::min(g.left(), x0));
                g.setRight(std::max(g.right(), x1));
                continue;
            }
            if (!g.isNull()) rects[paintOf(bar)].append(g);
            g = QRectF(QPointF(x0, top), QPointF(x1, top + h));
        }
        for (int p = 0; p < PaintCount; ++p)
            if (!growing[p].isNull()) rects[p].append(growing[p]);
    }
    lastRectCount_ = 0;
    const auto inks = colours();
    for (int p = 0; p < PaintCount; ++p) {
        if (rects[p].isEmpty()) continue;
        painter->setBrush(inks[static_cast<std::size_t>(p)]);
        painter->drawRects(rects[p].constData(), static_cast<int>(rects[p].size()));
        lastRectCount_ += static_cast<int>(rects[p].size());
    }
    painter->restore();
}

const TimelineModel::Bar* TimelineBarsItem::barAt(const QPointF& pos, const TimelineModel::Lane** laneOut) const {
    const QRectF plot = chart_->plotArea();
    if (!plot.contains(pos) || layout_.bandCount <= 0) return nullptr;
    const auto slot = static_cast<std::size_t>((pos.y() - plot.top()) / (plot.height() / layout_.bandCount));
    if (slot >= layout_.lanes.size()) return nullptr;
    const int row = model_->rowOfLane(layout_.lanes[slot]);
    if (row < 0) return nullptr;
    const TimelineModel::Lane& lane = model_->laneAt(row);
    const TimelineModel::Bar* best = nullptr;
    double bestDistance = 0;
    for (std::size_t i = 0, n = lane.barCount(); i < n; ++i) {
        const TimelineModel::Bar& bar = lane.barAt(i);
        const double x0 = xOf(std::max(bar.start, layout_.t0), plot);
        const double x1 = std::max(xOf(std::min(model_->endOf(bar), layout_.t1), plot), x0 + kMinBarWidth);
        if (pos.x() < x0 - kHitSlop || pos.x() > x1 + kHitSlop) continue;
        // Inside a bar beats near one; among near ones, the closest.
        const double distance = pos.x() < x0 ? x0 - pos.x() : pos.x() > x1 ? pos.x() - x1 : -1.0 / (x1 - x0 + 1);
        if (!best || distance < bestDistance) {
            best = &bar;
            bestDistance = distance;
        }
    }
    if (best && laneOut) *laneOut = &lane;
    return best;
}

QString TimelineBarsItem::toolTipAt(const QPointF& pos) const {
    const TimelineModel::Lane* lane = nullptr;
    const TimelineModel::Bar* bar = barAt(pos, &lane);
    if (!bar) return {};
    const auto start = QDateTime::fromMSecsSinceEpoch(static_cast<qint64>(std::llround(bar->start * 1000.0)));
    const QString held = formatSeconds(model_->endOf(*bar) - bar->start);
    return QObject::tr("%1\npid %2 · %3 · user %4 · %5\nstarted %6 · %7")
        .arg(lane->label)
        .arg(bar->pid)
        .arg(bar->application.isEmpty() ? QObject::tr("(no application name)") : bar->application)
        .arg(bar->user.isEmpty() ? QStringLiteral("?") : bar->user)
        .arg(bar->shared ? QObject::tr("shared") : QObject::tr("exclusive"))
        .arg(start.toString(QStringLiteral("yyyy-MM-dd HH:mm:ss")))
        .arg(bar->open ? QObject::tr("held for %1 so far").arg(held) : QObject::tr("held %1").arg(held));
}

void TimelineBarsItem::hoverMoveEvent(QGraphicsSceneHoverEvent* event) {
    const QString text = toolTipAt(event->pos());
    if (text.isEmpty()) QToolTip::hideText();
    else QToolTip::showText(event->screenPos(), plainToolTip(text));  // names, application, user: never HTML
}

void TimelineBarsItem::hoverLeaveEvent(QGraphicsSceneHoverEvent*) { QToolTip::hideText(); }

}  // namespace lockscope::charts
