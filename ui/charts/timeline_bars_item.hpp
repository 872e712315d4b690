// The bars of the hold timeline, painted by one graphics item over the chart's plot area instead
// of one series per hold: a paint walks the visible lanes once, maps times to pixels linearly
// across the plot area (the x axis is linear in time), merges bars that fall on the same pixels
// and draws each colour with one drawRects call. Thousands of holds cost a few milliseconds.
// Hovering a bar shows its holder: PID, application, user, mode, start and duration.
#pragma once

#include <QGraphicsItem>

#include <vector>

#include "charts/timeline_model.hpp"

class QChart;

namespace lockscope::charts {

class TimelineBarsItem : public QGraphicsItem {
public:
    // What to show: lanes top to bottom, `bandCount` bands in the plot area, times [t0, t1] (server
    // epoch seconds). Lanes are named by LockId, not row, so a poll between layout and paint
    // cannot make a lane draw another's bars.
    struct Layout {
        std::vector<pglock::monitor::LockId> lanes;
        int bandCount = 1;
        double t0 = 0;
        double t1 = 1;
    };

    TimelineBarsItem(const TimelineModel* model, QChart* chart);

    void setLayout(Layout layout);
    const Layout& layout() const { return layout_; }
    // The tooltip text for a point in chart coordinates, empty over no bar.
    QString toolTipAt(const QPointF& pos) const;
    // Rectangles drawn by the last paint (after merging), for tests and diagnostics.
    int lastRectCount() const { return lastRectCount_; }

    QRectF boundingRect() const override;
    void paint(QPainter* painter, const QStyleOptionGraphicsItem* option, QWidget* widget) override;

protected:
    void hoverMoveEvent(QGraphicsSceneHoverEvent* event) override;
    void hoverLeaveEvent(QGraphicsSceneHoverEvent* event) override;

private:
    double xOf(double t, const QRectF& plot) const;
    QRectF band(int slot, const QRectF& plot) const;
    const TimelineModel::Bar* barAt(const QPointF& pos, const TimelineModel::Lane** lane) const;

    const TimelineModel* model_;
    QChart* chart_;
    Layout layout_;
    int lastRectCount_ = 0;
};

}  // namespace lockscope::charts
