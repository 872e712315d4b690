#include "http_get.hpp"

#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <string_view>

#include "verbs.hpp"

namespace pglock::cli {

namespace {

using Clock = std::chrono::steady_clock;

class Fd {
public:
    explicit Fd(int fd) : fd_(fd) {}
    ~Fd() {
        if (fd_ >= 0) ::close(fd_);
    }
    Fd(const Fd&) = delete;
    Fd& operator=(const Fd&) = delete;
    int get() const noexcept { return fd_; }

private:
    int fd_;
};

int remaining_ms(Clock::time_point deadline) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    return left > 0 ? static_cast<int>(left) : 0;
}

// Waits for `events` on fd until the deadline; throws when it passes.
void wait_for(int fd, short events, Clock::time_point deadline, const std::string& what) {
    for (;;) {
        pollfd p{fd, events, 0};
        const int ms = remaining_ms(deadline);
        if (ms == 0) throw std::runtime_error("timed out " + what);
        const int n = ::poll(&p, 1, ms);
        if (n > 0) return;
        if (n < 0 && errno != EINTR) throw std::runtime_error(what + ": " + std::strerror(errno));
    }
}

int connect_to(const HttpTarget& target, Clock::time_point deadline) {
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    addrinfo* found = nullptr;
    // getaddrinfo has no deadline of its own: a name is resolved by the system's resolver and its
    // timeouts (resolv.conf); an address literal needs no lookup.
    if (const int rc = ::getaddrinfo(target.host.c_str(), target.port.c_str(), &hints, &found); rc != 0) {
        throw std::runtime_error("cannot resolve " + target.host + ": " + ::gai_strerror(rc));
    }
    std::string last_error = "no address";
    for (addrinfo* a = found; a; a = a->ai_next) {
        const int fd = ::socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, a->ai_protocol);
        if (fd < 0) continue;
        if (::connect(fd, a->ai_addr, a->ai_addrlen) == 0 || errno == EINPROGRESS) {
            try {
                wait_for(fd, POLLOUT, deadline, "connecting to " + target.host + ":" + target.port);
            } catch (...) {
                ::close(fd);
                ::freeaddrinfo(found);
                throw;
            }
            int err = 0;
            socklen_t len = sizeof err;
            ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len);
            if (err == 0) {
                ::freeaddrinfo(found);
                return fd;
            }
            last_error = std::strerror(err);
        } else {
            last_error = std::strerror(errno);
        }
        ::close(fd);
    }
    ::freeaddrinfo(found);
    throw std::runtime_error("cannot connect to " + target.host + ":" + target.port + ": " + last_error);
}

}  // namespace

HttpTarget parse_http_url(const std::string& url) {
    constexpr std::string_view scheme = "http://";
    if (url.compare(0, scheme.size(), scheme) != 0) {
        throw UsageError("--metrics-url: only http:// URLs (no TLS, no proxies): " + url);
    }
    std::string rest = url.substr(scheme.size());
    HttpTarget t;
    const auto slash = rest.find('/');
    std::string authority = rest.substr(0, slash);
    t.path = slash == std::string::npos ? "/metrics" : rest.substr(slash);
    if (authority.empty() || authority.find('@') != std::string::npos || t.path.find('#') != std::string::npos ||
        t.path.find_first_of(" \r\n") != std::string::npos) {
        throw UsageError("--metrics-url: not a plain http://HOST[:PORT][/PATH] URL: " + url);
    }
    std::string port;
    if (authority.front() == '[') {
        const auto close = authority.find(']');
        if (close == std::string::npos) throw UsageError("--metrics-url: unclosed '[' in " + url);
        t.host = authority.substr(1, close - 1);
        if (close + 1 < authority.size()) {
            if (authority[close + 1] != ':') throw UsageError("--metrics-url: bad host in " + url);
            port = authority.substr(close + 2);
        }
    } else if (const auto colon = authority.rfind(':'); colon != std::string::npos) {
        t.host = authority.substr(0, colon);
        port = authority.substr(colon + 1);
    } else {
        t.host = authority;
    }
    if (port.empty()) port = "80";
    const bool digits = port.find_first_not_of("0123456789") == std::string::npos && port.size() <= 5;
    if (t.host.empty() || !digits || std::stoi(port) < 1 || std::stoi(port) > 65535) {
        throw UsageError("--metrics-url: bad host or port in " + url);
    }
    t.port = port;
    return t;
}

std::string http_get(const HttpTarget& target, const HttpLimits& limits) {
    const auto deadline = Clock::now() + limits.timeout;
    Fd fd(connect_to(target, deadline));
    const std::string host = target.host.find(':') != std::string::npos ? "[" + target.host + "]" : target.host;
    // HTTP/1.0: the server closes after the body and never answers chunked.
    const std::string request = "GET " + target.path + " HTTP/1.0\r\nHost: " + host + ":" + target.port +
                                "\r\nAccept: text/plain\r\nUser-Agent: pglock-status\r\nConnection: close\r\n\r\n";
    for (std::size_t sent = 0; sent < request.size();) {
        wait_for(fd.get(), POLLOUT, deadline, "sending to " + target.host);
        const ssize_t n = ::send(fd.get(), request.data() + sent, request.size() - sent, MSG_NOSIGNAL);
        if (n < 0 && errno != EAGAIN && errno != EINTR) throw std::runtime_error(std::string("send: ") + std::strerror(errno));
        if (n > 0) sent += static_cast<std::size_t>(n);
    }
    std::string response;
    const std::size_t header_allowance = 64 << 10;
    char buffer[16384];
    for (;;) {
        wait_for(fd.get(), POLLIN, deadline, "reading from " + target.host);
        const ssize_t n = ::recv(fd.get(), buffer, sizeof buffer, 0);
        if (n == 0) break;
        if (n < 0) {
            if (errno == EAGAIN || errno == EINTR) continue;
            throw std::runtime_error(std::string("recv: ") + std::strerror(errno));
        }
        response.append(buffer, static_cast<std::size_t>(n));
        if (response.size() > limits.max_bytes + header_allowance) {
            throw std::runtime_error("the page is larger than " + std::to_string(limits.max_bytes) + " bytes");
        }
    }
    const auto end_of_headers = response.find("\r\n\r\n");
    if (end_of_headers == std::string::npos) throw std::runtime_error("not an HTTP response");
    const std::string status_line = response.substr(0, response.find("\r\n"));
    if (status_line.compare(0, 5, "HTTP/") != 0 || status_line.size() < 12) throw std::runtime_error("not an HTTP response");
    if (status_line.substr(9, 3) != "200") throw std::runtime_error("HTTP status " + status_line.substr(9));
    std::string headers = response.substr(0, end_of_headers);
    for (auto& c : headers) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (headers.find("transfer-encoding: chunked") != std::string::npos) {
        throw std::runtime_error("a chunked reply to an HTTP/1.0 request");
    }
    std::string body = response.substr(end_of_headers + 4);
    if (body.size() > limits.max_bytes) {
        throw std::runtime_error("the page is larger than " + std::to_string(limits.max_bytes) + " bytes");
    }
    return body;
}

}  // namespace pglock::cli
