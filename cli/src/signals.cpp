#include "signals.hpp"

#include <pthread.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>

#include "pglock_cli/exit_codes.hpp"

namespace pglock::cli {

SignalStop::SignalStop(std::function<void(int)> on_signal) : on_signal_(std::move(on_signal)) {
    sigemptyset(&set_);
    sigaddset(&set_, SIGINT);
    sigaddset(&set_, SIGTERM);
    sigaddset(&set_, SIGUSR1);
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
    for (;;) {
        int sig = 0;
        if (sigwait(&set_, &sig) != 0) continue;
        if (sig == SIGUSR1) {
            if (quitting_) return;
            continue;  // someone else's SIGUSR1: not ours to act on
        }
        int expected = 0;
        if (signal_.compare_exchange_strong(expected, sig)) {
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

const char* signal_name(int sig) noexcept {
    switch (sig) {
        case SIGINT: return "SIGINT";
        case SIGTERM: return "SIGTERM";
        default: return "signal";
    }
}

}  // namespace pglock::cli
