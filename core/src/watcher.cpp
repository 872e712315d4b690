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

void Watcher::watch_later(const std::shared_ptr<Held>& held) {
    bool wake = false;
    {
        std::lock_guard lock(mutex_);
        pending_.push_back({held, std::chrono::steady_clock::now() + kWatchDelay});
        wake = std::exchange(sleeping_, false);
    }
    if (wake) {
        const std::uint64_t one = 1;
        [[maybe_unused]] auto n = ::write(wake_fd_, &one, sizeof one);
    }
}

void Watcher::start_due() {
    std::vector<std::shared_ptr<Held>> due;
    {
        std::lock_guard lock(mutex_);
        const auto now = std::chrono::steady_clock::now();
        while (!pending_.empty() && pending_.front().due <= now) {
            if (auto held = pending_.front().held.lock()) due.push_back(std::move(held));
            pending_.pop_front();
        }
    }
    for (auto& held : due) held->start_watching();  // a no-op for holds released meanwhile
}

void Watcher::loop() {
    epoll_event events[64];
    for (;;) {
        int timeout = -1;
        {
            std::lock_guard lock(mutex_);
            if (pending_.empty()) {
                sleeping_ = true;
            } else {
                // Wake in batches: with a steady stream of short holds the front entry is always
                // almost due, and waking for each would cost a context switch per hold.
                const auto left = pending_.front().due - std::chrono::steady_clock::now();
                timeout = static_cast<int>(std::max<long long>(
                    kBatch.count(), std::chrono::ceil<std::chrono::milliseconds>(left).count()));
            }
        }
        const int n = ::epoll_wait(epoll_fd_, events, 64, timeout);
        if (n < 0 && errno != EINTR) return;
        start_due();
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
            if (held) held->on_readable(id);
        }
    }
}

}  // namespace pglock::detail
