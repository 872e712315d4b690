#include "actions/backend_actions.hpp"

#include <QMetaObject>

#include "actions/read_only_switch.hpp"
#include "models/server_text.hpp"
#include "pglock/sqlstate.hpp"
#include "pglock/error.hpp"
#include "pglock/monitor.hpp"
#include "pglock/pool.hpp"

namespace lockscope {

BackendActions::BackendActions(ReadOnlySwitch& readOnly, QObject* parent) : QObject(parent), readOnly_(readOnly) {
    workers_.setMaxThreadCount(4);
}

BackendActions::~BackendActions() {
    {
        std::lock_guard guard(liveness_->mutex);
        liveness_->alive = false;
    }
    workers_.waitForDone();
}

void BackendActions::setConnection(const QString& conninfo, const QString& password) {
    pglock::PoolOptions options;
    options.max_size = 4;
    // This pool only reads and signals; it takes no lock, so the pooler check's extra connection
    // would buy nothing.
    options.refuse_transaction_pooler = false;
    options.overrides.emplace_back("application_name", "lockscope (admin)");
    if (!password.isEmpty()) options.overrides.emplace_back("password", password.toStdString());
    pool_ = std::make_shared<pglock::Pool>(conninfo.toStdString(), options);
}

ActionOutcome BackendActions::cancelQuery(int pid) { return run(pid, Kind::CancelQuery); }
ActionOutcome BackendActions::terminate(int pid) { return run(pid, Kind::Terminate); }

ActionOutcome BackendActions::loadImpact(int pid) {
    if (!pool_) return ActionOutcome::refuse(tr("Not connected to a server."));
    auto pool = pool_;
    auto live = liveness_;
    workers_.start([this, pool, live, pid] {
        std::shared_ptr<const pglock::monitor::BackendImpact> impact;
        QString error;
        try {
            const auto deadline = [] { return pglock::Context{{}, pglock::Clock::now() + std::chrono::seconds(15)}; };
            auto session = pool->acquire(deadline());
            impact = std::make_shared<const pglock::monitor::BackendImpact>(pglock::monitor::backend_impact(*session, pid, deadline()));
        } catch (const pglock::Error& e) {
            error = serverMessage(e.detail());
        }
        std::lock_guard guard(live->mutex);
        if (!live->alive) return;
        QMetaObject::invokeMethod(
            this, [this, pid, impact, error] { emit impactLoaded(pid, impact, error); }, Qt::QueuedConnection);
    });
    return ActionOutcome::ok();
}

ActionOutcome BackendActions::run(int pid, Kind kind) {
    const QString what = kind == Kind::CancelQuery ? tr("canceling a query") : tr("terminating a session");
    if (readOnly_.on()) return ActionOutcome::refuse(tr("Read-only mode: %1 would change the server.").arg(what));
    if (!pool_) return ActionOutcome::refuse(tr("Not connected to a server."));
    if (pid <= 0) return ActionOutcome::refuse(tr("No PID selected."));

    auto pool = pool_;
    auto live = liveness_;
    workers_.start([this, pool, live, pid, kind] {
        bool ok = false;
        QString message;
        try {
            auto session = pool->acquire(pglock::Context{{}, pglock::Clock::now() + std::chrono::seconds(15)});
            const auto signal = kind == Kind::CancelQuery ? pglock::monitor::BackendSignal::cancel_query
                                                          : pglock::monitor::BackendSignal::terminate;
            ok = pglock::monitor::signal_backend(*session, pid, signal,
                                                 pglock::Context{{}, pglock::Clock::now() + std::chrono::seconds(15)});
            if (ok) {
                message = kind == Kind::CancelQuery ? tr("Cancel request sent to PID %1.").arg(pid)
                                                    : tr("PID %1 was told to terminate.").arg(pid);
            } else {
                // The server answers false (with a WARNING) when the PID is no backend of it.
                message = tr("PID %1 is not a PostgreSQL backend any more (it may have ended already).").arg(pid);
            }
        } catch (const pglock::Error& e) {
            if (e.sqlstate() == pglock::sqlstate::insufficient_privilege) {
                message = tr("Insufficient privilege for PID %1: only a superuser, the session's own role or a "
                             "member of pg_signal_backend may do this (and only superusers may signal a "
                             "superuser's session). Server said: %2")
                              .arg(pid)
                              .arg(serverMessage(e.detail()));
            } else {
                message = tr("Failed for PID %1: %2").arg(pid).arg(serverMessage(e.detail()));
            }
        }
        std::lock_guard guard(live->mutex);
        if (!live->alive) return;
        QMetaObject::invokeMethod(
            this, [this, pid, kind, ok, message] { emit finished(pid, kind, ok, message); }, Qt::QueuedConnection);
    });
    return ActionOutcome::ok();
}

}  // namespace lockscope
