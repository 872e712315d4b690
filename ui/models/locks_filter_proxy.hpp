// The locks view's sort and filter layer over LocksModel: the model keeps rows in arrival order so
// that a poll's changes reach this proxy as few row ranges; this proxy gives the display order (by
// LocksModel::SortRole) and the operator's filter box.
#pragma once

#include <QSortFilterProxyModel>
#include <QString>

#include <optional>

namespace lockscope {

class LocksFilterProxy : public QSortFilterProxyModel {
    Q_OBJECT

public:
    explicit LocksFilterProxy(QObject* parent = nullptr);

    // Case-insensitive text matched against a lock's name, key and application, a waiter's
    // application, and (when it is a number) exactly against holder and waiter pids. A matching
    // waiter keeps its lock visible; a matching lock shows all its waiters. Empty: everything.
    void setFilterText(const QString& text);
    QString filterText() const { return text_; }

protected:
    bool filterAcceptsRow(int sourceRow, const QModelIndex& sourceParent) const override;

private:
    QString text_;
    std::optional<int> pid_;
};

}  // namespace lockscope
