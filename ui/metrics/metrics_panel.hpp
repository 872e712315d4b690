// The "Application metrics" panel: the scraped endpoints with their status (failures in red),
// the per-lock-name table, and controls to add/remove endpoints for this session and set the
// scrape interval. It only talks to the scraper and the models; nothing here blocks.
#pragma once

#include <QWidget>

class QLabel;
class QLineEdit;
class QPushButton;
class QSortFilterProxyModel;
class QSpinBox;
class QTableView;

namespace lockscope {

class EndpointStatusModel;
class MetricsModel;
class MetricsScraper;

class MetricsPanel : public QWidget {
    Q_OBJECT
public:
    MetricsPanel(MetricsScraper* scraper, MetricsModel* model, QWidget* parent = nullptr);

    QTableView* endpointsView() const { return endpointsView_; }
    QTableView* locksView() const { return locksView_; }
    EndpointStatusModel* statusModel() const { return statusModel_; }

    // Adds what the operator typed (as in the URL field); false and an inline message when invalid.
    bool addEndpointFromText(const QString& text);

private:
    void removeSelectedEndpoints();
    void updateSummary();

    MetricsScraper* scraper_;
    EndpointStatusModel* statusModel_;
    QSortFilterProxyModel* locksProxy_;
    QLineEdit* urlEdit_;
    QPushButton* addButton_;
    QPushButton* removeButton_;
    QSpinBox* intervalSeconds_;
    QPushButton* scrapeNowButton_;
    QLabel* inputError_;
    QLabel* summary_;
    QTableView* endpointsView_;
    QTableView* locksView_;
};

}  // namespace lockscope
