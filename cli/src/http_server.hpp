// The exporter's HTTP server: one thread with an event loop over non-blocking sockets (TLS
// included), so a client that is slow or silent costs a socket and a deadline, never a thread
// that others wait for. Each connection carries one request: its TLS handshake and head must
// arrive within the header timeout, its answer must be read within the write timeout; beyond
// the connection limits (in all, and per client address) a connection is refused at once. The
// handler answers on the loop's thread or later from any thread; a request can carry a deadline
// after which the server answers it with a fallback, so a slow answer cannot hold it either.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "http_request.hpp"
#include "web_config.hpp"

namespace pglock::cli {

class BasicAuth;
class TlsServer;

struct HttpResponse {
    int status = 200;
    std::string content_type = "text/plain; charset=utf-8";
    std::string body;
    std::shared_ptr<const std::string> more_body;  // sent after body: a page part many answers share
    std::vector<std::pair<std::string, std::string>> headers;
};

struct HttpInbox;  // what answers from other threads go through (http_server.cpp)

// The answer to one request. Only the first send() counts, from whichever thread.
class HttpAnswer {
public:
    HttpAnswer(std::shared_ptr<HttpInbox> inbox, std::uint64_t connection);
    void send(HttpResponse response);
    bool answered() const noexcept { return sent_.load(); }
    // Only inside the handler (the loop's thread): when nothing was sent by `when`, the server
    // sends what `make` returns (called on its thread) instead.
    void fallback_at(std::chrono::steady_clock::time_point when, std::function<HttpResponse()> make);

private:
    friend class HttpServer;
    bool claim() noexcept { return !sent_.exchange(true); }  // true for the one who may send

    std::shared_ptr<HttpInbox> inbox_;
    const std::uint64_t connection_;
    std::atomic<bool> sent_{false};
    std::optional<std::chrono::steady_clock::time_point> fallback_when_;  // the loop's thread only
    std::function<HttpResponse()> fallback_;
};

using HttpHandler = std::function<void(const HttpRequest&, const std::shared_ptr<HttpAnswer>&)>;

struct HttpServerOptions {
    std::size_t max_connections = 512;
    std::size_t max_connections_per_client = 16;
    std::chrono::nanoseconds header_timeout = std::chrono::seconds(5);
    std::chrono::nanoseconds write_timeout = std::chrono::seconds(10);
    std::shared_ptr<const TlsServer> tls;   // HTTPS when set
    std::shared_ptr<BasicAuth> auth;        // basic auth when set and it has users
    std::vector<std::pair<std::string, std::string>> headers;  // added to every response
    std::optional<RateLimit> rate_limit;    // 429 beyond it
};

class HttpServer {
public:
    // Listens on HOST:PORT (as split_listen_address() takes it; port 0: any free port) and serves
    // until destroyed. Throws std::runtime_error when it cannot listen.
    HttpServer(const std::string& listen, HttpServerOptions options, HttpHandler handler);
    ~HttpServer();
    HttpServer(const HttpServer&) = delete;
    HttpServer& operator=(const HttpServer&) = delete;

    int port() const;

    struct Impl;  // http_server.cpp

private:
    std::unique_ptr<Impl> impl_;
};

}  // namespace pglock::cli
