// A thread-safe pool of libpq sessions: the C++ counterpart of the Go package's *sql.DB / pgxpool.
#pragma once

#include <chrono>
#include <cstddef>
#include <memory>
#include <optional>
#include <string>

#include "pglock/context.hpp"
#include "pglock/holder_identity.hpp"
#include "pglock/session.hpp"

namespace pglock {

struct PoolOptions {
    std::size_t max_size = 10;                          // sessions open at once, idle and lent
    // Per connection attempt; connect_timeout in the conninfo (or PGCONNECT_TIMEOUT) overrides it,
    // and there 0 means no limit.
    std::chrono::milliseconds connect_timeout{10000};
    // Connection keywords that win over the conninfo's, e.g. a password typed for this run only
    // (kept in memory, never written anywhere) or an application_name.
    Session::Overrides overrides{};
    // TCP keepalives and user timeout of every session (keepalive.hpp has the defaults and why):
    // a lock session whose network is cut without a FIN or RST is declared dead, and its guards
    // lost, within about idle + interval * count (25 s by default) instead of hours. Keywords the
    // conninfo sets itself (keepalives=0, keepalives_idle=60, ...) win over these.
    Keepalive keepalive{};
    // While a session of this pool holds a lock, its application_name names the lock (see
    // pglock/holder_identity.hpp): set in the statement that takes the lock, restored in the one
    // that releases it. false turns it off for every lock on this pool.
    bool show_in_application_name = true;
    // {app}: the session's own application_name; {lock}: "pglock:" and the lock's escaped name,
    // which is what monitors read back. Cut to 63 bytes, {app} first.
    std::string application_name_format{holder_identity::default_format};
    // Every new connection marks its backend as this client's (a random pglock.owner, one round
    // trip), and the library's lock and unlock statements act only on a backend that carries the
    // marker; a backend that already carries another client's is refused with
    // Error{session_changed}. Behind a pooler that lends one server connection to several clients
    // (PgBouncer pool_mode=transaction or statement) a session-level lock would stay behind on a
    // backend that serves someone else, and a second client could be granted it again.
    // This option adds the check that finds such a pooler when it is quiet too, before any lock
    // is taken: a second, short-lived connection to the same server must not reach this
    // connection's backend, and two more reads on this connection must reach the same backend.
    // It costs one extra connection (closed at once) and three round trips per new connection;
    // the error says which check found what. Turn it off only where that extra connection is a
    // problem: a pooler is then still refused when another pglock client shares the backend or
    // when statements move between backends, but not when an idle pool happens to hand this
    // connection the same backend for every statement.
    bool refuse_transaction_pooler = true;
};

class Pool;
namespace detail {
struct PoolLend;
}

// A session lent by a pool. Going out of scope gives it back when it is healthy and outside a
// transaction; a broken one (or one discard()ed) is closed, never lent again. A session that ran
// statements through Session::exec() (or a Transaction) may have taken session-level advisory
// locks: giving it back first runs `pg_advisory_unlock_all()` on its own backend only (one round
// trip, bounded; the session is closed if that fails or the backend is not its own: see
// PoolOptions::refuse_transaction_pooler), so the pool never lends a session holding one. Statements
// sent through native_handle() behind the library's back are not seen: discard() such a session.
class PooledSession {
public:
    PooledSession() = default;
    PooledSession(PooledSession&&) noexcept = default;
    PooledSession& operator=(PooledSession&& other) noexcept;
    PooledSession(const PooledSession&) = delete;
    PooledSession& operator=(const PooledSession&) = delete;
    ~PooledSession();

    Session& operator*() noexcept { return *session_; }
    Session* operator->() noexcept { return &*session_; }
    const Session* operator->() const noexcept { return &*session_; }
    explicit operator bool() const noexcept { return session_.has_value(); }

    // Close the session instead of giving it back (it may hold state the next user must not see).
    void discard() noexcept;
    // Give it back now (or close it if it is not reusable).
    void reset() noexcept;

private:
    friend class Pool;
    struct Shared;
    PooledSession(std::shared_ptr<Shared> pool, Session session) noexcept;

    std::shared_ptr<Shared> pool_;
    std::optional<Session> session_;
};

// A Pool is a handle on shared state (its sessions, its limit). Moving it moves the handle, and
// every Lock built on it shares that state: a Lock keeps working when its Pool moves (in a
// growing std::vector, say) or is destroyed first. The idle sessions close when the last of them
// goes. A moved-from Pool may only be assigned to or destroyed.
class Pool {
public:
    // conninfo: "host=... dbname=..." or "postgresql://..."; empty means libpq's defaults and the
    // PG* environment. No connection is made until the first acquire().
    explicit Pool(std::string conninfo, PoolOptions options = {});
    Pool(Pool&&) noexcept = default;
    Pool& operator=(Pool&&) noexcept = default;
    Pool(const Pool&) = delete;
    Pool& operator=(const Pool&) = delete;
    ~Pool();

    // A healthy session: an idle one (checked alive without a round trip), or a new connection
    // while fewer than max_size are open, or the next one given back. Honours the context.
    PooledSession acquire(const Context& ctx = {});

    const std::string& conninfo() const noexcept;
    const PoolOptions& options() const noexcept;
    std::size_t open_count() const;   // sessions open now, idle and lent
    std::size_t idle_count() const;

private:
    friend class Lock;
    friend struct detail::PoolLend;
    // acquire() with the idle session's liveness check left to the caller when `check_idle` is
    // false; `reused` says whether the session was idle (not a new connection).
    PooledSession lend(const Context& ctx, bool check_idle, bool& reused);
    explicit Pool(std::shared_ptr<PooledSession::Shared> shared) noexcept : shared_(std::move(shared)) {}
    // Another handle on this pool's state: what a Lock keeps. Empty for a moved-from Pool.
    Pool share() const noexcept { return Pool(shared_); }
    bool empty() const noexcept { return !shared_; }

    std::shared_ptr<PooledSession::Shared> shared_;
};

}  // namespace pglock
