#include "signals.hpp"

#include <pthread.h>
#include <unistd.h>

#include <iostream>
#include <cstdlib>
#include <cstring>

#include "pglock_cli/exit_codes.hpp"

namespace pglock::cli {

namespace {

// From the watcher thread while the main thread may be inside any call: one write(2), then
// _exit (no destructors, no atexit handlers, no stdio flush to race with the main thread).
[[noreturn]] void exit_interrupted(int sig, const std::string& doing) {
    const std::string line = std::string("pglock: interrupted by ") + signal_name(sig) + " while " + doing + "\n";
    [[maybe_unused]] const auto n = ::write(STDERR_FILENO, line.data(), line.size());
    ::_exit(exit_error);
}

}  // namespace

SignalStop::SignalStop(std::function<void(int)> on_signal) : on_signal_(std::move(on_signal)) {
    sigemptyset(&set_);
    sigaddset(&set_, SIGUSR1);
    for (const int sig : {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE}) {
        // Ignored on purpose by whoever started us (nohup: SIGHUP; a script's background job:
        // SIGINT and SIGQUIT): stays ignored.
        struct sigaction inherited {};
        if (sigaction(sig, nullptr, &inherited) == 0 && inherited.sa_handler == SIG_IGN) continue;
        sigaddset(&set_, sig);
    }
    pthread_sigmask(SIG_BLOCK, &set_, nullptr);
    thread_ = std::thread([this] { watch(); });
}

SignalStop::~SignalStop() {
    quitting_ = true;
    // SIGUSR1 to the watcher only (it is blocked everywhere, so it waits for sigwait there).
    pthread_kill(thread_.native_handle(), SIGUSR1);
    thread_.join();
}

void SignalStop::watch() {
    Sender first_sender;
    for (;;) {
        siginfo_t info{};
        const int sig = sigwaitinfo(&set_, &info);
        if (sig < 0) continue;  // EINTR
        if (sig == SIGUSR1) {
            if (quitting_) return;
            continue;  // someone else's SIGUSR1: not ours to act on
        }
        const Sender sender{sig, info.si_code == SI_USER ? info.si_pid : -1, std::chrono::steady_clock::now()};
        if (signal_.load() != 0 && sender.repeats(first_sender)) continue;
        bool first = false;
        {
            // Under the mutex: an ExitScope starting now either sees this signal or is seen here.
            std::lock_guard lk(exit_mutex_);
            if (exit_doing_) exit_interrupted(sig, *exit_doing_);
            int expected = 0;
            first = signal_.compare_exchange_strong(expected, sig);
        }
        if (first) {
            first_sender = sender;
            source_.request_stop();
            if (on_signal_) on_signal_(sig);
        } else {
            // A second signal: the user will not wait for the orderly end (a release stuck on a
            // server that stopped answering, say). Exit now; the server drops this process's
            // locks when it sees the connections close.
            const char* name = signal_name(sig);
            const char* msg = ": second signal, exiting now without waiting for the release\n";
            [[maybe_unused]] auto a = ::write(STDERR_FILENO, "pglock: ", 8);
            [[maybe_unused]] auto b = ::write(STDERR_FILENO, name, std::strlen(name));
            [[maybe_unused]] auto c = ::write(STDERR_FILENO, msg, std::strlen(msg));
            std::_Exit(exit_error);
        }
    }
}

// One request delivered twice: GNU timeout (without --foreground) sends its signal to the command
// and then to its whole process group, which the command is in, and some supervisors do the same.
// When the watcher takes the first before the second is posted, the two are seen apart; counted
// as a second signal, that turned `timeout 2 pglock status --watch` into an exit 1 "second
// signal" instead of the orderly stop. A repeat is the same signal from the same process (kill(2)
// with its pid known), within kRepeatWindow; a terminal's Ctrl+C comes from the kernel and
// always counts, as does a second `kill` (another process).
bool SignalStop::Sender::repeats(const Sender& first) const {
    return pid > 0 && sig == first.sig && pid == first.pid && at - first.at < kRepeatWindow;
}

SignalStop::ExitScope SignalStop::exit_on_signal(std::string doing) {
    std::lock_guard lk(exit_mutex_);
    if (const int sig = signal_.load()) exit_interrupted(sig, doing);
    exit_doing_ = std::move(doing);
    return ExitScope(*this);
}

SignalStop::ExitScope::~ExitScope() {
    std::lock_guard lk(owner_.exit_mutex_);
    owner_.exit_doing_.reset();
}

const char* signal_name(int sig) noexcept {
    switch (sig) {
        case SIGINT: return "SIGINT";
        case SIGTERM: return "SIGTERM";
        case SIGHUP: return "SIGHUP";
        case SIGQUIT: return "SIGQUIT";
        case SIGPIPE: return "SIGPIPE";
        default: return "signal";
    }
}

int report_interrupted(int sig, const std::string& when) {
    std::cerr << "pglock: interrupted by " << signal_name(sig) << " " << when << std::endl;
    return exit_error;
}

}  // namespace pglock::cli
