// LocksModel::gatherGoneRows(): a poll's gone locks moved behind the survivors in one layout
// change, so that applySnapshot() removes them as one range.
#include "models/locks_model.hpp"

namespace lockscope {

void LocksModel::gatherGoneRows(std::vector<const pglock::monitor::LockEntry*>& entryOfRow) {
    const std::size_t count = rows_.size();
    // Survivors keep their order (the arrival order the views break ties with); the gone rows
    // follow them in theirs.
    gathered_.assign(count, -1);
    int next = 0;
    for (std::size_t r = 0; r < count; ++r)
        if (entryOfRow[r]) gathered_[r] = next++;
    for (std::size_t r = 0; r < count; ++r)
        if (!entryOfRow[r]) gathered_[r] = next++;

    emit layoutAboutToBeChanged({}, QAbstractItemModel::VerticalSortHint);
    // Waiter indexes carry their lock's serial, not its row: only lock rows move.
    const QModelIndexList from = persistentIndexList();
    QModelIndexList to;
    to.reserve(from.size());
    for (const QModelIndex& idx : from)
        to << (idx.internalId() == 0 ? createIndex(gathered_[std::size_t(idx.row())], idx.column(), quintptr(0)) : idx);
    changePersistentIndexList(from, to);

    std::vector<std::unique_ptr<LockRow>> rows(count);
    std::vector<const pglock::monitor::LockEntry*> entries(count);
    for (std::size_t r = 0; r < count; ++r) {
        const auto at = std::size_t(gathered_[r]);
        rows[at] = std::move(rows_[r]);
        entries[at] = entryOfRow[r];
    }
    rows_ = std::move(rows);
    entryOfRow = std::move(entries);
    for (std::size_t r = 0; r < count; ++r) rowOfSerial_[rows_[r]->serial] = static_cast<int>(r);
    emit layoutChanged({}, QAbstractItemModel::VerticalSortHint);
    gathered_.clear();
}

}  // namespace lockscope
