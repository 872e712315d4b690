// A TCP relay between libpq and the test server, for tests of network faults: it listens on
// 127.0.0.1 (an ephemeral port) and forwards every connection to the server, and on command
//   freeze()  stops forwarding both ways while every socket stays open: a cut network, no RST;
//   drop()    closes every connection with an RST (a reset, a crashed middlebox);
//   stall_replies_after(n)  lets every connection, open or new, pass n more bytes from the server
//             and then none, while the client's bytes still reach the server: a server that stops
//             in the middle of a result (and whose cancel requests still arrive);
//   resume()  forwards (and accepts) again after a freeze or a stall.
//
// A relay in user space cannot make a true silent cut on its own: the kernel under its sockets
// keeps acknowledging whatever arrives, keepalive probes included, so a frozen relay looks like a
// hung server, never like a dead network. enter_private_network() fixes that: it moves the test
// into a network namespace of its own where freeze() also takes the loopback interface down, so
// packets between libpq and the relay vanish and nothing answers (exactly what a cut cable does).
// The relay's upstream sockets are made in the original namespace and still reach the server.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace pglock::test {

// Moves the calling thread, and every thread it starts later, into a new network namespace that
// has only a loopback interface (brought up). Call it first thing in a test, before any thread
// is started. Returns "" on success, else why it could not (it needs CAP_SYS_ADMIN).
std::string enter_private_network();
bool in_private_network() noexcept;

class TcpRelay {
public:
    // Where the relay forwards to: a unix socket path, or a TCP host (numeric or name) and port.
    struct Target {
        std::string unix_path;
        std::string host;
        int port = 0;
    };
    // The test server of `dsn` (a conninfo or URI): its TCP port on its host, or (for a dsn that
    // names a socket directory) 127.0.0.1 and the same port, where tests/pg/cluster also listens.
    static Target target_of(const std::string& dsn);
    // `dsn` with host and port replaced by the relay's, every other keyword kept.
    std::string dsn_via(const std::string& dsn) const;

    explicit TcpRelay(Target target);
    ~TcpRelay();
    TcpRelay(const TcpRelay&) = delete;
    TcpRelay& operator=(const TcpRelay&) = delete;

    int port() const noexcept { return port_; }

    // Returns once nothing is forwarded any more (in a private network: once loopback is down).
    void freeze();
    // Closes every relayed connection, both sides, with an RST; new connections are still taken.
    void drop();
    // From now on each connection forwards at most `bytes` more bytes towards the client.
    void stall_replies_after(std::size_t bytes);
    // Undoes freeze() and stall_replies_after(): loopback up, forwarding and accepting again.
    void resume();

    std::size_t open_connections() const;
    std::size_t accepted() const noexcept { return accepted_.load(); }

private:
    struct Pair;
    void loop();
    void accept_one();
    void wake() noexcept;
    int connect_upstream() const;  // -1 on failure
    void set_loopback(bool up) const;

    Target target_;
    int listen_fd_ = -1;
    int wake_fd_ = -1;
    int port_ = 0;
    std::atomic<bool> stopping_{false};
    std::atomic<bool> frozen_{false};
    std::atomic<std::size_t> accepted_{0};
    mutable std::mutex mutex_;
    std::vector<std::unique_ptr<Pair>> pairs_;  // under mutex_
    std::uint64_t epoch_ = 0;                   // under mutex_; drop() makes the poll set stale
    std::optional<std::size_t> stall_after_;    // under mutex_; what a new connection may still pass
    std::thread thread_;
};

}  // namespace pglock::test
