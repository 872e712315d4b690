// `pglock exporter --web-config-file FILE`: TLS, basic auth, response headers and a rate limit,
// in the YAML format of Prometheus' exporter-toolkit (node_exporter's --web.config.file), so one
// file serves both. docs/exporter.md lists what is supported; every other key, and every value
// this exporter could not honour, is refused when the file is read rather than ignored.
#pragma once

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace pglock::cli {

enum class ClientAuth {
    none,                // NoClientCert
    request,             // RequestClientCert: asked for, not verified
    require_any,         // RequireAnyClientCert: required, not verified
    verify_if_given,     // VerifyClientCertIfGiven
    require_and_verify,  // RequireAndVerifyClientCert
};

// A PEM text given inline or as a file (read when the TLS context is made).
struct PemSource {
    std::string file;    // a path, relative ones already joined to the config file's directory
    std::string inline_pem;
    bool empty() const { return file.empty() && inline_pem.empty(); }
};

struct WebTlsConfig {
    PemSource cert, key, client_ca;
    ClientAuth client_auth = ClientAuth::none;
    std::vector<std::string> client_allowed_sans;
    int min_version = 0x0303;  // TLS 1.2, as OpenSSL numbers versions (TLS1_2_VERSION)
    int max_version = 0x0304;  // TLS 1.3
    std::vector<std::string> cipher_suites;      // IANA names ("TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256")
    bool prefer_server_cipher_suites = true;
    std::vector<std::string> curve_groups;       // OpenSSL group names ("P-256", "X25519")
};

struct RateLimit {
    std::chrono::nanoseconds interval{};  // one request per interval on average
    int burst = 0;                        // and up to this many at once
};

struct WebConfig {
    std::optional<WebTlsConfig> tls;                          // HTTPS when set
    std::vector<std::pair<std::string, std::string>> headers; // added to every response
    std::map<std::string, std::string, std::less<>> users;    // basic auth: name -> bcrypt hash
    std::optional<RateLimit> rate_limit;
};

// Parses the YAML text of FILE (`origin` names it in messages and is where relative paths start).
// Throws UsageError naming the key for anything not valid or not supported; never quotes a
// password hash or a private key.
WebConfig parse_web_config(std::string_view text, const std::string& origin);

// Reads and parses FILE; UsageError when it cannot be read.
WebConfig load_web_config(const std::string& path);

// "$2y$10$" + 53 characters: the bcrypt forms that crypt(3) verifies ($2a$, $2b$, $2y$).
bool is_bcrypt_hash(std::string_view hash);

}  // namespace pglock::cli
