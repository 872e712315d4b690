// The scraper's endpoints and how each is doing, one row each: a failing endpoint shows its
// error in red, so "no data" is never mistaken for "no locks".
#pragma once

#include <QAbstractTableModel>
#include <QList>
#include <QPointer>

#include "metrics/scrape_types.hpp"

namespace lockscope {

class ClaimsTracker;
class MetricsScraper;

class EndpointStatusModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column { UrlColumn, StateColumn, LastSuccessColumn, LocksColumn, SamplesColumn, FetchColumn, ClaimsColumn, ColumnCount };
    enum Role { UrlRole = Qt::UserRole + 1, StateRole };  // QUrl; int(EndpointStatus::State)

    explicit EndpointStatusModel(MetricsScraper* scraper, QObject* parent = nullptr);

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

    const EndpointStatus& status(int row) const { return rows_.at(row); }
    // The Believed-vs-held column: ghosts and leaks of each endpoint (empty without a tracker).
    void setClaimsTracker(ClaimsTracker* claims);

private:
    QPointer<MetricsScraper> scraper_;
    QPointer<ClaimsTracker> claims_;
    QList<EndpointStatus> rows_;  // mirrors the scraper's endpoint order
};

}  // namespace lockscope
