#include "actions/my_locks_model.hpp"
#include "models/plain_text.hpp"

#include <QBrush>
#include <QFont>

#include <algorithm>

#include "actions/lock_controller.hpp"
#include "models/locks_model.hpp"
#include "stores/name_import.hpp"
#include "theme/app_palette.hpp"

namespace lockscope {

MyLocksModel::MyLocksModel(LockController& controller, QObject* parent)
    : QAbstractTableModel(parent), controller_(controller) {
    for (const auto& lock : controller_.locks()) ids_.push_back(lock.id);
    connect(&controller_, &LockController::lockAdded, this, [this](quint64 id) {
        const int row = static_cast<int>(ids_.size());
        beginInsertRows({}, row, row);
        ids_.push_back(id);
        endInsertRows();
    });
    connect(&controller_, &LockController::lockChanged, this, [this](quint64 id) {
        if (const int row = rowOf(id); row >= 0) emit dataChanged(index(row, 0), index(row, ColumnCount - 1));
    });
    connect(&controller_, &LockController::lockRemoved, this, [this](quint64 id) {
        if (const int row = rowOf(id); row >= 0) {
            beginRemoveRows({}, row, row);
            ids_.erase(ids_.begin() + row);
            endRemoveRows();
        }
    });
}

quint64 MyLocksModel::idAt(int row) const {
    return row >= 0 && row < static_cast<int>(ids_.size()) ? ids_[static_cast<std::size_t>(row)] : 0;
}

int MyLocksModel::rowOf(quint64 id) const {
    const auto it = std::find(ids_.begin(), ids_.end(), id);
    return it == ids_.end() ? -1 : static_cast<int>(it - ids_.begin());
}

const OwnLock* MyLocksModel::lockAt(int row) const { return controller_.find(idAt(row)); }

void MyLocksModel::tick() {
    for (int row = 0; row < static_cast<int>(ids_.size()); ++row) {
        if (const OwnLock* lock = lockAt(row); lock && lock->active()) {
            emit dataChanged(index(row, Time), index(row, Time), {Qt::DisplayRole});
        }
    }
}

int MyLocksModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : static_cast<int>(ids_.size());
}

int MyLocksModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : ColumnCount; }

QVariant MyLocksModel::data(const QModelIndex& index, int role) const {
    if (!checkIndex(index, CheckIndexOption::IndexIsValid)) return {};
    const OwnLock* lock = lockAt(index.row());
    if (!lock) return {};
    switch (role) {
        case IdRole: return QVariant::fromValue(lock->id);
        case StateRole: return static_cast<int>(lock->state);
        case ModeRole: return static_cast<int>(lock->mode);
        case Qt::ForegroundRole:
            // From the app's palette: a fixed dark red or grey is unreadable on the dark theme.
            if (lock->state == OwnLockState::Lost || lock->state == OwnLockState::Failed) return QBrush(theme::errorText());
            if (!lock->active()) return QBrush(theme::inactiveText());
            return {};
        case Qt::FontRole:
            if (lock->state == OwnLockState::Lost || index.column() == State) {
                QFont font;
                font.setBold(lock->state == OwnLockState::Lost || lock->holding());
                return font;
            }
            return {};
        case Qt::ToolTipRole:
            return lock->message.isEmpty() ? QVariant() : QVariant(plainToolTip(lock->message));
        case Qt::DisplayRole: break;
        default: return {};
    }
    switch (index.column()) {
        case Name: return names::printable(lock->name);
        case Key: return QString::number(lock->key);
        case Mode: return modeName(lock->mode) + (lock->shared ? tr(", shared") : tr(", exclusive"));
        case Pid: return lock->pid > 0 ? QVariant(lock->pid) : QVariant();
        case State: return stateName(lock->state);
        case Time: {
            const QDateTime now = QDateTime::currentDateTime();
            if (lock->state == OwnLockState::Waiting) {
                return tr("waiting %1").arg(LocksModel::formatDuration(lock->requestedAt.msecsTo(now) / 1000.0));
            }
            if (lock->heldAt.isValid()) {
                const QDateTime end = lock->active() ? now : lock->endedAt;
                return tr("held %1").arg(LocksModel::formatDuration(lock->heldAt.msecsTo(end) / 1000.0));
            }
            return {};
        }
        case Message: return lock->message;
        default: return {};
    }
}

QVariant MyLocksModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return {};
    switch (section) {
        case Name: return tr("Name");
        case Key: return tr("Key");
        case Mode: return tr("Mode");
        case Pid: return tr("PID");
        case State: return tr("State");
        case Time: return tr("Time");
        case Message: return tr("Details");
        default: return {};
    }
}

}  // namespace lockscope
