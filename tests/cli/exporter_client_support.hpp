// Clients of the exporter's HTTP side the way an attacker or a careless script uses it: raw TCP
// connections from a chosen loopback address (all of 127.0.0.0/8 is local, so 127.0.0.2 is
// another client than 127.0.0.1) that say nothing, send their request a byte at a time or never
// read the answer; and curl, for requests as a real HTTP client sends them.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <QProcess>
#include <QStandardPaths>

#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <stdexcept>
#include <stop_token>
#include <string>
#include <thread>
#include <vector>

namespace clitest {

class RawClient {
public:
    // Connects to 127.0.0.1:port from `source` (a 127.x.y.z address). `receive_buffer` > 0 makes
    // the socket's receive buffer that small, so that a client that does not read stops the
    // server's writes early.
    explicit RawClient(quint16 port, const char* source = "127.0.0.1", int receive_buffer = 0) {
        fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd_ < 0) throw std::runtime_error("socket failed");
        if (receive_buffer > 0) ::setsockopt(fd_, SOL_SOCKET, SO_RCVBUF, &receive_buffer, sizeof receive_buffer);
        sockaddr_in from{};
        from.sin_family = AF_INET;
        if (::inet_pton(AF_INET, source, &from.sin_addr) != 1 ||
            ::bind(fd_, reinterpret_cast<sockaddr*>(&from), sizeof from) != 0)
            throw std::runtime_error(std::string("cannot bind to ") + source);
        sockaddr_in to{};
        to.sin_family = AF_INET;
        to.sin_port = htons(port);
        to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        if (::connect(fd_, reinterpret_cast<sockaddr*>(&to), sizeof to) != 0)
            throw std::runtime_error("cannot connect to the exporter");
    }
    ~RawClient() {
        if (fd_ >= 0) ::close(fd_);
    }
    RawClient(const RawClient&) = delete;
    RawClient& operator=(const RawClient&) = delete;

    // False once the server has closed (or reset) the connection.
    bool send(std::string_view bytes) {
        return ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(bytes.size());
    }

    // Waits at most timeout_ms for the server to close the connection (EOF or a reset), reading
    // and keeping what it sent; true when it did close.
    bool closed_within(int timeout_ms) {
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
        for (;;) {
            const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline -
                                                                                   std::chrono::steady_clock::now());
            if (left.count() <= 0) return false;
            pollfd p{fd_, POLLIN | POLLRDHUP, 0};
            const int n = ::poll(&p, 1, static_cast<int>(left.count()));
            if (n < 0 && errno != EINTR) return false;
            if (n <= 0) continue;
            char chunk[65536];
            const ssize_t got = ::recv(fd_, chunk, sizeof chunk, MSG_DONTWAIT);
            if (got > 0) {
                received_.append(chunk, static_cast<qsizetype>(got));
                continue;
            }
            if (got == 0) return true;
            if (errno == ECONNRESET || errno == EPIPE) return true;
            if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) return true;
        }
    }
    // Without reading: the connection was reset (POLLERR/POLLHUP), at most timeout_ms.
    bool reset_within(int timeout_ms) {
        pollfd p{fd_, 0, 0};  // errors and hang-ups are always reported
        return ::poll(&p, 1, timeout_ms) == 1 && (p.revents & (POLLERR | POLLHUP));
    }
    const QByteArray& received() const { return received_; }
    int fd() const { return fd_; }

private:
    int fd_ = -1;
    QByteArray received_;
};

// Sends `text` to each client one byte per `period` (each client gets its next byte in turn),
// until the text is sent or the object goes: the headers of a client on a very slow link, or of
// one that means to hold a connection open for as long as the server lets it.
class Trickler {
public:
    Trickler(std::vector<RawClient*> clients, std::string text, std::chrono::milliseconds period)
        : clients_(std::move(clients)), text_(std::move(text)), period_(period),
          thread_([this](std::stop_token stop) { run(stop); }) {}
    ~Trickler() {
        thread_.request_stop();
        cv_.notify_all();
    }
    Trickler(const Trickler&) = delete;
    Trickler& operator=(const Trickler&) = delete;

private:
    void run(std::stop_token stop) {
        std::mutex m;
        std::unique_lock lock(m);
        for (std::size_t i = 0; i < text_.size() && !stop.stop_requested(); ++i) {
            for (RawClient* c : clients_) c->send(text_.substr(i, 1));
            cv_.wait_for(lock, stop, period_, [] { return false; });  // paces the bytes; ends on stop
        }
    }
    std::vector<RawClient*> clients_;
    const std::string text_;
    const std::chrono::milliseconds period_;
    std::condition_variable_any cv_;
    std::jthread thread_;  // last: started once the rest is set
};

struct CurlResult {
    int exit_code = -1;  // curl's (0: a reply was read; 7: could not connect; 35: TLS failed; 52: empty reply)
    int status = 0;      // the HTTP status, 0 when there was none
    QByteArray headers;  // the status line and headers as received
    QByteArray body;
    QByteArray err;
};

// The curl program (scripts/setup installs it), or "" when it is not on PATH: the test then
// fails, it never skips.
inline QString curl_program() { return QStandardPaths::findExecutable(QStringLiteral("curl")); }

// curl ARGS URL with a 20 s limit of its own; -i so that headers and body come back together.
inline CurlResult curl(const QStringList& args, const QString& url) {
    const QString program = curl_program();
    if (program.isEmpty()) throw std::runtime_error("curl not found on PATH: install it (scripts/setup does)");
    QProcess p;
    p.start(program, QStringList{"-sS", "-i", "--path-as-is", "--max-time", "20"} + args + QStringList{url});
    if (!p.waitForStarted(10000)) throw std::runtime_error("cannot start curl");
    if (!p.waitForFinished(30000)) {
        p.kill();
        p.waitForFinished(5000);
        throw std::runtime_error("curl did not finish in 30 s");
    }
    CurlResult r;
    r.exit_code = p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1;
    r.err = p.readAllStandardError();
    const QByteArray out = p.readAllStandardOutput();
    const auto head_end = out.indexOf("\r\n\r\n");
    r.headers = head_end < 0 ? out : out.left(head_end);
    r.body = head_end < 0 ? QByteArray() : out.mid(head_end + 4);
    if (out.startsWith("HTTP/1.")) r.status = out.mid(9, 3).toInt();
    return r;
}

}  // namespace clitest
