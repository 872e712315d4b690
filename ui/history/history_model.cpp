#include "history/history_model.hpp"
#include "models/plain_text.hpp"

#include <QDateTime>
#include <QFuture>
#include <QSet>
#include <QtConcurrent/QtConcurrentRun>

#include <utility>

#include "history/history_store.hpp"
#include "models/server_text.hpp"
#include "pglock/duration_text.hpp"
#include "pglock/resolve.hpp"
#include "stores/name_import.hpp"

namespace lockscope::history {
namespace {

using Identity = std::pair<int, qint64>;  // (kind, id): a row's identity across refreshes
Identity identityOf(const Record& r) { return {static_cast<int>(r.kind), r.id}; }

QString localTime(double epochSeconds) {
    return QDateTime::fromMSecsSinceEpoch(static_cast<qint64>(epochSeconds * 1000.0))
        .toString(QStringLiteral("yyyy-MM-dd HH:mm:ss.zzz"));
}

QString pidList(const QList<int>& pids) {
    QStringList parts;
    for (int pid : pids) parts << QString::number(pid);
    return parts.join(QStringLiteral(", "));
}

}  // namespace

HistoryModel::HistoryModel(QObject* parent) : QAbstractTableModel(parent), limit_(HistoryStore::kDefaultQueryLimit) {}

int HistoryModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : static_cast<int>(rows_.size());
}

int HistoryModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : columnCount_; }

QString HistoryModel::displayName(const Record& r) { return lockNameText(r.intPair, r.key, r.nameSource, r.name); }

QString HistoryModel::formatDuration(double seconds) { return QString::fromStdString(pglock::duration_text(seconds)); }

QVariant HistoryModel::data(const QModelIndex& index, int role) const {
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid)) return {};
    const Record& r = rows_[static_cast<std::size_t>(index.row())];
    // The tooltip repeats the cell, never as HTML: application and user are anybody's text.
    if (role == Qt::ToolTipRole) return plainToolTip(data(index, Qt::DisplayRole));
    if (role == Qt::DisplayRole) {
        switch (index.column()) {
        case kindColumn: return r.kind == Kind::hold ? QStringLiteral("hold") : QStringLiteral("wait");
        case nameColumn: return displayName(r);
        case keyColumn: return QString::number(r.key);
        case modeColumn: return r.shared ? QStringLiteral("shared") : QStringLiteral("exclusive");
        case pidColumn: return r.pid;
        // Stored as the server sent them (the CSV export keeps them so); shown by the rule.
        case applicationColumn: return serverText(r.application);
        case userColumn: return serverText(r.user);
        case startedColumn: return localTime(r.started);
        case endedColumn: return localTime(r.ended);
        case durationColumn: return formatDuration(r.duration());
        case waitedOnColumn: return pidList(r.waitedOn);
        default: return {};
        }
    }
    if (role == SortRole) {
        switch (index.column()) {
        case kindColumn: return static_cast<int>(r.kind);
        case nameColumn: return displayName(r);
        case keyColumn: return r.key;
        case modeColumn: return r.shared;
        case pidColumn: return r.pid;
        case applicationColumn: return r.application;
        case userColumn: return r.user;
        case startedColumn: return r.started;
        case endedColumn: return r.ended;
        case durationColumn: return r.duration();
        case waitedOnColumn: return r.waitedOn.isEmpty() ? 0 : r.waitedOn.first();
        default: return {};
        }
    }
    if (role == Qt::TextAlignmentRole) {
        switch (index.column()) {
        case keyColumn:
        case pidColumn:
        case durationColumn: return QVariant::fromValue(Qt::AlignRight | Qt::AlignVCenter);
        default: return {};
        }
    }
    return {};
}

QVariant HistoryModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return {};
    switch (section) {
    case kindColumn: return tr("Kind");
    case nameColumn: return tr("Name");
    case keyColumn: return tr("Key");
    case modeColumn: return tr("Mode");
    case pidColumn: return tr("PID");
    case applicationColumn: return tr("Application");
    case userColumn: return tr("User");
    case startedColumn: return tr("Started");
    case endedColumn: return tr("Ended");
    case durationColumn: return tr("Duration");
    case waitedOnColumn: return tr("Waited on");
    default: return {};
    }
}

void HistoryModel::setDatabasePath(const QString& path) {
    if (path == path_) {
        refresh();
        return;
    }
    // Row ids of another file are other rows: no merge across files.
    beginResetModel();
    rows_.clear();
    total_ = 0;
    error_.clear();
    endResetModel();
    path_ = path;
    ++serial_;  // whatever runs now belongs to the old file
    if (path_.isEmpty()) emit refreshed(0, 0, QString());
    else refresh();
}

void HistoryModel::setFilter(const Filter& filter) {
    filter_ = filter;
    ++serial_;
    refresh();
}

void HistoryModel::setWindow(std::optional<double> seconds) {
    window_ = seconds;
    ++serial_;
    refresh();
}

void HistoryModel::setLimit(int rows) {
    limit_ = std::max(1, rows);
    ++serial_;
    refresh();
}

Filter HistoryModel::effectiveFilter() const {
    Filter f = filter_;
    if (window_) {
        const double since = HistoryStore::currentTime() - *window_;
        f.since = f.since ? std::max(*f.since, since) : since;
    }
    return f;
}

void HistoryModel::refresh() {
    if (path_.isEmpty()) return;
    if (inFlight_) {
        pending_ = true;
        return;
    }
    startQuery();
}

void HistoryModel::startQuery() {
    inFlight_ = true;
    pending_ = false;
    const quint64 serial = serial_;
    QFuture<QueryResult> future = QtConcurrent::run([path = path_, filter = effectiveFilter(), limit = limit_] {
        const HistoryStore store(path, HistoryStore::Mode::readOnly);
        return store.query(filter, limit);
    });
    // The context object cancels the continuation when the model is gone first.
    future.then(this, [this, serial](QueryResult result) {
        inFlight_ = false;
        if (serial == serial_) apply(std::move(result));
        else pending_ = true;  // the filter or file changed meanwhile: ask again
        if (pending_) startQuery();
    });
}

void HistoryModel::apply(QueryResult result) {
    std::vector<Record>& next = result.rows;
    // Both lists are in the same order (newest end first) and rows never change once stored,
    // so the rows kept are a subsequence of both: remove what went, insert what came.
    QSet<Identity> incoming;
    incoming.reserve(static_cast<qsizetype>(next.size()));
    for (const Record& r : next) incoming.insert(identityOf(r));
    for (int row = static_cast<int>(rows_.size()) - 1; row >= 0;) {
        if (incoming.contains(identityOf(rows_[static_cast<std::size_t>(row)]))) {
            --row;
            continue;
        }
        int first = row;
        while (first > 0 && !incoming.contains(identityOf(rows_[static_cast<std::size_t>(first - 1)]))) --first;
        beginRemoveRows({}, first, row);
        rows_.erase(rows_.begin() + first, rows_.begin() + row + 1);
        endRemoveRows();
        row = first - 1;
    }
    std::size_t at = 0;
    for (std::size_t i = 0; i < next.size();) {
        if (at < rows_.size() && identityOf(rows_[at]) == identityOf(next[i])) {
            ++at;
            ++i;
            continue;
        }
        std::size_t end = i;
        while (end < next.size() && !(at < rows_.size() && identityOf(rows_[at]) == identityOf(next[end]))) ++end;
        const int first = static_cast<int>(at);
        beginInsertRows({}, first, first + static_cast<int>(end - i) - 1);
        rows_.insert(rows_.begin() + static_cast<std::ptrdiff_t>(at), std::make_move_iterator(next.begin() + static_cast<std::ptrdiff_t>(i)),
                     std::make_move_iterator(next.begin() + static_cast<std::ptrdiff_t>(end)));
        endInsertRows();
        at += end - i;
        i = end;
    }
    Q_ASSERT(rows_.size() == next.size());
    total_ = result.total;
    error_ = result.error;
    emit refreshed(static_cast<int>(rows_.size()), total_, error_);
}

void HistoryModel::exportCsv(const QString& path) {
    if (path_.isEmpty()) {
        emit exportFinished(path, -1, tr("no history file is open"));
        return;
    }
    QFuture<std::pair<qint64, QString>> future =
        QtConcurrent::run([source = path_, filter = effectiveFilter(), path] {
            const HistoryStore store(source, HistoryStore::Mode::readOnly);
            const qint64 rows = store.exportCsvFile(filter, path);
            return std::pair(rows, rows < 0 ? store.errorString() : QString());
        });
    future.then(this, [this, path](std::pair<qint64, QString> done) { emit exportFinished(path, done.first, done.second); });
}

}  // namespace lockscope::history
