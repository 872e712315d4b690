// Freezes a server backend with SIGSTOP (the test clusters run on this machine), so that every
// statement sent to it stalls as on a hung server or a silently cut network; SIGCONT on
// destruction, so a failing test leaves no frozen backend behind.
#pragma once

#include <signal.h>

#include <stdexcept>
#include <string>

namespace pgt {

class StoppedBackend {
public:
    explicit StoppedBackend(int pid) : pid_(pid) {
        if (::kill(pid_, SIGSTOP) != 0) throw std::runtime_error("SIGSTOP of backend " + std::to_string(pid) + " failed");
    }
    ~StoppedBackend() { ::kill(pid_, SIGCONT); }
    StoppedBackend(const StoppedBackend&) = delete;
    StoppedBackend& operator=(const StoppedBackend&) = delete;

private:
    int pid_;
};

}  // namespace pgt
