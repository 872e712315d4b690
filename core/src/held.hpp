// The state behind a Guard: the session that holds the lock, and everything the watcher thread,
// the guard's owner and racing release() callers share.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <stop_token>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include "lock_impl.hpp"
#include "pglock/pool.hpp"

namespace pglock::detail {

struct Held : std::enable_shared_from_this<Held> {
    // `lock_pid`: pg_backend_pid() as the lock statement reported it. `restore_application_name`:
    // what the unlock statement puts back when the lock names its holder. `fencing_token`: what
    // the fenced lock statement handed out (LockOptions::fencing).
    // Takes `session` only as its very last step: if anything before throws, the caller still
    // has the granted session and must undo the grant.
    Held(std::shared_ptr<const LockImpl> lock, PooledSession&& session, int lock_pid,
         const std::string& restore_application_name = {}, std::optional<std::int64_t> fencing_token = {});
    // A Held that was never released (something threw between the grant and the Guard) releases
    // here, so no granted session goes back to the pool with the lock on it.
    ~Held();
    Held(const Held&) = delete;
    Held& operator=(const Held&) = delete;

    // The watcher thread's two entry points. Both only try the mutex (the watcher never blocks
    // on a guard); they return false when it was busy, and the watcher then calls again a
    // moment later until one succeeds: a one-shot readiness report is never dropped.
    // Starts the lost-lock watch (a moment after the grant); nothing when released meanwhile.
    bool start_watching();
    // The watcher saw the socket readable (registration `id`).
    bool on_readable(std::uint64_t id);
    // A SessionLease is ending (with `mutex` held): false when the caller's statements found the
    // session dead, and the lease must then declare_lost() after unlocking.
    bool after_lease() noexcept;
    // Turns the guard lost: flag, stop token, callbacks, log. Call without `mutex`.
    void declare_lost() noexcept;
    // errc::resource_deadlock_would_occur when this thread holds the session() lease (waiting
    // for the mutex would wait for itself).
    std::error_code release() noexcept;
    void add_lost_callback(std::function<void()> callback);
    // This thread holds the session() lease.
    bool leased_here() const noexcept { return lease_thread.load() == std::this_thread::get_id(); }

    const std::shared_ptr<const LockImpl> lock;
    const int backend_pid;
    const std::string restore_application_name;
    const std::optional<std::int64_t> fencing_token;
    const Clock::time_point acquired_at = Clock::now();

    std::stop_source lost_source;
    // Which of the watcher's queues holds the pending watch: set by watch_later() before the
    // guard is handed out, read by release().
    std::size_t pending_shard = 0;

    std::mutex mutex;        // guards everything below it; held by a SessionLease for its life
    PooledSession session;
    bool released = false;
    std::error_code release_result;
    bool watching = false;
    int watched_fd = -1;
    std::uint64_t watch_id = 0;
    bool release_after_lease = false;  // the Guard went away on the lease's own thread

    std::atomic<bool> release_done{false};   // release() has finished: Guard::released() without the mutex
    std::atomic<std::thread::id> lease_thread{};  // who holds the session() lease, if anyone
    std::atomic<bool> lost{false};
    std::atomic<bool> claimed{false};        // lock_held_info shows this guard (drop_claim() ends it)
    std::atomic<bool> check_pending{false};  // readable while the mutex was busy: its holder may look
    std::atomic<bool> wants_watch{false};    // the watch was due while the mutex was busy

private:
    // The process no longer believes it holds the lock: its lock_held_info series goes. Once.
    void drop_claim() noexcept;
    void watch_locked();
    void stop_watching_locked() noexcept;
    void rearm_locked() noexcept;

    std::mutex callback_mutex;
    std::vector<std::function<void()>> lost_callbacks;
    bool lost_declared = false;
};

}  // namespace pglock::detail
