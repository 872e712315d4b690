// What the applications' /metrics pages say per lock name: one row per (endpoint, lock name)
// with acquire rates by outcome between the last two scrapes, hold-duration quantiles estimated
// from the histogram buckets (as PromQL's histogram_quantile would), and total holds.
//
// Each scrape is merged incrementally (insert / remove / dataChanged for the rows of that
// endpoint only), so selection and scroll survive scrapes. The per-name histograms summed over
// endpoints are offered to the charts through histograms().
#pragma once

#include <QAbstractTableModel>
#include <QHash>
#include <QPointer>
#include <QUrl>

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "metrics/scrape_types.hpp"

namespace lockscope {

class MetricsScraper;

class MetricsModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column {
        EndpointColumn,
        NameColumn,
        AcquiredRateColumn,   // acquires/s with outcome "acquired"
        ContendedRateColumn,  // ... "contended"
        ErrorRateColumn,      // ... "error"
        HoldsColumn,          // lock_hold_duration_seconds_count
        HoldP50Column,
        HoldP90Column,
        HoldP99Column,
        ColumnCount
    };
    enum Role {
        RawNameRole = Qt::UserRole + 1,  // QByteArray: the name's bytes, unaltered
        EndpointRole,                    // QUrl
        SortRole,                        // double for numbers (NaN: none yet), QString otherwise
    };

    struct Row {
        QUrl endpoint;
        std::string name;
        std::optional<double> acquiredRate, contendedRate, errorRate;  // none before two scrapes
        double acquired = 0, contended = 0, errors = 0;               // totals since the process began
        double holds = 0;
        double p50, p90, p99;  // seconds; NaN without observations
        bool stale = false;    // the endpoint's last scrape failed: these numbers are old

        // Equal when a redraw would show nothing new (NaN quantiles compare equal here).
        bool sameAs(const Row& other) const;
    };

    // Follows the scraper when given one (scraped -> applyScrape, endpoint removed -> rows gone).
    explicit MetricsModel(MetricsScraper* scraper = nullptr, QObject* parent = nullptr);

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

    const Row& row(int index) const { return rows_.at(std::size_t(index)); }
    int rowOf(const QUrl& endpoint, const std::string& name) const;  // -1: none

    // Merges one good scrape of an endpoint; rates are taken against its previous scrape.
    void applyScrape(const QUrl& endpoint, const EndpointScrape& scrape);
    void removeEndpoint(const QUrl& endpoint);
    void setEndpointStale(const QUrl& endpoint, bool stale);

    // Per lock name, the hold histogram summed over every endpoint's last good scrape.
    std::map<std::string, ScrapedHistogram> histograms() const;

    // How a lock name is shown: as every view shows a name (names::printable), so that a name with
    // a newline still fits one table cell, a bidi override is not obeyed, and no name can pass for
    // another.
    static QString displayName(const std::string& name);

signals:
    void histogramsChanged();

private:
    Row makeRow(const QUrl& endpoint, const std::string& name, const pglock::exposition::LockSeries& series,
                const EndpointScrape* previous, std::int64_t nowMs) const;
    void emitRowChanged(int row);

    QPointer<MetricsScraper> scraper_;
    std::vector<Row> rows_;
    QHash<QUrl, EndpointScrape> latest_;  // last good scrape per endpoint
};

}  // namespace lockscope
