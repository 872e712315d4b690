#include "metrics/endpoint_status_model.hpp"
#include "models/plain_text.hpp"

#include <QBrush>
#include <QColor>

#include "metrics/claims_tracker.hpp"
#include "metrics/metrics_scraper.hpp"

namespace lockscope {

namespace {

const QColor errorRed(0xb0, 0x00, 0x20);  // the same red as the app's other inline errors

}  // namespace

EndpointStatusModel::EndpointStatusModel(MetricsScraper* scraper, QObject* parent)
    : QAbstractTableModel(parent), scraper_(scraper), rows_(scraper->statuses()) {
    connect(scraper, &MetricsScraper::endpointAdded, this, [this](const QUrl& url, int index) {
        beginInsertRows({}, index, index);
        rows_.insert(index, scraper_->status(url));
        endInsertRows();
    });
    connect(scraper, &MetricsScraper::endpointRemoved, this, [this](const QUrl&, int index) {
        beginRemoveRows({}, index, index);
        rows_.removeAt(index);
        endRemoveRows();
    });
    connect(scraper, &MetricsScraper::statusChanged, this, [this](const QUrl& url, int index) {
        rows_[index] = scraper_->status(url);
        emit dataChanged(this->index(index, 0), this->index(index, ColumnCount - 1));
    });
}

void EndpointStatusModel::setClaimsTracker(ClaimsTracker* claims) {
    if (claims_) claims_->disconnect(this);
    claims_ = claims;
    if (claims_) {
        connect(claims_, &ClaimsTracker::changed, this, [this] {
            if (!rows_.isEmpty()) emit dataChanged(index(0, ClaimsColumn), index(int(rows_.size()) - 1, ClaimsColumn));
        });
    }
    if (!rows_.isEmpty()) emit dataChanged(index(0, ClaimsColumn), index(int(rows_.size()) - 1, ClaimsColumn));
}

int EndpointStatusModel::rowCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : int(rows_.size()); }

int EndpointStatusModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : ColumnCount; }

QVariant EndpointStatusModel::data(const QModelIndex& index, int role) const {
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid)) return {};
    const EndpointStatus& s = rows_[index.row()];
    const bool failing = s.state == EndpointStatus::State::error;
    if (index.column() == ClaimsColumn && !failing) {
        // What the endpoint claims against what the server holds: red when they disagree.
        const QString details = claims_ ? claims_->details(s.url) : QString();
        switch (role) {
            case Qt::DisplayRole: return claims_ ? claims_->summary(s.url) : QString();
            case Qt::ToolTipRole:
                return details.isEmpty() ? QVariant(tr("Locks this application claims (lock_held_info) against "
                                                       "the locks its backends hold on the server"))
                                         : QVariant(plainToolTip(details));
            case Qt::ForegroundRole: return details.isEmpty() ? QVariant() : QVariant(QBrush(errorRed));
            default: break;
        }
    }
    switch (role) {
        case UrlRole: return s.url;
        case StateRole: return int(s.state);
        case Qt::ForegroundRole: return failing ? QVariant(QBrush(errorRed)) : QVariant();
        case Qt::ToolTipRole: return failing ? QVariant(plainToolTip(s.error)) : QVariant();
        case Qt::DisplayRole: break;
        default: return {};
    }
    switch (index.column()) {
        case UrlColumn: return s.url.toDisplayString();
        case StateColumn:
            switch (s.state) {
                case EndpointStatus::State::pending: return tr("waiting for the first scrape");
                case EndpointStatus::State::ok: return tr("ok");
                case EndpointStatus::State::error: return tr("error: %1").arg(s.error);
            }
            return {};
        case LastSuccessColumn:
            return s.lastSuccess.isValid() ? s.lastSuccess.toString(QStringLiteral("HH:mm:ss")) : tr("never");
        case LocksColumn: return s.lastSuccess.isValid() ? QVariant(qlonglong(s.locks)) : QVariant();
        case SamplesColumn: return s.lastSuccess.isValid() ? QVariant(qlonglong(s.samples)) : QVariant();
        case FetchColumn: return s.lastSuccess.isValid() ? QVariant(tr("%1 ms").arg(s.durationMs)) : QVariant();
        default: return {};
    }
}

QVariant EndpointStatusModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return {};
    switch (section) {
        case UrlColumn: return tr("Endpoint");
        case StateColumn: return tr("Status");
        case LastSuccessColumn: return tr("Last success");
        case LocksColumn: return tr("Lock names");
        case SamplesColumn: return tr("Samples");
        case FetchColumn: return tr("Fetch + parse");
        case ClaimsColumn: return tr("Believed vs held");
        default: return {};
    }
}

}  // namespace lockscope
