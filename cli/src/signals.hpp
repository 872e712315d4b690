// SIGINT/SIGTERM/SIGHUP/SIGQUIT/SIGPIPE as a stop request, without doing anything in a signal
// handler.
#pragma once

#include <atomic>
#include <csignal>
#include <chrono>
#include <functional>
#include <mutex>
#include <optional>
#include <stop_token>
#include <string>
#include <thread>

namespace pglock::cli {

// Blocks the stop signals (SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE) and SIGUSR1 (used to stop
// the watcher) in the calling thread, so every thread started afterwards inherits the mask, and a
// watcher thread takes them with sigwait(): the first one requests stop on token() and calls
// on_signal on the watcher thread. A signal that was ignored when the process started (nohup, a
// script's background job) stays ignored. SIGHUP (a closed terminal) and SIGQUIT clean up like SIGINT:
// killed outright, a verb would leave a waiter queued on the server. A SIGPIPE that a write
// raises stays with the writing thread (blocked, never delivered): the write fails with EPIPE.
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

    // For work that cannot watch token(), such as reading a catalog that is a FIFO or names from
    // a terminal, and that leaves nothing on a server to clean up: while the returned object
    // lives, a signal (or one that came before) ends the process at once with
    // "pglock: interrupted by SIGxxx while <doing>" on stderr and exit 1.
    class ExitScope {
    public:
        ~ExitScope();
        ExitScope(const ExitScope&) = delete;
        ExitScope& operator=(const ExitScope&) = delete;

    private:
        friend class SignalStop;
        explicit ExitScope(SignalStop& owner) : owner_(owner) {}
        SignalStop& owner_;
    };
    [[nodiscard]] ExitScope exit_on_signal(std::string doing);

private:
    void watch();
    // Who sent a signal, to tell a second request from one request delivered twice.
    struct Sender {
        int sig = 0;
        long pid = -1;  // the sending process for kill(2) (SI_USER), else -1 (kernel, terminal)
        std::chrono::steady_clock::time_point at{};
        bool repeats(const Sender& first) const;
    };
    static constexpr std::chrono::milliseconds kRepeatWindow{100};

    std::function<void(int)> on_signal_;
    std::stop_source source_;
    std::atomic<int> signal_{0};
    std::atomic<bool> quitting_{false};
    std::mutex exit_mutex_;
    std::optional<std::string> exit_doing_;  // under exit_mutex_: set inside an ExitScope
    sigset_t set_{};
    std::thread thread_;
};

const char* signal_name(int sig) noexcept;

// "pglock: interrupted by SIGTERM <when>" on stderr; returns exit_error. For a verb that a signal
// stopped before it could give its answer: a script must not read the silence as one.
int report_interrupted(int sig, const std::string& when);

}  // namespace pglock::cli
