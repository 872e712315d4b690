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

#include <array>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
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
    // The hold was released: its pending watch, if still there, is dropped now rather than when
    // it falls due. Never blocks on anything but a shard's mutex.
    void forget_pending(const Held& held) noexcept;

    // Registers the socket; one readiness report, then rearm() is needed (EPOLLONESHOT).
    // Returns the registration id, or 0 when the socket could not be watched.
    std::uint64_t watch(int fd, const std::shared_ptr<Held>& held);
    void rearm(std::uint64_t id, int fd) noexcept;
    // `fd_still_open`: the socket is still ours (a closed one already left the epoll set).
    void unwatch(std::uint64_t id, int fd, bool fd_still_open) noexcept;

private:
    Watcher();
    void loop();
    // Starts the watches whose delay has passed; returns when the next one falls due.
    std::chrono::steady_clock::time_point start_due();
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
        // To find the entry again at release() without locking `held`. Unique: `held` keeps the
        // block make_shared put the Held in allocated, so no other Held can get this address.
        const Held* address;
        std::chrono::steady_clock::time_point due;
    };
    // Pending watches, one queue per shard, a thread always using the same shard: a stream of
    // short holds on many threads then takes no lock that another core wrote a moment ago, and
    // a hold released before its watch was due takes its entry back out (usually the last one),
    // so nothing of it outlives the release. The watcher thread visits every shard once a batch.
    struct alignas(64) PendingShard {
        std::mutex mutex;
        // The rest with `mutex` held.
        bool empty() const noexcept { return head == entries.size(); }
        const Pending& front() const noexcept { return entries[head]; }
        void push_back(Pending entry);
        void pop_front() noexcept;
        // Takes out the entry of `address` if it is among the newest few.
        void erase_recent(const Held* address) noexcept;

    private:
        void clear_if_drained() noexcept;
        std::vector<Pending> entries;  // entries[head..] are pending, oldest first
        std::size_t head = 0;
    };
    static constexpr std::size_t kShards = 16;
    static std::size_t shard_of_this_thread() noexcept;
    // Takes the due entries out of every shard; returns the earliest due time still pending.
    std::chrono::steady_clock::time_point take_due(std::vector<std::shared_ptr<Held>>& due);

    int epoll_fd_ = -1;
    std::mutex mutex_;  // guards watched_ and next_id_
    std::unordered_map<std::uint64_t, std::weak_ptr<Held>> watched_;
    std::uint64_t next_id_ = 1;
    std::array<PendingShard, kShards> shards_;
    std::vector<Retry> retries_;  // the watcher thread's own: no lock
    // Blocked without a timeout: a new pending entry must wake it. Set before the watcher looks
    // at the shards for the last time and read after an entry is added, so one of the two sees
    // the other (the shard's mutex orders them).
    std::atomic<bool> sleeping_{false};
    int wake_fd_ = -1;
    std::thread thread_;
};

}  // namespace pglock::detail
