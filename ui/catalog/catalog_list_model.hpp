// The catalog panel's table: a model over a CatalogSnapshot, filtered off the GUI thread. A
// keystroke in the filter starts a job on the model's own worker and cancels the one before
// (std::stop_token); a filter that refines the one shown ("job-1" after "job-") searches only the
// rows shown, the others every row. The GUI thread only swaps the result in, in one model reset,
// so typing never waits on a million names. Matching is case-insensitive on the name as the app
// shows it (names::printable), which is what the operator sees and types.
#pragma once

#include <QAbstractTableModel>
#include <QByteArray>
#include <QString>
#include <QThreadPool>

#include <cstdint>
#include <memory>
#include <stop_token>
#include <string>
#include <vector>

#include "catalog/catalog_snapshot.hpp"

namespace lockscope {

class CatalogListModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column { Name, Key, Note, ColumnCount };
    enum Role { NameBytesRole = Qt::UserRole + 1 };

    explicit CatalogListModel(QObject* parent = nullptr);
    ~CatalogListModel() override;  // cancels and waits for the filter job

    // The catalog to show (the filter applies to it, off the GUI thread).
    void setSnapshot(CatalogSnapshotPtr snapshot);
    void setFilter(const QString& text);
    QString filter() const { return filter_; }
    // What is shown now (may lag setSnapshot/setFilter until filterApplied).
    CatalogSnapshotPtr shownSnapshot() const { return shown_; }
    bool filtering() const { return pending_ != 0; }
    QByteArray nameAt(int row) const;
    int rowOfName(const QByteArray& name) const;  // -1 when not shown

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

signals:
    // The rows now show filter() over the latest snapshot.
    void filterApplied();

private:
    using Rows = std::shared_ptr<const std::vector<std::uint32_t>>;  // nullptr: every row
    void refilter();
    void apply(quint64 generation, const CatalogSnapshotPtr& snapshot, const std::string& needle, Rows rows);
    std::size_t snapshotRow(int row) const { return rows_ ? (*rows_)[std::size_t(row)] : std::size_t(row); }

    CatalogSnapshotPtr latest_;  // asked for
    QString filter_;             // asked for
    CatalogSnapshotPtr shown_;   // what rows_ index
    std::string shownNeedle_;    // folded
    Rows rows_;
    quint64 generation_ = 0;
    quint64 pending_ = 0;        // generation of the job in flight, 0 when none
    std::stop_source stop_;
    QThreadPool pool_;           // one thread: stale jobs are canceled, never run side by side
};

}  // namespace lockscope
