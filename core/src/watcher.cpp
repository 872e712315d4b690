#include "watcher.hpp"

#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <utility>
#include <vector>

#include "held.hpp"

namespace pglock::detail {

Watcher& Watcher::instance() {
    // Never destroyed: guards may be released from static destructors or other threads at exit,
    // and the thread must not be joined from under them.
    static Watcher* const watcher = new Watcher();
    return *watcher;
}

namespace {
constexpr std::uint64_t kWakeId = 0;  // registration ids start at 1
constexpr std::chrono::milliseconds kBatch{10};  // a lost notice comes at most this much later
// Retries of a busy guard: the first after kBatch, then doubling up to kRetryMax. Only a long
// session() lease keeps a mutex busy that long, and its end looks at the session anyway.
constexpr std::chrono::milliseconds kRetryMax{80};
}

Watcher::Watcher() : epoll_fd_(::epoll_create1(EPOLL_CLOEXEC)), wake_fd_(::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)) {
    if (epoll_fd_ >= 0 && wake_fd_ >= 0) {
        epoll_event ev{};
        ev.events = EPOLLIN;
        ev.data.u64 = kWakeId;
        ::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, wake_fd_, &ev);
        thread_ = std::thread([this] { loop(); });
        thread_.detach();
    }
}

std::uint64_t Watcher::watch(int fd, const std::shared_ptr<Held>& held) {
    if (epoll_fd_ < 0 || fd < 0) return 0;
    std::uint64_t id;
    {
        std::lock_guard lock(mutex_);
        id = next_id_++;
        watched_.emplace(id, held);
    }
    epoll_event ev{};
    ev.events = EPOLLIN | EPOLLRDHUP | EPOLLONESHOT;
    ev.data.u64 = id;
    if (::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, fd, &ev) != 0) {
        std::lock_guard lock(mutex_);
        watched_.erase(id);
        return 0;
    }
    return id;
}

void Watcher::rearm(std::uint64_t id, int fd) noexcept {
    epoll_event ev{};
    ev.events = EPOLLIN | EPOLLRDHUP | EPOLLONESHOT;
    ev.data.u64 = id;
    ::epoll_ctl(epoll_fd_, EPOLL_CTL_MOD, fd, &ev);
}

void Watcher::unwatch(std::uint64_t id, int fd, bool fd_still_open) noexcept {
    if (fd_still_open) ::epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, fd, nullptr);
    std::lock_guard lock(mutex_);
    watched_.erase(id);
}

std::size_t Watcher::shard_of_this_thread() noexcept {
    static std::atomic<std::size_t> next{0};
    thread_local const std::size_t shard = next.fetch_add(1, std::memory_order_relaxed) % kShards;
    return shard;
}

void Watcher::PendingShard::clear_if_drained() noexcept {
    if (empty()) {
        entries.clear();
        head = 0;
    }
}

void Watcher::PendingShard::push_back(Pending entry) {
    if (head > 0 && head * 2 >= entries.size()) {
        // Taken entries are only cleared at the front now and then: the vector stays put.
        entries.erase(entries.begin(), entries.begin() + static_cast<std::ptrdiff_t>(head));
        head = 0;
    }
    entries.push_back(std::move(entry));
}

void Watcher::PendingShard::pop_front() noexcept {
    entries[head].held.reset();
    ++head;
    clear_if_drained();
}

void Watcher::PendingShard::erase_recent(const Held* address) noexcept {
    // A thread's holds are mostly released newest first, so the entry is at or near the back;
    // one further in stays until it falls due (and then finds the hold released).
    constexpr std::size_t kLookBack = 4;
    for (std::size_t i = entries.size(), seen = 0; i > head && seen < kLookBack; --i, ++seen) {
        if (entries[i - 1].address != address) continue;
        entries.erase(entries.begin() + static_cast<std::ptrdiff_t>(i - 1));
        clear_if_drained();
        return;
    }
}

void Watcher::watch_later(const std::shared_ptr<Held>& held) {
    const std::size_t index = shard_of_this_thread();
    held->pending_shard = index;
    PendingShard& shard = shards_[index];
    {
        std::lock_guard lock(shard.mutex);
        shard.push_back({held, held.get(), std::chrono::steady_clock::now() + kWatchDelay});
    }
    if (sleeping_.load() && sleeping_.exchange(false)) {
        const std::uint64_t one = 1;
        [[maybe_unused]] auto n = ::write(wake_fd_, &one, sizeof one);
    }
}

void Watcher::forget_pending(const Held& held) noexcept {
    PendingShard& shard = shards_[held.pending_shard];
    std::lock_guard lock(shard.mutex);
    shard.erase_recent(&held);
}

std::chrono::steady_clock::time_point Watcher::take_due(std::vector<std::shared_ptr<Held>>& due) {
    auto next = std::chrono::steady_clock::time_point::max();
    const auto now = std::chrono::steady_clock::now();
    for (PendingShard& shard : shards_) {
        std::lock_guard lock(shard.mutex);
        while (!shard.empty() && shard.front().due <= now) {
            if (auto held = shard.front().held.lock()) due.push_back(std::move(held));
            shard.pop_front();
        }
        if (!shard.empty()) next = std::min(next, shard.front().due);
    }
    return next;
}

std::chrono::steady_clock::time_point Watcher::start_due() {
    std::vector<std::shared_ptr<Held>> due;
    const auto next = take_due(due);
    for (auto& held : due) {
        if (!held->start_watching()) retry_later(held, 0, kBatch);  // a no-op for holds released meanwhile
    }
    return next;
}

void Watcher::retry_later(const std::shared_ptr<Held>& held, std::uint64_t id, std::chrono::milliseconds backoff) noexcept {
    try {
        retries_.push_back({held, id, std::chrono::steady_clock::now() + backoff, backoff});
    } catch (...) {
        // Out of memory: the flag the Held kept (check_pending / wants_watch) is then seen only
        // when a session() lease ends.
    }
}

std::chrono::steady_clock::time_point Watcher::next_retry() const noexcept {
    auto next = std::chrono::steady_clock::time_point::max();
    for (const auto& r : retries_) next = std::min(next, r.due);
    return next;
}

void Watcher::run_due_retries() {
    if (retries_.empty()) return;
    const auto now = std::chrono::steady_clock::now();
    // Due entries to the back, then taken out one by one; a retry scheduled again is appended
    // after them. Nothing here allocates (this thread must not die of a bad_alloc).
    const auto first_due = std::partition(retries_.begin(), retries_.end(), [&](const Retry& r) { return r.due > now; });
    const auto keep = static_cast<std::size_t>(first_due - retries_.begin());
    for (std::size_t n = retries_.size() - keep; n > 0; --n) {
        Retry r = std::move(retries_[keep]);
        retries_.erase(retries_.begin() + static_cast<std::ptrdiff_t>(keep));
        auto held = r.held.lock();
        if (!held) continue;  // released and gone
        const bool done = r.id == 0 ? held->start_watching() : held->on_readable(r.id);
        if (!done) retry_later(held, r.id, std::min(r.backoff * 2, kRetryMax));
    }
}

void Watcher::loop() {
    epoll_event events[64];
    auto next_pending = std::chrono::steady_clock::time_point::max();
    for (;;) {
        auto next = std::min(next_retry(), next_pending);
        int timeout = -1;
        if (next == std::chrono::steady_clock::time_point::max()) {
            // Nothing to wait for but sockets: announce the sleep, then look at the shards once
            // more, so that an entry added meanwhile is either seen here or wakes the thread.
            sleeping_ = true;
            next_pending = start_due();
            next = std::min(next_retry(), next_pending);
            if (next != std::chrono::steady_clock::time_point::max()) sleeping_ = false;
        }
        if (next != std::chrono::steady_clock::time_point::max()) {
            // Wake in batches: with a steady stream of short holds the front entry is always
            // almost due, and waking for each would cost a context switch per hold.
            const auto left = next - std::chrono::steady_clock::now();
            timeout = static_cast<int>(
                std::max<long long>(kBatch.count(), std::chrono::ceil<std::chrono::milliseconds>(left).count()));
        }
        const int n = ::epoll_wait(epoll_fd_, events, 64, timeout);
        if (n < 0 && errno != EINTR) return;
        sleeping_ = false;
        next_pending = start_due();
        for (int i = 0; i < n; ++i) {
            const std::uint64_t id = events[i].data.u64;
            if (id == kWakeId) {
                std::uint64_t count;
                [[maybe_unused]] auto r = ::read(wake_fd_, &count, sizeof count);
                continue;
            }
            std::shared_ptr<Held> held;
            {
                std::lock_guard lock(mutex_);
                if (auto it = watched_.find(id); it != watched_.end()) held = it->second.lock();
            }
            if (held && !held->on_readable(id)) retry_later(held, id, kBatch);
        }
        run_due_retries();
    }
}

}  // namespace pglock::detail
