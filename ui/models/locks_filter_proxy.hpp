// The locks view's sort and filter layer over LocksModel: the model keeps rows in arrival order;
// this proxy gives the display order (by LocksModel::SortRole of the sorted column) and the
// operator's filter box.
//
// Not a QSortFilterProxyModel: that one pays O(rows) for every inserted, removed or re-sorted
// source range, and a poll of 10,000 locks brings ~100 scattered removals plus changes (18 ms of a
// 16 ms budget on a loaded machine). This proxy keeps the shown lock rows as a sorted array of
// nodes with each node's sort key cached, so a new or changed lock costs a binary search and a
// memmove, a gone one a memmove; the first poll of 10,000 rows is one sort and one insert range.
// Order: the sort key (numbers as numbers, text case-insensitively, no value last), ties in
// source (arrival) order, in both directions, like QSortFilterProxyModel's stable sort.
//
// Two levels, as LocksModel has: locks and their waiters. Waiter rows are sorted by the same
// column and filtered as before: a matching waiter keeps its lock, a matching lock shows all its
// waiters. Moves keep persistent indexes (selection, expansion, current) on their rows.
#pragma once

#include <QAbstractProxyModel>
#include <QString>

#include <functional>
#include <memory>
#include <optional>
#include <unordered_map>
#include <vector>

namespace lockscope {

class LocksFilterProxy : public QAbstractProxyModel {
    Q_OBJECT

public:
    explicit LocksFilterProxy(QObject* parent = nullptr);
    ~LocksFilterProxy() override;

    // Case-insensitive text matched against a lock's name, key and application, a waiter's
    // application, and (when it is a number) exactly against holder and waiter pids. A matching
    // waiter keeps its lock visible; a matching lock shows all its waiters. Empty: everything.
    void setFilterText(const QString& text);
    QString filterText() const { return text_; }

    // -1: source order.
    void sort(int column, Qt::SortOrder order = Qt::AscendingOrder) override;
    int sortColumn() const { return sortColumn_; }
    Qt::SortOrder sortOrder() const { return sortOrder_; }

    void setSourceModel(QAbstractItemModel* source) override;
    QModelIndex mapToSource(const QModelIndex& proxyIndex) const override;
    QModelIndex mapFromSource(const QModelIndex& sourceIndex) const override;
    QModelIndex index(int row, int column, const QModelIndex& parent = {}) const override;
    QModelIndex parent(const QModelIndex& child) const override;
    QModelIndex sibling(int row, int column, const QModelIndex& idx) const override;
    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    bool hasChildren(const QModelIndex& parent = {}) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

    // The bookkeeping matches a fresh look at the source: the shown locks are exactly the ones the
    // filter accepts, in the order a full sort gives, with the waiters it accepts, in order.
    // O(rows) source reads: for tests.
    bool invariantsHold() const;

private:
    // A cached SortRole value. Case-folded text compares like QString::compare(CaseInsensitive).
    struct SortKey {
        enum Kind : unsigned char { Int, Real, Text, None } kind = None;
        qint64 i = 0;
        double d = 0;
        QString text;
    };
    // A source lock row. Positions live in the flat arrays below, not here: a poll shifts
    // thousands of rows by one, and a pass over an int array costs microseconds where a pass over
    // 10,000 heap nodes costs milliseconds.
    // More insert (or remove) ranges than this in one insertShown() (removeShown()) become one
    // range and a layout change.
    static constexpr std::size_t kMaxInsertRuns = 32;

    struct Node {
        quint64 id = 0;         // arrival order (the tie-break) and the internalId of its waiter indexes
        bool lockMatches = true;       // the lock itself matches the filter
        SortKey key;            // valid while shown
        std::vector<int> waiters;  // shown waiters: source child rows in display order (empty while hidden)
        mutable int hint = -1;  // its proxy row when last looked up (see rowOfNode())
    };

    // Waiter rows the source is about to remove, which the visibility checks must not count.
    struct RowsBeingRemoved;

    static int compare(const SortKey& a, const SortKey& b);
    SortKey keyOf(const QModelIndex& source) const;
    bool sortsBefore(const Node* a, const Node* b) const;
    int rowOfNode(const Node* n) const;
    bool matches(const QModelIndex& source) const;
    bool shouldShow(int src, const RowsBeingRemoved* removing = nullptr) const;
    std::vector<int> waitersToShow(int src, const RowsBeingRemoved* removing = nullptr) const;

    // Accessors by source row / proxy row, so the index arithmetic lives in one place.
    Node& node(int src) const { return *nodes_[std::size_t(src)]; }
    int& proxyRowOf(int src) { return proxyOf_[std::size_t(src)]; }
    int proxyRowOf(int src) const { return proxyOf_[std::size_t(src)]; }
    int sourceRowAt(std::size_t proxyRow) const { return order_[proxyRow]; }
    int shownCount() const { return int(order_.size()); }
    // Source rows compared by their display position: the order order_ is kept in.
    auto displayOrder() const {
        return [this](int a, int b) { return sortsBefore(&node(a), &node(b)); };
    }

    void rebuild();
    void insertShown(std::vector<int> rows);
    void removeShown(std::vector<int> rows);
    void moveToSortedPlace(int src);
    void resort();
    void relayout(const std::function<void()>& reorder);
    // The source's LocksModel::gatheredRows() while it gathers gone rows, else null.
    const std::vector<int>* gatheredRows() const;
    void followGatheredRows(const std::vector<int>& newRowOf);
    void syncWaiters(int src, const RowsBeingRemoved* removing = nullptr);
    void refreshLock(int src);
    void refilter();

    void onRowsInserted(const QModelIndex& parent, int first, int last);
    void onRowsAboutToBeRemoved(const QModelIndex& parent, int first, int last);
    void onRowsRemoved(const QModelIndex& parent, int first, int last);
    void onDataChanged(const QModelIndex& topLeft, const QModelIndex& bottomRight, const QList<int>& roles);

    std::vector<std::unique_ptr<Node>> nodes_;  // by source row
    std::vector<int> proxyOf_;                  // by source row: its proxy row, -1 while filtered out
    std::vector<int> order_;                    // by proxy row: the source row shown there
    std::unordered_map<quint64, Node*> byId_;
    quint64 nextId_ = 1;  // 0 is "top-level row" in internalId
    std::vector<QMetaObject::Connection> connections_;

    int sortColumn_ = -1;
    Qt::SortOrder sortOrder_ = Qt::AscendingOrder;
    QString text_;
    std::optional<int> pid_;
};

}  // namespace lockscope
