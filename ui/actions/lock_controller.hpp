// Takes and releases advisory locks by hand, for an operator in an incident: try, blocking (with
// a cancel that really cancels the server-side wait), transaction-level and shared, through the
// pglock library. Each lock has its own session; every round trip runs on the controller's worker
// threads, and results come back to the GUI thread as signals.
//
// A lock whose session dies (terminated, server restart, network cut) turns Lost as soon as the
// library's watcher (or, for a transaction, the socket) says so: the app never claims a lock it no
// longer has. In read-only mode the controller refuses every action that would change the server,
// and switching it on cancels the takes still waiting.
#pragma once

#include <QHash>
#include <QObject>
#include <QSet>
#include <QThreadPool>

#include <memory>
#include <mutex>
#include <vector>

#include "actions/action_outcome.hpp"
#include "actions/own_lock.hpp"

class QSocketNotifier;

namespace pglock {
class Pool;
}

namespace lockscope {

class ReadOnlySwitch;
struct LockWork;

class LockController : public QObject {
    Q_OBJECT
public:
    explicit LockController(ReadOnlySwitch& readOnly, QObject* parent = nullptr);
    // Releases what is still held (briefly blocking: call releaseAll() first and wait for
    // allSettled() to keep the GUI responsive) and joins the workers.
    ~LockController() override;

    // The server to act on. Locks taken on the previous one are released (asynchronously).
    // The password is kept in memory only, for the sessions of this connection.
    void setConnection(const QString& conninfo, const QString& password = {});
    bool hasConnection() const { return pool_ != nullptr; }

    ActionOutcome take(const QByteArray& name, TakeMode mode, bool shared);
    ActionOutcome cancelWait(quint64 id);  // a Waiting blocking take
    ActionOutcome release(quint64 id);     // Held session lock: unlock; transaction: rollback
    ActionOutcome commit(quint64 id);      // transaction-level only
    ActionOutcome rollback(quint64 id);    // transaction-level only
    // Everything held or waiting is released or canceled; allSettled() follows when nothing is
    // active any more. Allowed in read-only mode: letting go never harms the server.
    void releaseAll();
    // Forgets an entry that is over (released, lost, contended, canceled, failed).
    void dismiss(quint64 id);
    void dismissFinished();

    const std::vector<OwnLock>& locks() const { return locks_; }
    const OwnLock* find(quint64 id) const;
    int activeCount() const;   // waiting or held
    int holdingCount() const;  // held
    QSet<int> ownPids() const;  // backends of the held locks

signals:
    void lockAdded(quint64 id);
    void lockChanged(quint64 id);
    void lockRemoved(quint64 id);
    void ownPidsChanged();
    void allSettled();

private:
    OwnLock* entry(quint64 id);
    void update(quint64 id, const std::function<void(OwnLock&)>& change);
    void finish(quint64 id, OwnLockState state, const QString& message);
    void onGranted(quint64 id, int pid);
    void watchTransaction(quint64 id);
    void unwatchTransaction(quint64 id);
    void checkTransactionAlive(quint64 id);
    ActionOutcome endTransaction(quint64 id, bool commit);
    void runOnWorker(std::function<void()> job);
    void maybeSettled();

    ReadOnlySwitch& readOnly_;
    std::shared_ptr<pglock::Pool> pool_;
    std::vector<OwnLock> locks_;
    QHash<quint64, std::shared_ptr<LockWork>> work_;
    QHash<quint64, QSocketNotifier*> txWatch_;
    QSet<quint64> canceledByReadOnly_;  // waits that read-only mode canceled (their message says so)
    quint64 nextId_ = 1;
    bool settling_ = false;
    QThreadPool workers_;
    // Callbacks from worker and watcher threads check this under the mutex before posting.
    struct Liveness {
        std::mutex mutex;
        bool alive = true;
    };
    std::shared_ptr<Liveness> liveness_ = std::make_shared<Liveness>();
};

}  // namespace lockscope
