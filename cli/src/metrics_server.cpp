#include "metrics_server.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <cctype>

#include "verbs.hpp"

#if PGLOCK_WITH_PROMETHEUS
#include <prometheus/exposer.h>
#include <prometheus/registry.h>

#include "pglock/prometheus.hpp"
#endif

namespace pglock::cli {

namespace {

// The listener (civetweb) reads an IPv4 address part by part modulo 256 ("999.1.1.1" binds
// 231.1.1.1) and takes only what it can read, so HOST must be exactly one of: an IPv4 address in
// dotted-quad form, an IPv6 address in brackets, or a host name (labels of letters, digits and
// '-', the first starting with a letter, as civetweb wants).
bool valid_host(const std::string& host) {
    if (host.empty()) return false;
    unsigned char addr[sizeof(in6_addr)];
    if (host.find_first_not_of("0123456789.") == std::string::npos) return inet_pton(AF_INET, host.c_str(), addr) == 1;
    if (host.front() == '[')
        return host.size() > 2 && host.back() == ']' &&
               inet_pton(AF_INET6, host.substr(1, host.size() - 2).c_str(), addr) == 1;
    if (!std::isalpha(static_cast<unsigned char>(host.front())) || host.size() > 253) return false;
    std::size_t label = 0;
    for (const char c : host) {
        if (c == '.') {
            if (label == 0) return false;
            label = 0;
        } else if (std::isalnum(static_cast<unsigned char>(c)) || c == '-') {
            if (++label > 63) return false;
        } else {
            return false;
        }
    }
    return label > 0;
}

}  // namespace

std::pair<std::string, std::string> split_listen_address(const std::string& bind, const std::string& option) {
    const auto colon = bind.rfind(':');
    if (colon == std::string::npos || colon == 0 || colon + 1 == bind.size())
        throw UsageError(option + " wants HOST:PORT (e.g. 127.0.0.1:9187, port 0 for any free port), got \"" + bind +
                         "\"");
    const std::string host = bind.substr(0, colon), port = bind.substr(colon + 1);
    if (port.size() > 5 || port.find_first_not_of("0123456789") != std::string::npos || std::stoi(port) > 65535)
        throw UsageError(option + ": bad port \"" + port + "\"");
    if (!valid_host(host))
        throw UsageError(option + ": \"" + host + "\" is not an IPv4 address (a.b.c.d, each 0-255), an IPv6 address "
                         "in brackets ([::1]) or a host name");
    return {host, port};
}

namespace {

std::pair<std::string, std::string> split_bind(const std::string& bind) { return split_listen_address(bind, "--metrics"); }

#if PGLOCK_WITH_PROMETHEUS
class PrometheusServer final : public MetricsServer {
public:
    explicit PrometheusServer(const std::string& bind)
        : host_(split_bind(bind).first),
          registry_(std::make_shared<prometheus::Registry>()),
          metrics_(make_prometheus_metrics(registry_)),
          exposer_(bind, 1) {  // one civetweb worker: a scrape every few seconds at most
        exposer_.RegisterCollectable(registry_);
    }
    std::shared_ptr<Metrics> metrics() const override { return metrics_; }
    std::string url() const override {
        const auto ports = exposer_.GetListeningPorts();
        const std::string host = host_.empty() ? "localhost" : host_;
        return "http://" + host + ":" + (ports.empty() ? "?" : std::to_string(ports.front())) + "/metrics";
    }

private:
    std::string host_;
    std::shared_ptr<prometheus::Registry> registry_;
    std::shared_ptr<Metrics> metrics_;
    prometheus::Exposer exposer_;
};
#endif

}  // namespace

std::unique_ptr<MetricsServer> MetricsServer::start(const std::string& bind) {
    split_bind(bind);  // usage errors before anything listens
#if PGLOCK_WITH_PROMETHEUS
    try {
        return std::make_unique<PrometheusServer>(bind);
    } catch (const UsageError&) {
        throw;
    } catch (const std::exception& e) {
        // civetweb's exception says little more than "null context when constructing CivetServer"
        throw std::runtime_error("cannot serve metrics on " + bind + " (address in use or not local?): " + e.what());
    }
#else
    throw UsageError("--metrics: this pglock was built without Prometheus support (PGLOCK_WITH_PROMETHEUS=OFF)");
#endif
}

}  // namespace pglock::cli
