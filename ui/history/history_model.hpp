// The history tab's rows: the newest matching holds and waits of a history file, queried off the
// GUI thread (QtConcurrent, a read-only connection of its own), stale answers dropped. A refresh
// merges the new answer into the rows (beginInsertRows/beginRemoveRows by row identity), so the
// selection and the scroll position survive the refreshes that follow every recorded poll.
#pragma once

#include <QAbstractTableModel>
#include <QString>

#include <optional>
#include <vector>

#include "history/history_record.hpp"

namespace lockscope::history {

class HistoryModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column {
        kindColumn,
        nameColumn,
        keyColumn,
        modeColumn,
        pidColumn,
        applicationColumn,
        userColumn,
        startedColumn,
        endedColumn,
        durationColumn,
        waitedOnColumn,
        columnCount_,
    };
    // The raw value of a cell (numbers as numbers, times as epoch seconds), for sorting.
    static constexpr int SortRole = Qt::UserRole + 1;

    explicit HistoryModel(QObject* parent = nullptr);

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

    // The file to show (empty: none). Refreshes.
    void setDatabasePath(const QString& path);
    QString databasePath() const { return path_; }
    // What to show; `since` of the filter is narrowed by the window (e.g. the last hour, counted
    // from each refresh). Each refreshes.
    void setFilter(const Filter& filter);
    Filter filter() const { return filter_; }
    void setWindow(std::optional<double> seconds);
    void setLimit(int rows);  // the newest `rows` are shown (default 10,000)
    int limit() const { return limit_; }

    // Runs the query again (e.g. after new rows were recorded). Calls while a query runs are
    // coalesced into one more query after it.
    void refresh();

    const Record& record(int row) const { return rows_.at(static_cast<std::size_t>(row)); }
    qint64 totalCount() const { return total_; }  // rows that matched, shown or not
    QString errorString() const { return error_; }
    bool isRefreshing() const { return inFlight_; }

    // Writes every row matching the current filter and window (not only the shown ones) to
    // `path` as CSV, off the GUI thread; exportFinished() follows.
    void exportCsv(const QString& path);

    // How a row's lock is shown: as every other view showed it (lockNameText(), lock_naming.hpp).
    static QString displayName(const Record& r);
    // pglock::duration_text, the style of the locks view and the CLI.
    static QString formatDuration(double seconds);

signals:
    void refreshed(int shown, qint64 total, const QString& error);
    void exportFinished(const QString& path, qint64 rows, const QString& error);

private:
    Filter effectiveFilter() const;
    void startQuery();
    void apply(QueryResult result);

    std::vector<Record> rows_;
    QString path_;
    Filter filter_;
    std::optional<double> window_;
    int limit_;
    qint64 total_ = 0;
    QString error_;
    quint64 serial_ = 0;    // the newest request; answers to older ones are dropped
    bool inFlight_ = false;
    bool pending_ = false;  // a refresh was asked for while a query ran
};

}  // namespace lockscope::history
