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

#include "lock_impl.hpp"
#include "pglock/pool.hpp"

namespace pglock::detail {

struct Held : std::enable_shared_from_this<Held> {
    // `lock_pid`: pg_backend_pid() as the lock statement reported it. `restore_application_name`:
    // what the unlock statement puts back when the lock names its holder. `fencing_token`: what
    // the fenced lock statement handed out (LockOptions::fencing).
    Held(std::shared_ptr<const LockImpl> lock, PooledSession session, int lock_pid,
         std::string restore_application_name = {}, std::optional<std::int64_t> fencing_token = {});

    // Starts the lost-lock watch (on the watcher thread, a moment after the grant); nothing
    // when the guard was released meanwhile.
    void start_watching();
    // The watcher saw the socket readable (registration `id`).
    void on_readable(std::uint64_t id);
    // A SessionLease is ending (with `mutex` held): false when the caller's statements found the
    // session dead, and the lease must then declare_lost() after unlocking.
    bool after_lease() noexcept;
    // Turns the guard lost: flag, stop token, callbacks, log. Call without `mutex`.
    void declare_lost() noexcept;
    std::error_code release() noexcept;
    void add_lost_callback(std::function<void()> callback);

    const std::shared_ptr<const LockImpl> lock;
    const int backend_pid;
    const std::string restore_application_name;
    const std::optional<std::int64_t> fencing_token;
    const Clock::time_point acquired_at = Clock::now();

    std::mutex mutex;        // guards everything below it; held by a SessionLease for its life
    PooledSession session;
    bool released = false;
    std::error_code release_result;
    bool watching = false;
    int watched_fd = -1;
    std::uint64_t watch_id = 0;

    std::atomic<bool> lost{false};
    std::atomic<bool> check_pending{false};  // readable while leased: look when the lease ends
    std::atomic<bool> wants_watch{false};    // the watch was due while leased: start it after
    std::stop_source lost_source;

private:
    void watch_locked();
    void stop_watching_locked() noexcept;
    void rearm_locked() noexcept;

    std::mutex callback_mutex;
    std::function<void()> lost_callback;
    bool lost_declared = false;
};

}  // namespace pglock::detail
