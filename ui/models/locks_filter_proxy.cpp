#include "models/locks_filter_proxy.hpp"

#include "models/locks_model.hpp"

namespace lockscope {

LocksFilterProxy::LocksFilterProxy(QObject* parent) : QSortFilterProxyModel(parent) {
    // A waiter that matches keeps its lock; a lock that matches keeps all its waiters, which is
    // what an operator searching for a lock wants to see.
    setRecursiveFilteringEnabled(true);
    setAutoAcceptChildRows(true);
    setSortRole(LocksModel::SortRole);
    setSortCaseSensitivity(Qt::CaseInsensitive);
    // The filter reads FilterRole and PidsRole only. Naming FilterRole here tells the base class
    // that the model's once-a-second tick() (Display and Sort roles of Held for) cannot change
    // what is filtered, so it does not refilter 10k rows every second.
    setFilterRole(LocksModel::FilterRole);
    setDynamicSortFilter(true);
}

void LocksFilterProxy::setFilterText(const QString& text) {
    const QString trimmed = text.trimmed();
    if (trimmed == text_) return;
    text_ = trimmed;
    bool ok = false;
    const int pid = text_.toInt(&ok);
    pid_ = ok && pid > 0 ? std::optional<int>(pid) : std::nullopt;
    invalidateFilter();
}

bool LocksFilterProxy::filterAcceptsRow(int sourceRow, const QModelIndex& sourceParent) const {
    if (text_.isEmpty()) return true;
    const QModelIndex idx = sourceModel()->index(sourceRow, 0, sourceParent);
    if (idx.data(LocksModel::FilterRole).toString().contains(text_, Qt::CaseInsensitive)) return true;
    return pid_ && idx.data(LocksModel::PidsRole).value<QList<int>>().contains(*pid_);
}

}  // namespace lockscope
