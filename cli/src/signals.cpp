#include "signals.hpp"

#include <pthread.h>

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
