#include "http_server.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <map>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <unordered_map>

#include "basic_auth.hpp"
#include "http_tls.hpp"
#include "metrics_server.hpp"  // split_listen_address

namespace pglock::cli {

using Clock = std::chrono::steady_clock;

struct HttpInbox {
    std::mutex mutex;
    std::vector<std::pair<std::uint64_t, HttpResponse>> answers;  // under mutex
    std::vector<std::pair<std::uint64_t, bool>> auth_results;     // under mutex
    int wake_fd = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);

    ~HttpInbox() {
        if (wake_fd >= 0) ::close(wake_fd);
    }
    void wake() noexcept {
        const std::uint64_t one = 1;
        [[maybe_unused]] auto n = ::write(wake_fd, &one, sizeof one);
    }
};

HttpAnswer::HttpAnswer(std::shared_ptr<HttpInbox> inbox, std::uint64_t connection)
    : inbox_(std::move(inbox)), connection_(connection) {}

void HttpAnswer::send(HttpResponse response) {
    if (!claim()) return;
    {
        std::lock_guard lock(inbox_->mutex);
        inbox_->answers.emplace_back(connection_, std::move(response));
    }
    inbox_->wake();
}

void HttpAnswer::fallback_at(Clock::time_point when, std::function<HttpResponse()> make) {
    fallback_when_ = when;
    fallback_ = std::move(make);
}

namespace {

constexpr std::size_t read_chunk = 16384;
// The kernel's send buffer of each connection. Left to itself it grows to megabytes, and a
// client that does not read would hold that much of the kernel's memory per connection, and
// its whole page, without the write timeout ever noticing.
constexpr int send_buffer = 256 * 1024;
// After the answer: how long to read what the client still sends (so that closing with unread
// bytes does not reset the connection before the client has read the answer).
constexpr auto linger_after_answer = std::chrono::seconds(2);

const char* reason(int status) {
    switch (status) {
        case 200: return "OK";
        case 400: return "Bad Request";
        case 401: return "Unauthorized";
        case 404: return "Not Found";
        case 405: return "Method Not Allowed";
        case 429: return "Too Many Requests";
        case 431: return "Request Header Fields Too Large";
        case 503: return "Service Unavailable";
        case 505: return "HTTP Version Not Supported";
        default: return status < 500 ? "Client Error" : "Internal Server Error";
    }
}

std::string errno_text(const std::string& what) { return what + ": " + std::strerror(errno); }

// The client's address, the key of the per-client limit (an IPv4-mapped IPv6 address as IPv4).
std::string client_address(const sockaddr_storage& a) {
    char text[INET6_ADDRSTRLEN] = {};
    if (a.ss_family == AF_INET) {
        inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in&>(a).sin_addr, text, sizeof text);
    } else if (a.ss_family == AF_INET6) {
        const in6_addr& v6 = reinterpret_cast<const sockaddr_in6&>(a).sin6_addr;
        if (IN6_IS_ADDR_V4MAPPED(&v6)) inet_ntop(AF_INET, v6.s6_addr + 12, text, sizeof text);
        else inet_ntop(AF_INET6, &v6, text, sizeof text);
    }
    return text;
}

int listen_on(const std::string& listen) {
    auto [host, port] = split_listen_address(listen, "--listen");
    if (host.size() > 2 && host.front() == '[') host = host.substr(1, host.size() - 2);
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
    addrinfo* found = nullptr;
    if (const int e = ::getaddrinfo(host.c_str(), port.c_str(), &hints, &found); e != 0)
        throw std::runtime_error("cannot listen on " + listen + ": " + ::gai_strerror(e));
    std::string why = "no address";
    int fd = -1;
    for (const addrinfo* a = found; a && fd < 0; a = a->ai_next) {
        fd = ::socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, a->ai_protocol);
        const int on = 1;
        if (fd >= 0 && (::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on) != 0 ||
                        ::bind(fd, a->ai_addr, a->ai_addrlen) != 0 || ::listen(fd, SOMAXCONN) != 0)) {
            why = std::strerror(errno);
            ::close(fd);
            fd = -1;
        }
    }
    ::freeaddrinfo(found);
    if (fd < 0) throw std::runtime_error("cannot listen on " + listen + ": " + why);
    return fd;
}

enum class Phase { handshake, reading, authenticating, answering, writing, closing };

struct FreeSsl {
    void operator()(SSL* s) const noexcept { SSL_free(s); }
};

struct Connection {
    std::uint64_t id = 0;
    int fd = -1;
    std::string client;
    std::unique_ptr<SSL, FreeSsl> ssl;
    Phase phase = Phase::reading;
    Clock::time_point deadline = Clock::time_point::max();
    bool want_write = false;  // TLS: the last call wants the socket writable (else readable)
    std::string in;
    HttpRequest request;
    std::shared_ptr<HttpAnswer> answer;
    std::string out;  // status line, headers and the response's own body
    std::shared_ptr<const std::string> out_more;
    std::size_t sent = 0;
};

// Bytes moved, 0 when the connection is over (EOF or an error), -1 when it would block.
enum : long { would_block = -1 };

}  // namespace

struct HttpServer::Impl {
    Impl(const std::string& listen, HttpServerOptions o, HttpHandler h)
        : options(std::move(o)), handler(std::move(h)), listen_fd(listen_on(listen)) {
        if (inbox->wake_fd < 0) {
            ::close(listen_fd);
            throw std::runtime_error(errno_text("eventfd"));
        }
        if (options.rate_limit) tokens = options.rate_limit->burst;
        if (options.auth && options.auth->enabled())
            auth_thread = std::jthread([this](std::stop_token stop) { authenticate(stop); });
        loop_thread = std::jthread([this](std::stop_token stop) { loop(stop); });
    }

    ~Impl() {
        loop_thread.request_stop();
        inbox->wake();
        if (loop_thread.joinable()) loop_thread.join();
        auth_thread.request_stop();
        auth_cv.notify_all();
        if (auth_thread.joinable()) auth_thread.join();
        for (auto& [id, c] : connections) close_fd(*c, false);
        ::close(listen_fd);
    }

    // ---- the loop ----

    void loop(std::stop_token stop) {
        std::vector<pollfd> fds;
        std::vector<std::uint64_t> ids;
        while (!stop.stop_requested()) {
            fds.clear();
            ids.clear();
            fds.push_back({inbox->wake_fd, POLLIN, 0});
            const auto now = Clock::now();
            const bool accepting = now >= accept_paused_until;
            fds.push_back({accepting ? listen_fd : -1, POLLIN, 0});
            Clock::time_point next = accepting ? Clock::time_point::max() : accept_paused_until;
            for (auto& [id, c] : connections) {
                fds.push_back({c->fd, events_of(*c), 0});
                ids.push_back(id);
                next = std::min(next, deadline_of(*c));
            }
            int timeout = -1;
            if (next != Clock::time_point::max()) {
                const auto ms = std::chrono::ceil<std::chrono::milliseconds>(next - now).count();
                timeout = static_cast<int>(std::clamp<long long>(ms, 0, 60000));
            }
            if (::poll(fds.data(), fds.size(), timeout) < 0 && errno != EINTR) return;
            if (fds[0].revents) take_inbox();
            if (fds[1].revents) {
                reap();  // so that the limits count open connections only
                accept_all();
            }
            for (std::size_t i = 2; i < fds.size(); ++i) {
                if (fds[i].revents == 0) continue;
                const auto it = connections.find(ids[i - 2]);
                if (it != connections.end()) step(*it->second, fds[i].revents);
            }
            expire(Clock::now());
            reap();
        }
    }

    short events_of(const Connection& c) const {
        switch (c.phase) {
            case Phase::handshake:
            case Phase::reading:
            case Phase::writing:
                if (c.ssl) return c.want_write ? POLLOUT : POLLIN;
                return c.phase == Phase::writing ? POLLOUT : POLLIN;
            case Phase::closing: return POLLIN;
            case Phase::authenticating:
            case Phase::answering: return 0;  // errors and hang-ups are still reported
        }
        return 0;
    }

    Clock::time_point deadline_of(const Connection& c) const {
        if (c.phase == Phase::answering)
            return c.answer && c.answer->fallback_when_ ? *c.answer->fallback_when_ : Clock::time_point::max();
        return c.deadline;
    }

    void accept_all() {
        // A bounded number per turn: a flood of connections must not keep the loop from the rest.
        for (int turn = 0; turn < 64; ++turn) {
            sockaddr_storage addr{};
            socklen_t len = sizeof addr;
            const int fd = ::accept4(listen_fd, reinterpret_cast<sockaddr*>(&addr), &len, SOCK_NONBLOCK | SOCK_CLOEXEC);
            if (fd < 0) {
                // Out of descriptors: stop accepting for a moment rather than spin on the listener.
                if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM)
                    accept_paused_until = Clock::now() + std::chrono::milliseconds(100);
                return;
            }
            const std::string client = client_address(addr);
            if (connections.size() >= options.max_connections) {
                refuse(fd, "too many connections (--max-connections " + std::to_string(options.max_connections) + ")");
                continue;
            }
            if (per_client[client] >= options.max_connections_per_client) {
                refuse(fd, "too many connections from " + client + " (--max-connections-per-client " +
                               std::to_string(options.max_connections_per_client) + ")");
                continue;
            }
            const int on = 1;
            ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof on);
            ::setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &send_buffer, sizeof send_buffer);
            auto c = std::make_unique<Connection>();
            c->id = ++last_id;
            c->fd = fd;
            c->client = client;
            c->deadline = Clock::now() + options.header_timeout;
            if (options.tls) {
                c->ssl.reset(options.tls->session_for(fd));
                if (!c->ssl) {
                    ::close(fd);
                    continue;
                }
                c->phase = Phase::handshake;
            }
            ++per_client[client];
            Connection& conn = *c;
            connections.emplace(conn.id, std::move(c));
            // Most clients send at once: try now rather than after another poll.
            if (conn.phase == Phase::handshake) handshake(conn);
            else read_request(conn);
        }
    }

    // Beyond a limit: plain HTTP gets a 503 that says which (best effort, never waited for); TLS
    // would need a handshake first, so it gets the close alone.
    void refuse(int fd, const std::string& why) {
        if (!options.tls) {
            const std::string body = "pglock exporter: " + why + "\n";
            const std::string text = "HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain; charset=utf-8\r\n"
                                     "Content-Length: " + std::to_string(body.size()) +
                                     "\r\nConnection: close\r\n\r\n" + body;
            [[maybe_unused]] auto n = ::send(fd, text.data(), text.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
            ::shutdown(fd, SHUT_WR);
        }
        ::close(fd);
    }

    void step(Connection& c, short revents) {
        if (revents & (POLLERR | POLLNVAL)) return finish(c, true);
        switch (c.phase) {
            case Phase::handshake: return handshake(c);
            case Phase::reading: return read_request(c);
            case Phase::writing: return write_response(c);
            case Phase::closing: return drain(c);
            case Phase::authenticating:
            case Phase::answering:
                if (revents & POLLHUP) finish(c, false);  // the client is gone: nobody to answer
                return;
        }
    }

    // ---- bytes in and out ----

    long receive(Connection& c, char* buffer, std::size_t size) {
        if (!c.ssl) {
            const ssize_t n = ::recv(c.fd, buffer, size, 0);
            if (n > 0) return n;
            if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) return would_block;
            return 0;
        }
        const int n = SSL_read(c.ssl.get(), buffer, static_cast<int>(size));
        if (n > 0) return n;
        return tls_result(c, n);
    }

    long transmit(Connection& c, const char* data, std::size_t size) {
        if (!c.ssl) {
            const ssize_t n = ::send(c.fd, data, size, MSG_NOSIGNAL);
            if (n > 0) return n;
            if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) return would_block;
            return 0;
        }
        const int n = SSL_write(c.ssl.get(), data, static_cast<int>(std::min<std::size_t>(size, 1 << 20)));
        if (n > 0) return n;
        return tls_result(c, n);
    }

    static long tls_result(Connection& c, int ret) {
        const int e = SSL_get_error(c.ssl.get(), ret);
        ERR_clear_error();  // the queue is per thread: a stale error would confuse the next call
        if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE) {
            c.want_write = e == SSL_ERROR_WANT_WRITE;
            return would_block;
        }
        return 0;
    }

    void handshake(Connection& c) {
        const int r = SSL_accept(c.ssl.get());
        if (r != 1) {
            if (tls_result(c, r) != would_block) finish(c, false);
            return;
        }
        if (!options.tls->peer_allowed(c.ssl.get())) return finish(c, false);
        c.phase = Phase::reading;
        c.want_write = false;
        read_request(c);  // TLS may hold decrypted bytes that no poll would announce
    }

    void read_request(Connection& c) {
        char buffer[read_chunk];
        for (;;) {
            const std::size_t room = max_request_head + 1 - c.in.size();
            const long n = receive(c, buffer, std::min(room, sizeof buffer));
            if (n == would_block) return;
            if (n == 0) return finish(c, false);
            c.in.append(buffer, static_cast<std::size_t>(n));
            if (const auto head = request_head_length(c.in)) return dispatch(c, std::string_view(c.in).substr(0, *head));
            if (c.in.size() > max_request_head)
                return respond(c, error_response(431, "the request head is larger than 8 KiB"));
        }
    }

    void write_response(Connection& c) {
        for (;;) {
            const std::string& part = c.sent < c.out.size() || !c.out_more ? c.out : *c.out_more;
            const std::size_t offset = &part == &c.out ? c.sent : c.sent - c.out.size();
            if (offset >= part.size()) return finish_writing(c);
            const long n = transmit(c, part.data() + offset, part.size() - offset);
            if (n == would_block) return;
            if (n == 0) return finish(c, true);
            c.sent += static_cast<std::size_t>(n);
        }
    }

    void finish_writing(Connection& c) {
        if (c.ssl) {
            SSL_shutdown(c.ssl.get());  // close_notify; the client's is not waited for
            ERR_clear_error();
        }
        ::shutdown(c.fd, SHUT_WR);
        c.phase = Phase::closing;
        c.deadline = Clock::now() + linger_after_answer;
        drain(c);
    }

    void drain(Connection& c) {
        char buffer[read_chunk];
        for (;;) {
            const ssize_t n = ::recv(c.fd, buffer, sizeof buffer, 0);
            if (n > 0) continue;
            if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) return;
            return finish(c, false);
        }
    }

    // ---- requests ----

    static HttpResponse error_response(int status, const std::string& message) {
        HttpResponse r;
        r.status = status;
        r.body = message + "\n";
        if (status == 405) r.headers.emplace_back("Allow", "GET, HEAD");
        return r;
    }

    void dispatch(Connection& c, std::string_view head) {
        auto parsed = parse_request_head(head);
        if (auto* refusal = std::get_if<HttpRefusal>(&parsed)) return respond(c, error_response(refusal->status, refusal->message));
        c.request = std::move(std::get<HttpRequest>(parsed));
        c.in.clear();
        c.in.shrink_to_fit();
        if (!rate_allows()) return respond(c, error_response(429, "too many requests (the web config's rate_limit)"));
        if (!options.auth || !options.auth->enabled()) return handle(c);
        switch (options.auth->quick(c.request.authorization)) {
            case BasicAuth::Verdict::allowed: return handle(c);
            case BasicAuth::Verdict::denied: return respond(c, unauthorized());
            case BasicAuth::Verdict::needs_bcrypt: break;
        }
        c.phase = Phase::authenticating;  // still under the header timeout
        {
            std::lock_guard lock(auth_mutex);
            auth_jobs.emplace_back(c.id, c.request.authorization);
        }
        auth_cv.notify_one();
    }

    static HttpResponse unauthorized() {
        HttpResponse r = error_response(401, "Unauthorized");
        r.headers.emplace_back("WWW-Authenticate", "Basic");
        return r;
    }

    bool rate_allows() {
        if (!options.rate_limit) return true;
        const auto now = Clock::now();
        const double per_second = 1e9 / static_cast<double>(options.rate_limit->interval.count());
        tokens = std::min<double>(options.rate_limit->burst,
                                  tokens + std::chrono::duration<double>(now - rate_checked).count() * per_second);
        rate_checked = now;
        if (tokens < 1) return false;
        tokens -= 1;
        return true;
    }

    void handle(Connection& c) {
        c.phase = Phase::answering;
        c.deadline = Clock::time_point::max();
        c.answer = std::make_shared<HttpAnswer>(inbox, c.id);
        try {
            handler(c.request, c.answer);
        } catch (const std::exception& e) {
            if (c.answer->claim()) respond(c, error_response(500, std::string("pglock exporter: ") + e.what()));
        }
    }

    void respond(Connection& c, const HttpResponse& r) {
        const bool head = c.request.method == "HEAD";
        std::string& out = c.out;
        out = "HTTP/1.1 " + std::to_string(r.status) + " " + reason(r.status) + "\r\nContent-Type: " + r.content_type +
              "\r\n";
        if (!head)
            out += "Content-Length: " + std::to_string(r.body.size() + (r.more_body ? r.more_body->size() : 0)) + "\r\n";
        out += "Connection: close\r\n";
        for (const auto& [name, value] : r.headers) out += name + ": " + value + "\r\n";
        for (const auto& [name, value] : options.headers) out += name + ": " + value + "\r\n";
        out += "\r\n";
        if (!head) {
            out += r.body;
            c.out_more = r.more_body;
        }
        c.sent = 0;
        c.phase = Phase::writing;
        c.want_write = true;
        c.deadline = Clock::now() + options.write_timeout;
        write_response(c);
    }

    void take_inbox() {
        std::uint64_t count;
        [[maybe_unused]] auto n = ::read(inbox->wake_fd, &count, sizeof count);
        std::vector<std::pair<std::uint64_t, HttpResponse>> answers;
        std::vector<std::pair<std::uint64_t, bool>> auths;
        {
            std::lock_guard lock(inbox->mutex);
            answers.swap(inbox->answers);
            auths.swap(inbox->auth_results);
        }
        for (auto& [id, ok] : auths) {
            const auto it = connections.find(id);
            if (it == connections.end() || it->second->phase != Phase::authenticating) continue;
            if (ok) handle(*it->second);
            else respond(*it->second, unauthorized());
        }
        for (auto& [id, response] : answers) {
            const auto it = connections.find(id);
            if (it != connections.end() && it->second->phase == Phase::answering) respond(*it->second, response);
        }
    }

    void expire(Clock::time_point now) {
        for (auto& [id, c] : connections) {
            if (c->phase == Phase::answering) {
                const auto& a = c->answer;
                if (a && a->fallback_when_ && *a->fallback_when_ <= now) {
                    a->fallback_when_.reset();
                    if (a->claim()) respond(*c, a->fallback_());
                }
                continue;
            }
            if (c->fd < 0 || c->deadline > now) continue;
            if (c->phase == Phase::authenticating) {
                // The client was quick; the password checks queued before its own were not.
                {
                    std::lock_guard lock(auth_mutex);
                    std::erase_if(auth_jobs, [&](const auto& job) { return job.first == c->id; });
                }
                respond(*c, error_response(503, "too many password checks at once: try again"));
                continue;
            }
            // Too slow to send its request, or to read the answer: the kernel's buffers for it go
            // at once (a reset), not after the retransmissions of a normal close.
            finish(*c, c->phase != Phase::closing);
        }
    }

    // ---- ends ----

    void finish(Connection& c, bool reset) {
        if (c.fd < 0) return;
        if (c.phase == Phase::authenticating) {
            std::lock_guard lock(auth_mutex);
            std::erase_if(auth_jobs, [&](const auto& job) { return job.first == c.id; });
        }
        close_fd(c, reset);
    }

    void close_fd(Connection& c, bool reset) {
        if (c.fd < 0) return;
        if (reset) {
            const ::linger l{1, 0};
            ::setsockopt(c.fd, SOL_SOCKET, SO_LINGER, &l, sizeof l);
        }
        c.ssl.reset();
        ::close(c.fd);
        c.fd = -1;
        if (auto it = per_client.find(c.client); it != per_client.end() && --it->second == 0) per_client.erase(it);
        accept_paused_until = Clock::time_point::min();  // a descriptor is free again
    }

    void reap() {
        std::erase_if(connections, [](const auto& entry) { return entry.second->fd < 0; });
    }

    // ---- the bcrypt thread ----

    void authenticate(std::stop_token stop) {
        for (;;) {
            std::pair<std::uint64_t, std::string> job;
            {
                std::unique_lock lock(auth_mutex);
                if (!auth_cv.wait(lock, stop, [&] { return !auth_jobs.empty(); })) return;
                job = std::move(auth_jobs.front());
                auth_jobs.pop_front();
            }
            const bool ok = options.auth->verify(job.second);
            {
                std::lock_guard lock(inbox->mutex);
                inbox->auth_results.emplace_back(job.first, ok);
            }
            inbox->wake();
        }
    }

    const HttpServerOptions options;
    const HttpHandler handler;
    const int listen_fd;
    std::shared_ptr<HttpInbox> inbox = std::make_shared<HttpInbox>();

    // The loop's thread only.
    std::unordered_map<std::uint64_t, std::unique_ptr<Connection>> connections;
    std::map<std::string, std::size_t> per_client;
    std::uint64_t last_id = 0;
    Clock::time_point accept_paused_until = Clock::time_point::min();
    double tokens = 0;
    Clock::time_point rate_checked = Clock::now();

    std::mutex auth_mutex;
    std::condition_variable_any auth_cv;
    std::deque<std::pair<std::uint64_t, std::string>> auth_jobs;  // under auth_mutex

    std::jthread auth_thread;
    std::jthread loop_thread;  // last: it uses everything above
};

HttpServer::HttpServer(const std::string& listen, HttpServerOptions options, HttpHandler handler)
    : impl_(std::make_unique<Impl>(listen, std::move(options), std::move(handler))) {}

HttpServer::~HttpServer() = default;

int HttpServer::port() const {
    sockaddr_storage addr{};
    socklen_t len = sizeof addr;
    if (::getsockname(impl_->listen_fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) return 0;
    if (addr.ss_family == AF_INET) return ntohs(reinterpret_cast<const sockaddr_in&>(addr).sin_port);
    return ntohs(reinterpret_cast<const sockaddr_in6&>(addr).sin6_port);
}

}  // namespace pglock::cli
