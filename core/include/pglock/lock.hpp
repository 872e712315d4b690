// Named advisory locks: the C++ twin of the Go package's lock.Lock.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <stop_token>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include "pglock/context.hpp"
#include "pglock/error.hpp"
#include "pglock/key.hpp"
#include "pglock/observe.hpp"
#include "pglock/pool.hpp"
#include "pglock/transaction.hpp"

namespace pglock {

enum class Mode {
    exclusive,  // pg_advisory_lock family
    shared,     // pg_advisory_lock_shared family: many shared holders, no exclusive one
};

// How acquire() waits for a lock another session holds.
enum class AcquireStrategy {
    // pg_advisory_lock: the server queues the waiter and grants in arrival order (FIFO), and the
    // grant comes the moment the holder lets go. The waiting statement keeps a snapshot for the
    // whole wait: pg_stat_activity shows its backend_xmin, which holds back VACUUM's horizon on
    // every table and makes CREATE INDEX CONCURRENTLY wait for it. Fine for short waits.
    queue,
    // pg_try_advisory_lock again and again, with capped exponential backoff and jitter, and the
    // session idle (no transaction, no snapshot, backend_xmin NULL) between tries. Nothing is
    // pinned however long the wait; but there is no fairness (a newcomer can win over a
    // long waiter) and the grant comes up to one backoff interval late.
    poll,
};

// The backoff of AcquireStrategy::poll: the n-th pause is drawn uniformly from
// [d/2, d] with d = min(max, initial * 2^n), so many pollers do not retry in step.
struct PollBackoff {
    std::chrono::milliseconds initial{10};
    std::chrono::milliseconds max{1000};
};

struct LockOptions {
    std::shared_ptr<Logger> logger{};    // nullptr: silent
    std::shared_ptr<Metrics> metrics{};  // nullptr: no series
    Mode mode = Mode::exclusive;
    // Advisory locks taken on a hot standby are local to it and protect nothing; acquiring there
    // fails with Errc::on_standby unless this is set.
    bool allow_standby = false;
    // Name this lock in the holding session's application_name (when the pool does too). false:
    // the lock statements stay the bare pg_advisory_* calls.
    bool show_in_application_name = true;
    // Overrides the pool's application_name_format when not empty.
    std::string application_name_format{};
    AcquireStrategy strategy = AcquireStrategy::queue;  // how acquire() waits; see AcquireStrategy
    PollBackoff poll{};                                  // AcquireStrategy::poll only
    // Opt in to the process-wide KeyRegistry: building this Lock throws Error{key_collision} when
    // another name that opted in already uses its key.
    bool refuse_key_collision = false;
    // Hand out a fencing token with every acquisition (Guard::fencing_token()): a number per key
    // that strictly increases from holder to holder, taken from the table pglock::fence::init()
    // creates, in the same statement as the lock. Exclusive session-level locks only: a Lock with
    // fencing and Mode::shared throws std::invalid_argument, and so does try_acquire_xact on it.
    // Each acquisition becomes a write transaction (a WAL flush); not on a standby.
    bool fencing = false;
};

namespace detail {
struct Held;
struct LockImpl;
}

// Exclusive access to the session a guard holds its lock on. While a lease is alive the
// lost-lock watcher leaves the session alone; when the lease ends, a session that died under it
// turns the guard lost. Other threads' release() and session() wait for the lease to end; on
// the lease's own thread they refuse (see Guard).
class SessionLease {
public:
    SessionLease(SessionLease&&) noexcept;
    SessionLease& operator=(SessionLease&&) = delete;
    ~SessionLease();
    Session& operator*() noexcept { return *session_; }
    Session* operator->() noexcept { return session_; }

private:
    friend class Guard;
    SessionLease(std::shared_ptr<detail::Held> held, Session* session) noexcept;
    std::shared_ptr<detail::Held> held_;
    Session* session_;
};

// Proof of a held session-level lock. Move-only; releasing is idempotent and thread-safe, and
// the destructor releases. The unlock statement drops every advisory lock the session holds (the
// key taken again on session(), other keys), so the session goes back to the pool holding none.
// If the unlock fails, the session is closed rather than given back with the lock still on it.
class Guard {
public:
    Guard(Guard&&) noexcept = default;
    Guard& operator=(Guard&& other) noexcept;
    Guard(const Guard&) = delete;
    Guard& operator=(const Guard&) = delete;
    ~Guard();

    // Unlocks and gives the session back. The first call does the work; any other call, racing
    // or later, waits for it and returns its result. Errors: Errc::lock_lost when the session
    // had died, Errc::release_failed when the unlock failed (the session is then closed),
    // Errc::session_changed when the unlock ran on another backend than the lock (a
    // transaction-mode pooler): the lock may still be held by backend_pid(), whatever ran
    // between on session() may have run elsewhere too, and the session is closed. The unlock
    // cannot be stopped: it is bounded (5 s), then the session is closed (release_failed).
    // On a thread that holds this guard's session() lease it returns
    // std::errc::resource_deadlock_would_occur at once and changes nothing (it would wait for
    // itself); the destructor there releases when the lease ends.
    std::error_code release() noexcept;
    // A release has completed. Never waits (a health-check thread may poll it).
    bool released() const noexcept;

    // The session died while the lock was held (backend terminated, server restart, network cut):
    // the lock is gone. Detected by a watcher thread within a moment, with no polling by the
    // caller.
    bool lost() const noexcept;
    // Stop is requested on this token when the lock is lost: pass it to the work done under the
    // lock so it stops too.
    std::stop_token lost_token() const noexcept;
    // Called once when the lock is lost, on the watcher thread (or on the thread whose lease or
    // release found the session dead). Every callback registered is kept and called, in order.
    // If it is lost already, the callback runs at once on the calling thread: do not call
    // on_lost() while holding a mutex the callback takes. Keep it short; it may call release().
    void on_lost(std::function<void()> callback);

    // The lock's own session, for work that must run on it (acquire_conn). Throws
    // Error{lock_lost} when lost, Error{release_failed} when released, and std::system_error
    // (std::errc::resource_deadlock_would_occur) when this thread already holds the lease.
    SessionLease session();

    const std::string& name() const noexcept;
    std::int64_t key() const noexcept;
    Mode mode() const noexcept;
    // pg_backend_pid() as the lock statement itself reported it (behind a pooler, PQbackendPID
    // is the pooler's own number, not the server's).
    int backend_pid() const noexcept;
    Clock::time_point acquired_at() const noexcept;
    // The fencing token this acquisition was given (LockOptions::fencing), nullopt without
    // fencing. Greater than every token handed out for the key before; pass it with every write
    // done under the lock so the receiving system can reject a holder that lost the lock.
    std::optional<std::int64_t> fencing_token() const noexcept;

    // Made by Lock; detail::Held is the library's own.
    explicit Guard(std::shared_ptr<detail::Held> held) noexcept : held_(std::move(held)) {}

private:
    std::shared_ptr<detail::Held> held_;
};

class Lock {
public:
    // Throws Error{empty_name} for "", Error{nil_db} for a null pool, and std::invalid_argument
    // when options.metrics already has a live Lock of this name or options asks for fencing on a
    // shared lock.
    Lock(Pool* pool, std::string name, LockOptions options = {});
    Lock(Pool& pool, std::string name, LockOptions options = {}) : Lock(&pool, std::move(name), std::move(options)) {}
    Lock(Lock&&) noexcept;
    Lock& operator=(Lock&&) noexcept;
    ~Lock();

    // pg_try_advisory_lock on a pooled session. nullopt when another session holds it (contended
    // is not an error). Throws Error{acquire_failed} (with SQLSTATE) when the database fails,
    // Error{on_standby}, Error{canceled} / Error{deadline_exceeded} from the context.
    std::optional<Guard> try_acquire(const Context& ctx = {});

    // Waits until granted, or until the context's stop or deadline. With AcquireStrategy::queue
    // (the default) that is pg_advisory_lock, and stop or deadline cancel the server-side wait
    // (a grant that raced the cancel is released before returning); with AcquireStrategy::poll
    // it is pg_try_advisory_lock with backoff, and stop or deadline end the pause between tries.
    Guard acquire(const Context& ctx = {});

    // acquire(); use guard.session() to run the critical section on the lock's own session.
    Guard acquire_conn(const Context& ctx = {}) { return acquire(ctx); }

    // pg_try_advisory_xact_lock inside the caller's open transaction; released by its commit or
    // rollback. tx == nullptr or not active -> Error{acquire_failed}. A Lock with fencing throws
    // std::invalid_argument: there is no guard to carry the token, and the caller's rollback
    // would take the token back after it was handed out.
    bool try_acquire_xact(Transaction* tx, const Context& ctx = {});

    // Snapshot: try, and release at once when it succeeded. Racy by nature: by the time the
    // caller reads the answer another session may have taken or dropped the lock. For admin
    // pages, not for control flow. With fencing, a free lock's try takes a token like any grant.
    bool is_held(const Context& ctx = {});

    // The backend PIDs that hold the key now (granted rows in pg_locks), sorted.
    std::vector<int> holders(const Context& ctx = {});

    // try_acquire, run fn under the lock, release on every path. Returns false (fn not called)
    // when contended. fn's exceptions propagate after the release.
    bool run_once(const Context& ctx, const std::function<void(Guard&)>& fn);
    // acquire (waiting), run fn, release on every path.
    void run_blocking(const Context& ctx, const std::function<void(Guard&)>& fn);

    const std::string& name() const noexcept;
    std::int64_t key() const noexcept;
    LockTag tag() const noexcept { return tag_of(key()); }
    Mode mode() const noexcept;

private:
    std::shared_ptr<detail::LockImpl> impl_;
};

// One-shot helpers like the Go package's lock.RunOnce / lock.RunBlocking.
bool run_once(Pool& pool, std::string name, const Context& ctx, const std::function<void(Guard&)>& fn,
              LockOptions options = {});
void run_blocking(Pool& pool, std::string name, const Context& ctx, const std::function<void(Guard&)>& fn,
                  LockOptions options = {});

}  // namespace pglock
