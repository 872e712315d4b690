// SIGINT/SIGTERM as a stop request, without doing anything in a signal handler.
#pragma once

#include <atomic>
#include <csignal>
#include <functional>
#include <stop_token>
#include <thread>

namespace pglock::cli {

// Blocks SIGINT, SIGTERM (and SIGUSR1, used to stop the watcher) in the calling thread, so every
// thread started afterwards inherits the mask, and a watcher thread takes them with sigwait():
// the first one requests stop on token() and calls on_signal on the watcher thread.
// Construct it before any other thread exists (before the first pool connection), or a library
// thread with the default mask could receive the signal and kill the process.
// The mask is left in place at destruction: the process is about to exit, and unblocking would
// deliver a late signal with its default (killing) action.
class SignalStop {
public:
    explicit SignalStop(std::function<void(int)> on_signal = {});
    ~SignalStop();
    SignalStop(const SignalStop&) = delete;
    SignalStop& operator=(const SignalStop&) = delete;

    std::stop_token token() const noexcept { return source_.get_token(); }
    int signal() const noexcept { return signal_.load(); }  // 0 until one arrived

private:
    void watch();
    std::function<void(int)> on_signal_;
    std::stop_source source_;
    std::atomic<int> signal_{0};
    std::atomic<bool> quitting_{false};
    sigset_t set_{};
    std::thread thread_;
};

const char* signal_name(int sig) noexcept;

}  // namespace pglock::cli
