// A lock this app took by hand during an incident, as the "My locks" panel shows it.
#pragma once

#include <QByteArray>
#include <QDateTime>
#include <QString>

namespace lockscope {

enum class TakeMode {
    Try,          // pg_try_advisory_lock: an immediate yes or no
    Blocking,     // pg_advisory_lock: waits in the server's queue until granted or canceled
    Transaction,  // pg_try_advisory_xact_lock inside a transaction left open until commit/rollback
};

enum class OwnLockState {
    Waiting,    // a blocking take is queued on the server
    Held,
    Busy,       // releasing, canceling, committing or rolling back: a worker is on it
    Released,   // unlocked (or the transaction ended) by the operator
    Lost,       // the session died while holding it: the lock is gone
    Contended,  // a try found it held by another session
    Canceled,   // a blocking wait was canceled: nothing is left waiting on the server
    Failed,     // the database or the connection failed; message says how
};

struct OwnLock {
    quint64 id = 0;
    QByteArray name;  // bytes, as hashed (may hold anything)
    qint64 key = 0;
    TakeMode mode = TakeMode::Try;
    bool shared = false;
    OwnLockState state = OwnLockState::Waiting;
    int pid = 0;  // the backend that holds it (0 until granted)
    QDateTime requestedAt;
    QDateTime heldAt;   // valid once granted
    QDateTime endedAt;  // valid once it is over
    QString message;    // why it failed, who holds it, how it was lost

    bool active() const { return state == OwnLockState::Waiting || state == OwnLockState::Held || state == OwnLockState::Busy; }
    // Held in the server right now, as far as this app can tell.
    bool holding() const { return state == OwnLockState::Held || (state == OwnLockState::Busy && heldAt.isValid()); }
};

QString modeName(TakeMode mode);
QString stateName(OwnLockState state);

}  // namespace lockscope
