// The exporter's TLS side: an OpenSSL server context made from a web config's
// tls_server_config, and the client certificate's check against client_allowed_sans.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "web_config.hpp"

struct ssl_ctx_st;
struct ssl_st;

namespace pglock::cli {

class TlsServer {
public:
    // Loads the certificate, key and client CAs and applies every setting. Throws UsageError
    // naming the setting (and the file) that could not be used.
    TlsServer(const WebTlsConfig& config, const std::string& origin);
    ~TlsServer();
    TlsServer(const TlsServer&) = delete;
    TlsServer& operator=(const TlsServer&) = delete;

    // A new TLS session for an accepted, non-blocking socket; nullptr when OpenSSL cannot make one.
    ssl_st* session_for(int fd) const;
    // After the handshake: the client certificate has one of client_allowed_sans (DNS, e-mail,
    // IP or URI, compared exactly), or no such list is configured.
    bool peer_allowed(ssl_st* ssl) const;

private:
    ssl_ctx_st* ctx_ = nullptr;
    std::vector<std::string> allowed_sans_;
};

}  // namespace pglock::cli
