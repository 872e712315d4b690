// Acting on other sessions during an incident: cancel a backend's query (pg_cancel_backend) or
// end its session (pg_terminate_backend). The confirmation is the window's job; this controller
// runs the statement on a worker thread, turns the server's answer into a message a person can
// act on (no such PID, insufficient privilege), and refuses everything in read-only mode.
#pragma once

#include <QObject>
#include <QThreadPool>

#include <memory>
#include <mutex>

#include "actions/action_outcome.hpp"
#include "pglock/backend_impact.hpp"

namespace pglock {
class Pool;
}

namespace lockscope {

class ReadOnlySwitch;

class BackendActions : public QObject {
    Q_OBJECT
public:
    enum class Kind { CancelQuery, Terminate };
    Q_ENUM(Kind)

    explicit BackendActions(ReadOnlySwitch& readOnly, QObject* parent = nullptr);
    ~BackendActions() override;  // joins the workers

    void setConnection(const QString& conninfo, const QString& password = {});

    // Accepted: finished(pid, kind, ok, message) follows.
    ActionOutcome cancelQuery(int pid);
    ActionOutcome terminate(int pid);
    // Reads what terminating `pid` would do (pglock/backend_impact.hpp) on a worker thread; only
    // reads, so read-only mode allows it. impactLoaded(pid, ...) follows.
    ActionOutcome loadImpact(int pid);

signals:
    void finished(int pid, lockscope::BackendActions::Kind kind, bool ok, const QString& message);
    // impact is null when the read failed; error says why.
    void impactLoaded(int pid, std::shared_ptr<const pglock::monitor::BackendImpact> impact, const QString& error);

private:
    ActionOutcome run(int pid, Kind kind);

    ReadOnlySwitch& readOnly_;
    std::shared_ptr<pglock::Pool> pool_;
    QThreadPool workers_;
    struct Liveness {
        std::mutex mutex;
        bool alive = true;
    };
    std::shared_ptr<Liveness> liveness_ = std::make_shared<Liveness>();
};

}  // namespace lockscope
