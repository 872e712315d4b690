#include "actions/lock_controller.hpp"

#include <QMetaObject>
#include <QSocketNotifier>

#include <optional>
#include <stop_token>

#include "actions/read_only_switch.hpp"
#include "models/server_text.hpp"
#include "pglock/error.hpp"
#include "pglock/key.hpp"
#include "pglock/lock.hpp"
#include "pglock/pool.hpp"
#include "pglock/transaction.hpp"

namespace lockscope {

// What the worker threads hold for one own lock. Only one worker touches it at a time (the entry
// is Waiting or Busy while one does); the library's lost-lock watcher only reads the guard.
struct LockWork {
    std::shared_ptr<pglock::Pool> pool;
    std::stop_source stop;
    std::optional<pglock::Lock> lock;
    std::optional<pglock::Guard> guard;
    std::optional<pglock::Transaction> tx;
};

namespace {

// A single statement (try, commit, unlock) should answer at once; a server that does not answer
// within this is reported rather than waited on for ever.
constexpr auto kStatementTimeout = std::chrono::seconds(30);

pglock::Context timed(const std::stop_source& stop) {
    return pglock::Context{stop.get_token(), pglock::Clock::now() + kStatementTimeout};
}

// The server's message on one line, by the display rule (server_text.hpp): My locks and the
// status bar show it.
QString describe(const pglock::Error& e) {
    QString text = serverMessage(e.detail());
    if (!e.sqlstate().empty()) text += QStringLiteral(" [SQLSTATE %1]").arg(QString::fromStdString(e.sqlstate()));
    return text;
}

QString pidList(const std::vector<int>& pids) {
    QStringList out;
    for (int pid : pids) out << QString::number(pid);
    return out.join(QStringLiteral(", "));
}

}  // namespace

LockController::LockController(ReadOnlySwitch& readOnly, QObject* parent) : QObject(parent), readOnly_(readOnly) {
    // Blocking takes each occupy a worker while they wait; an operator does not queue hundreds.
    workers_.setMaxThreadCount(32);
    // Read-only means this app changes nothing on the server from now on, and a take still in
    // flight would: its grant could come minutes later. Its wait is canceled like Cancel does.
    connect(&readOnly_, &ReadOnlySwitch::changed, this, [this](bool on) {
        if (!on) return;
        for (const OwnLock& e : locks_) {
            if (e.state != OwnLockState::Waiting) continue;
            canceledByReadOnly_.insert(e.id);
            if (auto work = work_.value(e.id)) work->stop.request_stop();
        }
    });
}

LockController::~LockController() {
    {
        std::lock_guard guard(liveness_->mutex);
        liveness_->alive = false;
    }
    for (auto& work : work_) work->stop.request_stop();
    workers_.waitForDone();
    for (auto* notifier : std::as_const(txWatch_)) delete notifier;
    // The remaining guards and transactions release and roll back as `work_` goes.
}

void LockController::setConnection(const QString& conninfo, const QString& password) {
    releaseAll();
    pglock::PoolOptions options;
    options.max_size = 256;  // one session per lock held by hand, plus short admin statements
    // Other operators see in pg_stat_activity who holds these locks.
    options.overrides.emplace_back("application_name", "lockscope (by hand)");
    if (!password.isEmpty()) options.overrides.emplace_back("password", password.toStdString());
    pool_ = std::make_shared<pglock::Pool>(conninfo.toStdString(), options);
}

void LockController::runOnWorker(std::function<void()> job) {
    workers_.start(std::move(job));
}

OwnLock* LockController::entry(quint64 id) {
    for (auto& lock : locks_) {
        if (lock.id == id) return &lock;
    }
    return nullptr;
}

const OwnLock* LockController::find(quint64 id) const {
    for (const auto& lock : locks_) {
        if (lock.id == id) return &lock;
    }
    return nullptr;
}

void LockController::update(quint64 id, const std::function<void(OwnLock&)>& change) {
    OwnLock* e = entry(id);
    if (!e) return;
    const bool wasHolding = e->holding();
    change(*e);
    emit lockChanged(id);
    if (wasHolding != e->holding()) emit ownPidsChanged();
}

void LockController::finish(quint64 id, OwnLockState state, const QString& message) {
    // First word wins: a lost notice and a release's answer can cross; whichever came first says
    // what happened.
    if (const OwnLock* e = find(id); !e || !e->active()) return;
    unwatchTransaction(id);
    const bool byReadOnly = canceledByReadOnly_.remove(id) && state == OwnLockState::Canceled;
    update(id, [&](OwnLock& e) {
        e.state = state;
        e.message = byReadOnly ? tr("wait canceled: read-only mode was switched on; nothing left waiting") : message;
        e.endedAt = QDateTime::currentDateTime();
    });
    // The guard, lock and transaction go on a worker: their destructors may talk to the server.
    if (auto work = work_.take(id)) runOnWorker([work = std::move(work)]() mutable { work.reset(); });
    maybeSettled();
}

void LockController::onGranted(quint64 id, int pid) {
    update(id, [&](OwnLock& e) {
        e.state = OwnLockState::Held;
        e.pid = pid;
        e.heldAt = QDateTime::currentDateTime();
        e.message = e.mode == TakeMode::Transaction ? tr("held until commit or rollback") : QString();
    });
    if (const OwnLock* e = find(id); e && e->mode == TakeMode::Transaction) watchTransaction(id);
    // releaseAll() may have been asked while this take was on its way.
    if (settling_) {
        if (const OwnLock* e = find(id); e && e->mode == TakeMode::Transaction) {
            endTransaction(id, false);
        } else {
            release(id);
        }
    }
}

ActionOutcome LockController::take(const QByteArray& name, TakeMode mode, bool shared) {
    if (readOnly_.on()) return ActionOutcome::refuse(tr("Read-only mode: taking a lock would change the server."));
    if (!pool_) return ActionOutcome::refuse(tr("Not connected to a server."));
    if (name.isEmpty()) return ActionOutcome::refuse(tr("A lock name cannot be empty."));
    settling_ = false;

    OwnLock e;
    e.id = nextId_++;
    e.name = name;
    e.key = pglock::key_of(std::string_view(name.constData(), static_cast<std::size_t>(name.size())));
    e.mode = mode;
    e.shared = shared;
    e.state = OwnLockState::Waiting;
    e.requestedAt = QDateTime::currentDateTime();
    locks_.push_back(e);
    const quint64 id = e.id;
    emit lockAdded(id);

    auto work = std::make_shared<LockWork>();
    work->pool = pool_;
    work_.insert(id, work);
    auto live = liveness_;
    runOnWorker([this, id, work, live, mode, shared, name = name.toStdString()] {
        auto deliver = [this, &live](std::function<void()> fn) {
            std::lock_guard guard(live->mutex);
            if (live->alive) QMetaObject::invokeMethod(this, std::move(fn), Qt::QueuedConnection);
        };
        try {
            pglock::LockOptions options;
            options.mode = shared ? pglock::Mode::shared : pglock::Mode::exclusive;
            work->lock.emplace(*work->pool, name, options);
            if (mode == TakeMode::Transaction) {
                work->tx.emplace(*work->pool, timed(work->stop));
                if (!work->lock->try_acquire_xact(&*work->tx, timed(work->stop))) {
                    work->tx->rollback(timed(work->stop));
                    const auto holders = work->lock->holders(timed(work->stop));
                    deliver([this, id, holders] {
                        finish(id, OwnLockState::Contended, tr("held by PID %1").arg(pidList(holders)));
                    });
                    return;
                }
                const int pid = work->tx->session().backend_pid();
                deliver([this, id, pid] { onGranted(id, pid); });
                return;
            }
            std::optional<pglock::Guard> guard;
            if (mode == TakeMode::Try) {
                guard = work->lock->try_acquire(timed(work->stop));
                if (!guard) {
                    const auto holders = work->lock->holders(timed(work->stop));
                    deliver([this, id, holders] {
                        finish(id, OwnLockState::Contended,
                               holders.empty() ? tr("held by another session (it let go just now)")
                                               : tr("held by PID %1").arg(pidList(holders)));
                    });
                    return;
                }
            } else {
                // No deadline: the operator decides how long to wait, and Cancel stops the wait.
                guard = work->lock->acquire(pglock::Context{work->stop.get_token(), std::nullopt});
            }
            work->guard = std::move(guard);
            const int pid = work->guard->backend_pid();
            deliver([this, id, pid] { onGranted(id, pid); });
            // From the library's watcher thread (or at once, if already lost).
            work->guard->on_lost([this, id, pid, live] {
                std::lock_guard guard(live->mutex);
                if (!live->alive) return;
                QMetaObject::invokeMethod(
                    this,
                    [this, id, pid] {
                        const OwnLock* e = find(id);
                        if (!e || !e->active()) return;
                        finish(id, OwnLockState::Lost,
                               tr("the session (PID %1) ended: terminated, server restarted or connection cut. "
                                  "The lock is gone.").arg(pid));
                    },
                    Qt::QueuedConnection);
            });
        } catch (const pglock::Error& err) {
            if (err.code() == pglock::Errc::canceled) {
                deliver([this, id] { finish(id, OwnLockState::Canceled, tr("wait canceled; nothing left waiting")); });
            } else {
                const QString why = describe(err);
                deliver([this, id, why] { finish(id, OwnLockState::Failed, why); });
            }
        } catch (const std::exception& err) {
            const QString why = serverMessage(std::string_view(err.what()));
            deliver([this, id, why] { finish(id, OwnLockState::Failed, why); });
        }
    });
    return ActionOutcome::ok(id);
}

ActionOutcome LockController::cancelWait(quint64 id) {
    // Allowed in read-only mode: giving up our own wait leaves the server as it was.
    const OwnLock* e = find(id);
    if (!e || e->state != OwnLockState::Waiting) return ActionOutcome::refuse(tr("Not waiting."));
    if (auto work = work_.value(id)) work->stop.request_stop();
    return ActionOutcome::ok(id);
}

ActionOutcome LockController::release(quint64 id) {
    const OwnLock* e = find(id);
    if (!e || e->state != OwnLockState::Held) return ActionOutcome::refuse(tr("Not held."));
    if (readOnly_.on() && !settling_) return ActionOutcome::refuse(tr("Read-only mode: releasing a lock would change the server."));
    if (e->mode == TakeMode::Transaction) return endTransaction(id, false);
    auto work = work_.value(id);
    if (!work || !work->guard) return ActionOutcome::refuse(tr("Not held."));
    update(id, [](OwnLock& l) { l.state = OwnLockState::Busy; });
    auto live = liveness_;
    runOnWorker([this, id, work, live] {
        const std::error_code ec = work->guard->release();
        std::lock_guard guard(live->mutex);
        if (!live->alive) return;
        QMetaObject::invokeMethod(
            this,
            [this, id, ec] {
                if (!ec) {
                    finish(id, OwnLockState::Released, tr("unlocked"));
                } else if (ec == pglock::make_error_code(pglock::Errc::lock_lost)) {
                    finish(id, OwnLockState::Lost, tr("the session had ended before the release: the lock was gone"));
                } else {
                    finish(id, OwnLockState::Failed,
                           tr("unlock failed (%1); the session was closed, so the lock is gone")
                               .arg(QString::fromStdString(ec.message())));
                }
            },
            Qt::QueuedConnection);
    });
    return ActionOutcome::ok(id);
}

ActionOutcome LockController::commit(quint64 id) { return endTransaction(id, true); }
ActionOutcome LockController::rollback(quint64 id) { return endTransaction(id, false); }

ActionOutcome LockController::endTransaction(quint64 id, bool commit) {
    const OwnLock* e = find(id);
    if (!e || e->state != OwnLockState::Held) return ActionOutcome::refuse(tr("Not held."));
    if (e->mode != TakeMode::Transaction) return ActionOutcome::refuse(tr("Not a transaction-level lock."));
    if (readOnly_.on() && !settling_) {
        return ActionOutcome::refuse(tr("Read-only mode: ending the transaction would change the server."));
    }
    auto work = work_.value(id);
    if (!work || !work->tx) return ActionOutcome::refuse(tr("Not held."));
    unwatchTransaction(id);  // the worker owns the session from here
    update(id, [](OwnLock& l) { l.state = OwnLockState::Busy; });
    auto live = liveness_;
    runOnWorker([this, id, work, live, commit] {
        std::optional<QString> failure;
        bool dead = false;
        try {
            if (commit) {
                work->tx->commit(timed(work->stop));
            } else {
                work->tx->rollback(timed(work->stop));
            }
        } catch (const pglock::Error& err) {
            failure = describe(err);
            dead = !work->tx->session().ok();
        }
        std::lock_guard guard(live->mutex);
        if (!live->alive) return;
        QMetaObject::invokeMethod(
            this,
            [this, id, commit, failure, dead] {
                if (!failure) {
                    finish(id, OwnLockState::Released, commit ? tr("committed") : tr("rolled back"));
                } else if (dead) {
                    finish(id, OwnLockState::Lost, tr("the session ended: the transaction and its lock are gone (%1)").arg(*failure));
                } else {
                    finish(id, OwnLockState::Failed, *failure);
                }
            },
            Qt::QueuedConnection);
    });
    return ActionOutcome::ok(id);
}

void LockController::watchTransaction(quint64 id) {
    auto work = work_.value(id);
    if (!work || !work->tx || txWatch_.contains(id)) return;
    const int fd = work->tx->session().socket();
    if (fd < 0) return;
    // An idle session in a transaction gets nothing from the server unless it dies (the FATAL
    // message and EOF of a termination or shutdown): readability is the lost-lock signal.
    auto* notifier = new QSocketNotifier(fd, QSocketNotifier::Read, this);
    connect(notifier, &QSocketNotifier::activated, this, [this, id] { checkTransactionAlive(id); });
    txWatch_.insert(id, notifier);
}

void LockController::unwatchTransaction(quint64 id) {
    if (auto* notifier = txWatch_.take(id)) {
        notifier->setEnabled(false);
        notifier->deleteLater();
    }
}

void LockController::checkTransactionAlive(quint64 id) {
    const OwnLock* e = find(id);
    auto work = work_.value(id);
    if (!e || e->state != OwnLockState::Held || !work || !work->tx) return;
    // No worker uses the session while it is Held, and check_alive() never blocks.
    if (work->tx->session().check_alive()) return;
    finish(id, OwnLockState::Lost,
           tr("the session (PID %1) ended: terminated, server restarted or connection cut. "
              "The transaction and its lock are gone.").arg(e->pid));
}

void LockController::releaseAll() {
    settling_ = true;
    for (const auto& e : std::vector<OwnLock>(locks_)) {
        if (e.state == OwnLockState::Waiting) {
            if (auto work = work_.value(e.id)) work->stop.request_stop();
        } else if (e.state == OwnLockState::Held) {
            if (e.mode == TakeMode::Transaction) {
                endTransaction(e.id, false);
            } else {
                release(e.id);
            }
        }
    }
    maybeSettled();
}

void LockController::maybeSettled() {
    if (settling_ && activeCount() == 0) {
        settling_ = false;
        emit allSettled();
    }
}

void LockController::dismiss(quint64 id) {
    for (auto it = locks_.begin(); it != locks_.end(); ++it) {
        if (it->id != id) continue;
        if (it->active()) return;
        locks_.erase(it);
        emit lockRemoved(id);
        return;
    }
}

void LockController::dismissFinished() {
    std::vector<quint64> over;
    for (const auto& e : locks_) {
        if (!e.active()) over.push_back(e.id);
    }
    for (quint64 id : over) dismiss(id);
}

int LockController::activeCount() const {
    return static_cast<int>(std::count_if(locks_.begin(), locks_.end(), [](const OwnLock& e) { return e.active(); }));
}

int LockController::holdingCount() const {
    return static_cast<int>(std::count_if(locks_.begin(), locks_.end(), [](const OwnLock& e) { return e.holding(); }));
}

QSet<int> LockController::ownPids() const {
    QSet<int> pids;
    for (const auto& e : locks_) {
        if (e.holding()) pids.insert(e.pid);
    }
    return pids;
}

QString modeName(TakeMode mode) {
    switch (mode) {
        case TakeMode::Try: return QObject::tr("try");
        case TakeMode::Blocking: return QObject::tr("blocking");
        case TakeMode::Transaction: return QObject::tr("transaction");
    }
    return {};
}

QString stateName(OwnLockState state) {
    switch (state) {
        case OwnLockState::Waiting: return QObject::tr("waiting");
        case OwnLockState::Held: return QObject::tr("held");
        case OwnLockState::Busy: return QObject::tr("working…");
        case OwnLockState::Released: return QObject::tr("released");
        case OwnLockState::Lost: return QObject::tr("LOST");
        case OwnLockState::Contended: return QObject::tr("contended");
        case OwnLockState::Canceled: return QObject::tr("canceled");
        case OwnLockState::Failed: return QObject::tr("failed");
    }
    return {};
}

}  // namespace lockscope
