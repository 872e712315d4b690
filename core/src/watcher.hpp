// One thread for the whole process that watches the sockets of sessions holding locks, so a guard
// learns that its session died (backend terminated, server restart, cut connection) at once and
// without its owner polling. It only reads a socket when the guard's mutex is free; when the
// mutex is busy (a session() lease, a release, ...) it tries again a moment later, with backoff,
// until it gets it: a readiness report comes only once (EPOLLONESHOT) and is never dropped. A
// lease that ends meanwhile looks at the session itself.
//
// Watching starts a moment (kWatchDelay) after the lock is granted, on the watcher thread: most
// holds in a busy service are shorter than that and so cost no syscall at all, and a session that
// died within that moment is seen at once when its socket is added (it is already readable).
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <vector>

namespace pglock::detail {

struct Held;

class Watcher {
public:
    static Watcher& instance();
    static constexpr std::chrono::milliseconds kWatchDelay{20};

    // Asks the watcher thread to start watching the held session after kWatchDelay, unless it
    // was released by then.
    void watch_later(const std::shared_ptr<Held>& held);

    // Registers the socket; one readiness report, then rearm() is needed (EPOLLONESHOT).
    // Returns the registration id, or 0 when the socket could not be watched.
    std::uint64_t watch(int fd, const std::shared_ptr<Held>& held);
    void rearm(std::uint64_t id, int fd) noexcept;
    // `fd_still_open`: the socket is still ours (a closed one already left the epoll set).
    void unwatch(std::uint64_t id, int fd, bool fd_still_open) noexcept;

private:
    Watcher();
    void loop();
    void start_due();  // starts the watches whose delay has passed
    // A Held whose mutex was busy: `readable` (registration `id`) or the start of its watch.
    struct Retry {
        std::weak_ptr<Held> held;
        std::uint64_t id;  // 0: start_watching
        std::chrono::steady_clock::time_point due;
        std::chrono::milliseconds backoff;
    };
    void retry_later(const std::shared_ptr<Held>& held, std::uint64_t id, std::chrono::milliseconds backoff) noexcept;
    void run_due_retries();
    std::chrono::steady_clock::time_point next_retry() const noexcept;

    struct Pending {
        std::weak_ptr<Held> held;
        std::chrono::steady_clock::time_point due;
    };

    int epoll_fd_ = -1;
    std::mutex mutex_;
    std::unordered_map<std::uint64_t, std::weak_ptr<Held>> watched_;
    std::uint64_t next_id_ = 1;
    std::deque<Pending> pending_;
    std::vector<Retry> retries_;  // the watcher thread's own: no lock
    bool sleeping_ = false;  // blocked without a timeout: a new pending entry must wake it
    int wake_fd_ = -1;
    std::thread thread_;
};

}  // namespace pglock::detail
