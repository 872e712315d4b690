#include "metrics/metrics_model.hpp"
#include "models/plain_text.hpp"

#include <QBrush>
#include <QColor>

#include <cmath>
#include <limits>
#include <set>

#include "metrics/metrics_scraper.hpp"
#include "pglock/observe.hpp"
#include "stores/name_import.hpp"

namespace lockscope {

namespace ex = pglock::exposition;

namespace {

constexpr double nan = std::numeric_limits<double>::quiet_NaN();

// The outcome label values the library emits, in the order of the columns.
const std::string& outcomeName(pglock::Outcome outcome) {
    static const std::string acquired(pglock::outcome_string(pglock::Outcome::acquired));
    static const std::string contended(pglock::outcome_string(pglock::Outcome::contended));
    static const std::string error(pglock::outcome_string(pglock::Outcome::error));
    switch (outcome) {
        case pglock::Outcome::acquired: return acquired;
        case pglock::Outcome::contended: return contended;
        case pglock::Outcome::error: return error;
    }
    return error;
}

QString formatRate(const std::optional<double>& rate) {
    if (!rate) return QStringLiteral("–");
    return QStringLiteral("%1/s").arg(*rate, 0, 'f', *rate >= 100 ? 0 : 2);
}

QString formatSeconds(double seconds) {
    if (std::isnan(seconds)) return QStringLiteral("–");
    if (std::isinf(seconds)) return seconds > 0 ? QStringLiteral("+Inf") : QStringLiteral("-Inf");
    if (seconds < 1) return QStringLiteral("%1 ms").arg(seconds * 1000, 0, 'f', seconds < 0.01 ? 2 : 1);
    return QStringLiteral("%1 s").arg(seconds, 0, 'f', seconds < 100 ? 2 : 0);
}

double orNan(const std::optional<double>& value) { return value ? *value : nan; }

bool sameNumber(double a, double b) { return a == b || (std::isnan(a) && std::isnan(b)); }

// Cumulative count of one endpoint's histogram at a bound it may not have: the count of its
// largest bound below or at it. Exact when the applications share the library's buckets (they
// do), a lower estimate otherwise.
double cumulativeAt(const ex::Histogram& h, double bound) {
    double count = 0;
    for (const ex::Bucket& b : h.buckets) {
        if (b.upper_bound > bound) break;
        count = b.cumulative_count;
    }
    return count;
}

}  // namespace

MetricsModel::MetricsModel(MetricsScraper* scraper, QObject* parent) : QAbstractTableModel(parent), scraper_(scraper) {
    if (!scraper) return;
    connect(scraper, &MetricsScraper::scraped, this,
            [this](const QUrl& url) { applyScrape(url, scraper_->latestScrape(url)); });
    connect(scraper, &MetricsScraper::endpointRemoved, this, [this](const QUrl& url) { removeEndpoint(url); });
    connect(scraper, &MetricsScraper::statusChanged, this, [this](const QUrl& url) {
        setEndpointStale(url, scraper_->status(url).state == EndpointStatus::State::error);
    });
}

int MetricsModel::rowCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : int(rows_.size()); }

int MetricsModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : ColumnCount; }

QString MetricsModel::displayName(const std::string& name) {
    return names::printable(QByteArrayView(name.data(), static_cast<qsizetype>(name.size())));
}

QVariant MetricsModel::data(const QModelIndex& index, int role) const {
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid)) return {};
    const Row& r = rows_[std::size_t(index.row())];
    const int column = index.column();
    switch (role) {
        case RawNameRole: return QByteArray(r.name.data(), qsizetype(r.name.size()));
        case EndpointRole: return r.endpoint;
        case Qt::ForegroundRole:
            return r.stale ? QVariant(QBrush(QColor(Qt::gray))) : QVariant();
        case Qt::TextAlignmentRole:
            return column >= AcquiredRateColumn ? QVariant(int(Qt::AlignRight | Qt::AlignVCenter)) : QVariant();
        case Qt::ToolTipRole:
            if (column == NameColumn) return plainToolTip(displayName(r.name));  // a scraped label
            if (column >= AcquiredRateColumn && column <= ErrorRateColumn) {
                return tr("totals: %1 acquired, %2 contended, %3 errors").arg(r.acquired).arg(r.contended).arg(r.errors);
            }
            if (r.stale) return tr("the last scrape of this endpoint failed: these numbers are old");
            return {};
        case Qt::DisplayRole:
        case SortRole:
            break;
        default: return {};
    }
    const bool display = role == Qt::DisplayRole;
    switch (column) {
        case EndpointColumn: return r.endpoint.toDisplayString();
        case NameColumn: return displayName(r.name);
        case AcquiredRateColumn: return display ? QVariant(formatRate(r.acquiredRate)) : QVariant(orNan(r.acquiredRate));
        case ContendedRateColumn:
            return display ? QVariant(formatRate(r.contendedRate)) : QVariant(orNan(r.contendedRate));
        case ErrorRateColumn: return display ? QVariant(formatRate(r.errorRate)) : QVariant(orNan(r.errorRate));
        case HoldsColumn: return display ? QVariant(QString::number(r.holds, 'f', 0)) : QVariant(r.holds);
        case HoldP50Column: return display ? QVariant(formatSeconds(r.p50)) : QVariant(r.p50);
        case HoldP90Column: return display ? QVariant(formatSeconds(r.p90)) : QVariant(r.p90);
        case HoldP99Column: return display ? QVariant(formatSeconds(r.p99)) : QVariant(r.p99);
        default: return {};
    }
}

QVariant MetricsModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return {};
    switch (section) {
        case EndpointColumn: return tr("Endpoint");
        case NameColumn: return tr("Lock name");
        case AcquiredRateColumn: return tr("Acquired");
        case ContendedRateColumn: return tr("Contended");
        case ErrorRateColumn: return tr("Errors");
        case HoldsColumn: return tr("Holds");
        case HoldP50Column: return tr("Hold p50");
        case HoldP90Column: return tr("Hold p90");
        case HoldP99Column: return tr("Hold p99");
        default: return {};
    }
}

int MetricsModel::rowOf(const QUrl& endpoint, const std::string& name) const {
    for (std::size_t i = 0; i < rows_.size(); ++i) {
        if (rows_[i].endpoint == endpoint && rows_[i].name == name) return int(i);
    }
    return -1;
}

bool MetricsModel::Row::sameAs(const Row& o) const {
    return endpoint == o.endpoint && name == o.name && acquiredRate == o.acquiredRate &&
           contendedRate == o.contendedRate && errorRate == o.errorRate && sameNumber(acquired, o.acquired) &&
           sameNumber(contended, o.contended) && sameNumber(errors, o.errors) && sameNumber(holds, o.holds) && sameNumber(p50, o.p50) &&
           sameNumber(p90, o.p90) && sameNumber(p99, o.p99) && stale == o.stale;
}

MetricsModel::Row MetricsModel::makeRow(const QUrl& endpoint, const std::string& name, const ex::LockSeries& series,
                                        const EndpointScrape* previous, std::int64_t nowMs) const {
    Row r;
    r.endpoint = endpoint;
    r.name = name;
    r.acquired = series.acquires_of(outcomeName(pglock::Outcome::acquired));
    r.contended = series.acquires_of(outcomeName(pglock::Outcome::contended));
    r.errors = series.acquires_of(outcomeName(pglock::Outcome::error));
    r.holds = series.hold.count;
    r.p50 = ex::histogram_quantile(0.5, series.hold.buckets);
    r.p90 = ex::histogram_quantile(0.9, series.hold.buckets);
    r.p99 = ex::histogram_quantile(0.99, series.hold.buckets);
    if (previous && previous->data) {
        const auto it = previous->data->locks.find(name);
        if (it != previous->data->locks.end()) {
            const double seconds = double(nowMs - previous->steadyMs) / 1000.0;
            auto rate = [&](pglock::Outcome o) {
                return ex::counter_rate(it->second.acquires_of(outcomeName(o)), series.acquires_of(outcomeName(o)),
                                        seconds);
            };
            r.acquiredRate = rate(pglock::Outcome::acquired);
            r.contendedRate = rate(pglock::Outcome::contended);
            r.errorRate = rate(pglock::Outcome::error);
        }
    }
    return r;
}

void MetricsModel::applyScrape(const QUrl& endpoint, const EndpointScrape& scrape) {
    if (!scrape.data) return;
    const auto& locks = scrape.data->locks;
    const auto previousIt = latest_.constFind(endpoint);
    const EndpointScrape* previous = previousIt == latest_.cend() ? nullptr : &previousIt.value();

    // 1. Rows of names this endpoint no longer reports, in runs from the bottom up.
    for (int i = int(rows_.size()) - 1; i >= 0;) {
        auto gone = [&](int row) {
            const Row& r = rows_[std::size_t(row)];
            return r.endpoint == endpoint && !locks.contains(r.name);
        };
        if (!gone(i)) {
            --i;
            continue;
        }
        int first = i;
        while (first > 0 && gone(first - 1)) --first;
        beginRemoveRows({}, first, i);
        rows_.erase(rows_.begin() + first, rows_.begin() + i + 1);
        endRemoveRows();
        i = first - 1;
    }

    // 2. Names already shown: update in place.
    std::set<std::string, std::less<>> shown;
    for (std::size_t i = 0; i < rows_.size(); ++i) {
        Row& r = rows_[i];
        if (r.endpoint != endpoint) continue;
        shown.insert(r.name);
        Row updated = makeRow(endpoint, r.name, locks.find(r.name)->second, previous, scrape.steadyMs);
        if (updated.sameAs(r)) continue;
        r = std::move(updated);
        emitRowChanged(int(i));
    }

    // 3. New names, appended in one insertion.
    std::vector<Row> added;
    for (const auto& [name, series] : locks) {
        if (!shown.contains(name)) added.push_back(makeRow(endpoint, name, series, previous, scrape.steadyMs));
    }
    if (!added.empty()) {
        const int first = int(rows_.size());
        beginInsertRows({}, first, first + int(added.size()) - 1);
        rows_.insert(rows_.end(), std::make_move_iterator(added.begin()), std::make_move_iterator(added.end()));
        endInsertRows();
    }

    latest_.insert(endpoint, scrape);
    emit histogramsChanged();
}

void MetricsModel::removeEndpoint(const QUrl& endpoint) {
    for (int i = int(rows_.size()) - 1; i >= 0; --i) {
        if (rows_[std::size_t(i)].endpoint != endpoint) continue;
        int first = i;
        while (first > 0 && rows_[std::size_t(first - 1)].endpoint == endpoint) --first;
        beginRemoveRows({}, first, i);
        rows_.erase(rows_.begin() + first, rows_.begin() + i + 1);
        endRemoveRows();
        i = first;
    }
    if (latest_.remove(endpoint) > 0) emit histogramsChanged();
}

void MetricsModel::setEndpointStale(const QUrl& endpoint, bool stale) {
    for (std::size_t i = 0; i < rows_.size(); ++i) {
        Row& r = rows_[i];
        if (r.endpoint != endpoint || r.stale == stale) continue;
        r.stale = stale;
        emitRowChanged(int(i));
    }
}

void MetricsModel::emitRowChanged(int row) { emit dataChanged(index(row, 0), index(row, ColumnCount - 1)); }

std::map<std::string, ScrapedHistogram> MetricsModel::histograms() const {
    // Every bound any endpoint reports for the name, then each endpoint's count at each bound.
    std::map<std::string, std::set<double>> bounds;
    for (const EndpointScrape& scrape : latest_) {
        for (const auto& [name, series] : scrape.data->locks) {
            if (!series.has_hold) continue;
            auto& set = bounds[name];
            for (const ex::Bucket& b : series.hold.buckets) set.insert(b.upper_bound);
        }
    }
    std::map<std::string, ScrapedHistogram> out;
    for (const auto& [name, set] : bounds) {
        ScrapedHistogram& h = out[name];
        h.upper_bounds.assign(set.begin(), set.end());
        h.cumulative.assign(h.upper_bounds.size(), 0.0);
        for (const EndpointScrape& scrape : latest_) {
            const auto it = scrape.data->locks.find(name);
            if (it == scrape.data->locks.end() || !it->second.has_hold) continue;
            const ex::Histogram& source = it->second.hold;
            h.sum += source.sum;
            h.count += source.count;
            for (std::size_t i = 0; i < h.upper_bounds.size(); ++i) h.cumulative[i] += cumulativeAt(source, h.upper_bounds[i]);
        }
    }
    return out;
}

}  // namespace lockscope
