#include "charts/chart_style.hpp"

#include <QAbstractAxis>
#include <QChart>
#include <QGuiApplication>
#include <QLegend>
#include <QPalette>

#include "theme/app_palette.hpp"

namespace lockscope::charts {

void applyPalette(QChart& chart) {
    const QPalette palette = QGuiApplication::palette();
    const QColor text = palette.color(QPalette::Text);
    chart.setBackgroundBrush(palette.color(QPalette::Base));
    chart.setBackgroundPen(Qt::NoPen);
    chart.setBackgroundRoundness(0);  // square: no corners of the view's own background
    chart.setPlotAreaBackgroundVisible(false);
    chart.setTitleBrush(text);
    chart.legend()->setLabelColor(text);
    for (QAbstractAxis* axis : chart.axes()) {
        axis->setLabelsBrush(text);
        axis->setTitleBrush(text);
        axis->setLinePenColor(theme::chartInk(theme::ChartInk::axisLine));
        axis->setGridLineColor(theme::chartInk(theme::ChartInk::grid));
        axis->setMinorGridLineColor(theme::chartInk(theme::ChartInk::grid));
    }
}

}  // namespace lockscope::charts
