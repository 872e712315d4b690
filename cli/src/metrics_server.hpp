// `hold --metrics HOST:PORT`: the library's metrics on a Prometheus /metrics endpoint.
#pragma once

#include <memory>
#include <string>
#include <utility>

#include "pglock/observe.hpp"

namespace pglock::cli {

// "HOST:PORT" -> host (brackets kept for IPv6) and port, checked as the listener (civetweb) needs
// them: port 0..65535, HOST an IPv4 dotted quad, a bracketed IPv6 address or a host name.
// Throws UsageError naming `option` ("--metrics", "--listen").
std::pair<std::string, std::string> split_listen_address(const std::string& bind, const std::string& option);

class MetricsServer {
public:
    // Listens on HOST:PORT (port 0: any free port). Throws UsageError for a malformed address or
    // when built without prometheus-cpp, std::runtime_error when it cannot listen.
    static std::unique_ptr<MetricsServer> start(const std::string& bind);
    virtual ~MetricsServer() = default;

    // Pass to LockOptions::metrics.
    virtual std::shared_ptr<Metrics> metrics() const = 0;
    // Where it serves, with the real port: "http://127.0.0.1:40123/metrics".
    virtual std::string url() const = 0;
};

}  // namespace pglock::cli
