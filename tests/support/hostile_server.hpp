// A hostile server on a real loopback socket: whatever connects is refused, in the PostgreSQL
// protocol, with a FATAL ErrorResponse whose message is bytes the attacker picked (what a
// compromised host, a rogue pooler or a man in the middle without TLS can send). libpq passes
// the message on in its own ("connection to server at ... failed: FATAL:  ..."). The thread
// answers every client until the destructor, which stops it within a poll interval.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>

namespace pglock::test::hostile {

class RefusingServer {
public:
    explicit RefusingServer(std::string message) : message_(std::move(message)) {
        sockaddr_in addr{};
        addr.sin_family = AF_INET;
        addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        socklen_t len = sizeof addr;
        if (fd_ < 0 || ::bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
            ::getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len) != 0 || ::listen(fd_, 16) != 0)
            throw std::runtime_error("cannot listen on loopback");
        port_ = ntohs(addr.sin_port);
        thread_ = std::jthread([this](std::stop_token stop) { serve(stop); });
    }
    ~RefusingServer() {
        thread_.request_stop();
        thread_.join();
        ::close(fd_);
    }
    RefusingServer(const RefusingServer&) = delete;
    RefusingServer& operator=(const RefusingServer&) = delete;

    int port() const { return port_; }
    std::string dsn() const {
        return "host=127.0.0.1 port=" + std::to_string(port_) + " user=operator dbname=postgres connect_timeout=5";
    }

private:
    static constexpr int kPollMs = 50;

    void serve(const std::stop_token& stop) {
        while (!stop.stop_requested()) {
            pollfd p{fd_, POLLIN, 0};
            if (::poll(&p, 1, kPollMs) != 1) continue;
            const int c = ::accept(fd_, nullptr, nullptr);
            if (c < 0) continue;
            answer(c, stop);
            ::close(c);
        }
    }

    // Reads n bytes within a second; false when the client went quiet or away.
    static bool read_exactly(int c, char* buf, std::size_t n, const std::stop_token& stop) {
        for (int waited = 0; n > 0 && waited < 1000 && !stop.stop_requested();) {
            pollfd p{c, POLLIN, 0};
            if (::poll(&p, 1, kPollMs) != 1) {
                waited += kPollMs;
                continue;
            }
            const ssize_t got = ::read(c, buf, n);
            if (got <= 0) return false;
            buf += got;
            n -= static_cast<std::size_t>(got);
        }
        return n == 0;
    }

    void answer(int c, const std::stop_token& stop) const {
        // An SSL or GSSAPI encryption request first (8 bytes): "N", no; then the startup packet.
        for (int packets = 0; packets < 3; ++packets) {
            char head[8];
            if (!read_exactly(c, head, sizeof head, stop)) return;
            const auto be32 = [&](int at) {
                return (std::uint32_t(std::uint8_t(head[at])) << 24) | (std::uint32_t(std::uint8_t(head[at + 1])) << 16) |
                       (std::uint32_t(std::uint8_t(head[at + 2])) << 8) | std::uint32_t(std::uint8_t(head[at + 3]));
            };
            const std::uint32_t length = be32(0), code = be32(4);
            if (code == 80877103 || code == 80877104) {
                if (::send(c, "N", 1, MSG_NOSIGNAL) != 1) return;
                continue;
            }
            std::string rest(length > 8 && length < 10000 ? length - 8 : 0, '\0');
            if (!rest.empty() && !read_exactly(c, rest.data(), rest.size(), stop)) return;
            break;
        }
        std::string fields;
        for (const auto& [type, value] : {std::pair<char, std::string>{'S', "FATAL"}, {'V', "FATAL"}, {'C', "28000"}, {'M', message_}}) {
            fields += type;
            fields += value;
            fields += '\0';
        }
        fields += '\0';
        const auto size = static_cast<std::uint32_t>(fields.size() + 4);
        std::string reply = "E";
        for (int shift = 24; shift >= 0; shift -= 8) reply += static_cast<char>((size >> shift) & 0xFF);
        reply += fields;
        [[maybe_unused]] const ssize_t sent = ::send(c, reply.data(), reply.size(), MSG_NOSIGNAL);  // a client gone: no SIGPIPE
    }

    std::string message_;
    int fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    int port_ = 0;
    std::jthread thread_;
};

}  // namespace pglock::test::hostile
