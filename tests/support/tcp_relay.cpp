#include "tcp_relay.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <libpq-fe.h>
#include <net/if.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <utility>

namespace pglock::test {

namespace {

// The namespace the process started in, kept open so that the relay can still reach the server
// from a private network. -1 when enter_private_network() was not called (or failed).
int g_original_netns = -1;

std::string errno_text(const char* what) { return std::string(what) + ": " + std::strerror(errno); }

void set_nonblocking(int fd) { ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK); }

// An RST instead of a FIN when the socket is closed.
void close_with_reset(int fd) noexcept {
    if (fd < 0) return;
    linger l{1, 0};
    ::setsockopt(fd, SOL_SOCKET, SO_LINGER, &l, sizeof l);
    ::close(fd);
}

bool loopback_up(int any_socket_in_netns, bool up, std::string* why) {
    ifreq req{};
    std::strncpy(req.ifr_name, "lo", IFNAMSIZ - 1);
    if (::ioctl(any_socket_in_netns, SIOCGIFFLAGS, &req) != 0) {
        if (why) *why = errno_text("SIOCGIFFLAGS lo");
        return false;
    }
    if (up) req.ifr_flags = static_cast<short>(req.ifr_flags | IFF_UP);
    else req.ifr_flags = static_cast<short>(req.ifr_flags & ~IFF_UP);
    if (::ioctl(any_socket_in_netns, SIOCSIFFLAGS, &req) != 0) {
        if (why) *why = errno_text("SIOCSIFFLAGS lo");
        return false;
    }
    return true;
}

}  // namespace

std::string enter_private_network() {
    if (g_original_netns >= 0) return "";
    const int original = ::open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
    if (original < 0) return errno_text("open /proc/thread-self/ns/net");
    if (::unshare(CLONE_NEWNET) != 0) {
        const std::string why = errno_text("unshare(CLONE_NEWNET) (needs CAP_SYS_ADMIN)");
        ::close(original);
        return why;
    }
    const int s = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    std::string why;
    const bool ok = s >= 0 && loopback_up(s, true, &why);
    if (s >= 0) ::close(s);
    if (!ok) {
        ::setns(original, CLONE_NEWNET);
        ::close(original);
        return why.empty() ? errno_text("socket") : why;
    }
    g_original_netns = original;
    return "";
}

bool in_private_network() noexcept { return g_original_netns >= 0; }

struct TcpRelay::Pair {
    int client = -1;
    int upstream = -1;
    std::string to_upstream;  // read from the client, not yet written upstream
    std::string to_client;
    std::optional<std::size_t> to_client_budget;  // stall_replies_after(): bytes it may still pass

    ~Pair() {
        if (client >= 0) ::close(client);
        if (upstream >= 0) ::close(upstream);
    }
};

TcpRelay::Target TcpRelay::target_of(const std::string& dsn) {
    char* err = nullptr;
    PQconninfoOption* opts = PQconninfoParse(dsn.c_str(), &err);
    if (!opts) {
        std::string msg = err ? err : "out of memory";
        PQfreemem(err);
        throw std::runtime_error("TcpRelay: bad dsn: " + msg);
    }
    std::string host, hostaddr, port;
    for (PQconninfoOption* o = opts; o->keyword; ++o) {
        if (!o->val) continue;
        if (std::strcmp(o->keyword, "host") == 0) host = o->val;
        if (std::strcmp(o->keyword, "hostaddr") == 0) hostaddr = o->val;
        if (std::strcmp(o->keyword, "port") == 0) port = o->val;
    }
    PQconninfoFree(opts);
    Target t;
    t.port = port.empty() ? 5432 : std::stoi(port);
    if (!hostaddr.empty()) t.host = hostaddr;
    else if (host.empty() || host[0] == '/') t.host = "127.0.0.1";  // tests/pg/cluster listens there too
    else t.host = host;
    return t;
}

std::string TcpRelay::dsn_via(const std::string& dsn) const {
    char* err = nullptr;
    PQconninfoOption* opts = PQconninfoParse(dsn.c_str(), &err);
    if (!opts) {
        PQfreemem(err);
        throw std::runtime_error("TcpRelay: bad dsn");
    }
    auto quoted = [](const std::string& v) {
        std::string out = "'";
        for (char c : v) {
            if (c == '\'' || c == '\\') out += '\\';
            out += c;
        }
        return out + "'";
    };
    std::string out = "host=127.0.0.1 port=" + std::to_string(port_);
    for (PQconninfoOption* o = opts; o->keyword; ++o) {
        if (!o->val) continue;
        const std::string key = o->keyword;
        if (key == "host" || key == "hostaddr" || key == "port") continue;
        out += " " + key + "=" + quoted(o->val);
    }
    PQconninfoFree(opts);
    return out;
}

TcpRelay::TcpRelay(Target target) : target_(std::move(target)) {
    listen_fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (listen_fd_ < 0) throw std::runtime_error(errno_text("TcpRelay: socket"));
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = 0;
    socklen_t len = sizeof addr;
    if (::bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || ::listen(listen_fd_, 64) != 0 ||
        ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
        const std::string why = errno_text("TcpRelay: listen on 127.0.0.1");
        ::close(listen_fd_);
        throw std::runtime_error(why);
    }
    port_ = ntohs(addr.sin_port);
    wake_fd_ = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    thread_ = std::thread([this] { loop(); });
}

TcpRelay::~TcpRelay() {
    if (frozen_) set_loopback(true);  // leave the network as it was found
    stopping_ = true;
    wake();
    if (thread_.joinable()) thread_.join();
    {
        std::lock_guard lock(mutex_);
        pairs_.clear();
    }
    ::close(listen_fd_);
    ::close(wake_fd_);
}

void TcpRelay::wake() noexcept {
    const std::uint64_t one = 1;
    [[maybe_unused]] auto n = ::write(wake_fd_, &one, sizeof one);
}

void TcpRelay::set_loopback(bool up) const {
    // The listening socket lives in the private namespace: its ioctls act on that loopback.
    if (in_private_network()) loopback_up(listen_fd_, up, nullptr);
}

void TcpRelay::freeze() {
    std::lock_guard lock(mutex_);  // the loop forwards only while holding it
    frozen_ = true;
    set_loopback(false);
    wake();
}

void TcpRelay::stall_replies_after(std::size_t bytes) {
    std::lock_guard lock(mutex_);
    stall_after_ = bytes;
    for (auto& p : pairs_) p->to_client_budget = bytes;
    wake();
}

void TcpRelay::resume() {
    std::lock_guard lock(mutex_);
    set_loopback(true);
    frozen_ = false;
    stall_after_.reset();
    for (auto& p : pairs_) p->to_client_budget.reset();
    wake();
}

void TcpRelay::drop() {
    std::vector<std::unique_ptr<Pair>> gone;
    {
        std::lock_guard lock(mutex_);
        gone.swap(pairs_);
        ++epoch_;
        for (auto& p : gone) {
            close_with_reset(std::exchange(p->client, -1));
            close_with_reset(std::exchange(p->upstream, -1));
        }
    }
    wake();
}

std::size_t TcpRelay::open_connections() const {
    std::lock_guard lock(mutex_);
    return pairs_.size();
}

int TcpRelay::connect_upstream() const {
    // Made in the namespace the process started in: the server is reachable only from there
    // once the test moved into a private network.
    int here = -1;
    if (g_original_netns >= 0) {
        here = ::open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
        if (here < 0 || ::setns(g_original_netns, CLONE_NEWNET) != 0) {
            if (here >= 0) ::close(here);
            return -1;
        }
    }
    int fd = -1;
    if (!target_.unix_path.empty()) {
        fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        sockaddr_un addr{};
        addr.sun_family = AF_UNIX;
        std::strncpy(addr.sun_path, target_.unix_path.c_str(), sizeof addr.sun_path - 1);
        if (fd >= 0 && ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
            ::close(fd);
            fd = -1;
        }
    } else {
        addrinfo hints{};
        hints.ai_family = AF_UNSPEC;
        hints.ai_socktype = SOCK_STREAM;
        addrinfo* found = nullptr;
        if (::getaddrinfo(target_.host.c_str(), std::to_string(target_.port).c_str(), &hints, &found) == 0) {
            for (addrinfo* a = found; a && fd < 0; a = a->ai_next) {
                fd = ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
                if (fd >= 0 && ::connect(fd, a->ai_addr, a->ai_addrlen) != 0) {
                    ::close(fd);
                    fd = -1;
                }
            }
            ::freeaddrinfo(found);
        }
    }
    if (here >= 0) {
        ::setns(here, CLONE_NEWNET);
        ::close(here);
    }
    if (fd >= 0) set_nonblocking(fd);
    return fd;
}

void TcpRelay::accept_one() {
    const int client = ::accept4(listen_fd_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (client < 0) return;
    const int upstream = connect_upstream();
    if (upstream < 0) {
        close_with_reset(client);
        return;
    }
    auto pair = std::make_unique<Pair>();
    pair->client = client;
    pair->upstream = upstream;
    pair->to_client_budget = stall_after_;
    pairs_.push_back(std::move(pair));
    ++accepted_;
}

namespace {

// Reads what `from` has into `buffer`; false at EOF or on an error.
bool read_into(int from, std::string& buffer) {
    char chunk[65536];
    for (;;) {
        const ssize_t n = ::read(from, chunk, sizeof chunk);
        if (n > 0) {
            buffer.append(chunk, static_cast<std::size_t>(n));
            if (buffer.size() >= (1u << 20)) return true;  // write some before reading on
            continue;
        }
        if (n == 0) return false;
        return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR;
    }
}

// Writes what it can of `buffer` to `to`, at most *budget bytes when there is a budget (which it
// counts down); false on an error.
bool write_from(int to, std::string& buffer, std::optional<std::size_t>* budget = nullptr) {
    while (!buffer.empty()) {
        const std::size_t allowed = budget && *budget ? std::min(buffer.size(), **budget) : buffer.size();
        if (allowed == 0) return true;
        const ssize_t n = ::send(to, buffer.data(), allowed, MSG_NOSIGNAL);
        if (n > 0) {
            buffer.erase(0, static_cast<std::size_t>(n));
            if (budget && *budget) **budget -= static_cast<std::size_t>(n);
            continue;
        }
        return n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR);
    }
    return true;
}

}  // namespace

void TcpRelay::loop() {
    std::vector<pollfd> fds;
    std::vector<Pair*> owners;  // the pair of fds[i] (nullptr for the wake fd and the listener)
    while (!stopping_) {
        std::uint64_t epoch;
        fds.clear();
        owners.clear();
        fds.push_back({wake_fd_, POLLIN, 0});
        owners.push_back(nullptr);
        {
            std::lock_guard lock(mutex_);
            epoch = epoch_;
            if (!frozen_) {
                fds.push_back({listen_fd_, POLLIN, 0});
                owners.push_back(nullptr);
                for (auto& p : pairs_) {
                    // Read a side only when what it sent before is gone: bounded buffers. A stalled
                    // pair's bytes for the client wait in to_client, which stops reading upstream.
                    const bool client_writable = !p->to_client.empty() && p->to_client_budget != std::size_t{0};
                    const short c = static_cast<short>((p->to_upstream.empty() ? POLLIN : 0) |
                                                       (client_writable ? POLLOUT : 0));
                    const short u = static_cast<short>((p->to_client.empty() ? POLLIN : 0) |
                                                       (p->to_upstream.empty() ? 0 : POLLOUT));
                    fds.push_back({p->client, c, 0});
                    owners.push_back(p.get());
                    fds.push_back({p->upstream, u, 0});
                    owners.push_back(p.get());
                }
            }
        }
        if (::poll(fds.data(), fds.size(), -1) < 0 && errno != EINTR) return;
        if (fds[0].revents != 0) {
            std::uint64_t count;
            [[maybe_unused]] auto n = ::read(wake_fd_, &count, sizeof count);
            continue;  // the set changed (freeze, drop, resume, stop): build it again
        }
        std::lock_guard lock(mutex_);
        if (frozen_ || stopping_ || epoch != epoch_) continue;  // drop() closed what was polled
        if (fds.size() > 1 && fds[1].revents != 0) accept_one();
        std::vector<Pair*> broken;
        for (std::size_t i = 2; i < fds.size(); ++i) {
            if (fds[i].revents == 0) continue;
            Pair* p = owners[i];
            const bool is_client = fds[i].fd == p->client;
            std::string& inbound = is_client ? p->to_upstream : p->to_client;
            std::string& outbound = is_client ? p->to_client : p->to_upstream;
            const int other = is_client ? p->upstream : p->client;
            auto* inbound_budget = is_client ? nullptr : &p->to_client_budget;
            auto* outbound_budget = is_client ? &p->to_client_budget : nullptr;
            bool ok = true;
            if (fds[i].revents & (POLLIN | POLLHUP | POLLERR)) ok = read_into(fds[i].fd, inbound) && ok;
            ok = write_from(other, inbound, inbound_budget) && ok;
            if (fds[i].revents & POLLOUT) ok = write_from(fds[i].fd, outbound, outbound_budget) && ok;
            if (!ok) broken.push_back(p);
        }
        // A side that ended (EOF or error) ends the pair: libpq and the server then see a close.
        for (Pair* p : broken) {
            std::erase_if(pairs_, [p](const std::unique_ptr<Pair>& q) { return q.get() == p; });
        }
    }
}

}  // namespace pglock::test
