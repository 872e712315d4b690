#include "charts/charts_panel.hpp"

#include <QTabWidget>
#include <QVBoxLayout>

namespace lockscope::charts {

ChartsPanel::ChartsPanel(QWidget* parent) : ChartsPanel(*new ChartModels, parent) { models_->setParent(this); }

ChartsPanel::ChartsPanel(ChartModels& models, QWidget* parent)
    : QWidget(parent),
      models_(&models),
      timelineChart_(new TimelineChart(models.timelineModel())),
      histogramChart_(new HoldHistogramChart(models.holdStatsModel())),
      tabs_(new QTabWidget(this)) {
    setObjectName(QStringLiteral("chartsPanel"));
    tabs_->addTab(timelineChart_, tr("Timeline"));
    tabs_->addTab(histogramChart_, tr("Hold durations"));
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(tabs_);
}

}  // namespace lockscope::charts
