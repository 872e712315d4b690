// The "My locks" table: one row per lock this app took by hand, in the order taken. Follows the
// LockController's signals row by row (insert, change, remove), never resets, and ticks the
// timer column once a second.
#pragma once

#include <QAbstractTableModel>

#include <vector>

namespace lockscope {

class LockController;
struct OwnLock;

class MyLocksModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column { Name, Key, Mode, Pid, State, Time, Message, ColumnCount };
    Q_ENUM(Column)
    enum Role {
        IdRole = Qt::UserRole + 1,  // quint64: the controller's entry id
        StateRole,                  // int: OwnLockState
        ModeRole,                   // int: TakeMode
    };

    explicit MyLocksModel(LockController& controller, QObject* parent = nullptr);

    quint64 idAt(int row) const;
    int rowOf(quint64 id) const;
    // Time passed: dataChanged for the timer column of the active rows.
    void tick();

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    const OwnLock* lockAt(int row) const;

    LockController& controller_;
    std::vector<quint64> ids_;  // the rows, mirroring the controller's order
};

}  // namespace lockscope
