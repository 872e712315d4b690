// The session detail panel's content: what the last snapshot knows of one backend, as labelled
// display strings. Timestamps are local time in ISO 8601 with how long ago they were by the
// server's clock.
#pragma once

#include <QList>
#include <QString>

#include "models/lock_naming.hpp"
#include "pglock/monitor.hpp"

namespace lockscope {

struct SessionField {
    QString label;
    QString value;
};

struct SessionInfo {
    int pid = 0;
    bool found = false;  // the snapshot names this pid (it holds or waits for an advisory lock)
    // In panel order: PID, State, Application, User, Client, Backend start, Transaction start,
    // State change, Wait event, Backend xmin age, Holds, Waits for, Query (in full).
    QList<SessionField> fields;

    QString value(const QString& label) const;  // "" when there is no such field
    QString toText() const;                     // "label: value" lines, for the clipboard

    // Holds and Waits for name each lock as every view does (`namer`, lock_naming.hpp).
    static SessionInfo from(const pglock::monitor::Snapshot& snapshot, int pid, const LockNamer& namer = {});
};

// An epoch-seconds timestamp as local time, ISO 8601 with the UTC offset.
QString formatTimestamp(double epochSeconds);

}  // namespace lockscope
