#include "web_config.hpp"

#include <yaml-cpp/yaml.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "pglock_cli/duration.hpp"
#include "pglock_cli/text.hpp"
#include "verbs.hpp"

namespace pglock::cli {

namespace {

// Read as exporter-toolkit reads it (yaml.UnmarshalStrict): every key known, none twice, each
// value of its type. `where` is the key path for messages ("tls_server_config.cert_file").
class Reader {
public:
    explicit Reader(std::string origin) : origin_(std::move(origin)) {}

    [[noreturn]] void fail(const std::string& where, const std::string& why) const {
        throw UsageError("--web-config-file " + origin_ + ": " + (where.empty() ? "" : where + ": ") + why);
    }

    // The entries of a mapping (none for null), keys checked against `known` and for repeats.
    std::vector<std::pair<std::string, YAML::Node>> entries(const YAML::Node& node, const std::string& where,
                                                            const std::set<std::string, std::less<>>& known) const {
        std::vector<std::pair<std::string, YAML::Node>> out;
        if (node.IsNull()) return out;
        if (!node.IsMap()) fail(where, "expected a mapping of keys");
        std::set<std::string, std::less<>> seen;
        for (auto it = node.begin(); it != node.end(); ++it) {
            if (!it->first.IsScalar()) fail(where, "a key must be a string");
            const std::string key = it->first.Scalar();
            const std::string path = where.empty() ? key : where + "." + key;
            if (!known.empty() && !known.contains(key))
                fail(path, "unknown or unsupported key (docs/exporter.md lists what pglock exporter supports)");
            if (!seen.insert(key).second) fail(path, "given twice");
            out.emplace_back(key, it->second);
        }
        return out;
    }

    std::string string(const YAML::Node& node, const std::string& where) const {
        if (node.IsNull()) return "";
        if (!node.IsScalar()) fail(where, "expected a string");
        return node.Scalar();
    }

    std::vector<std::string> strings(const YAML::Node& node, const std::string& where) const {
        std::vector<std::string> out;
        if (node.IsNull()) return out;
        if (!node.IsSequence()) fail(where, "expected a list of strings");
        for (const YAML::Node& item : node) out.push_back(string(item, where));
        return out;
    }

    bool boolean(const YAML::Node& node, const std::string& where) const {
        bool value = false;
        if (!node.IsScalar() || !YAML::convert<bool>::decode(node, value)) fail(where, "expected true or false");
        return value;
    }

    int integer(const YAML::Node& node, const std::string& where) const {
        int value = 0;
        if (!node.IsScalar() || !YAML::convert<int>::decode(node, value)) fail(where, "expected an integer");
        return value;
    }

    // A file path; relative ones are relative to the config file, as exporter-toolkit has it.
    std::string path(const YAML::Node& node, const std::string& where) const {
        const std::string p = string(node, where);
        if (p.empty() || std::filesystem::path(p).is_absolute()) return p;
        return (std::filesystem::path(origin_).parent_path() / p).string();
    }

    const std::string& origin() const { return origin_; }

private:
    std::string origin_;
};

int tls_version(const Reader& r, const std::string& text, const std::string& where) {
    if (text == "TLS10") return 0x0301;
    if (text == "TLS11") return 0x0302;
    if (text == "TLS12") return 0x0303;
    if (text == "TLS13") return 0x0304;
    r.fail(where, "expected TLS10, TLS11, TLS12 or TLS13, got \"" + one_line(text) + "\"");
}

ClientAuth client_auth(const Reader& r, const std::string& text, const std::string& where) {
    if (text.empty() || text == "NoClientCert") return ClientAuth::none;
    if (text == "RequestClientCert") return ClientAuth::request;
    if (text == "RequireAnyClientCert" || text == "RequireClientCert") return ClientAuth::require_any;
    if (text == "VerifyClientCertIfGiven") return ClientAuth::verify_if_given;
    if (text == "RequireAndVerifyClientCert") return ClientAuth::require_and_verify;
    r.fail(where, "expected NoClientCert, RequestClientCert, RequireAnyClientCert, VerifyClientCertIfGiven or "
                  "RequireAndVerifyClientCert, got \"" + one_line(text) + "\"");
}

// Go's curve names (crypto/tls CurveID) as OpenSSL names the groups.
std::string curve_group(const Reader& r, const std::string& text, const std::string& where) {
    if (text == "CurveP256") return "P-256";
    if (text == "CurveP384") return "P-384";
    if (text == "CurveP521") return "P-521";
    if (text == "X25519") return "X25519";
    r.fail(where, "expected CurveP256, CurveP384, CurveP521 or X25519, got \"" + one_line(text) + "\"");
}

std::optional<WebTlsConfig> read_tls(const Reader& r, const YAML::Node& node) {
    const std::string at = "tls_server_config";
    WebTlsConfig tls;
    bool enabled = false, other_keys = false;
    std::string client_auth_text;
    bool sans_given = false;
    for (const auto& [key, value] :
         r.entries(node, at, {"cert", "key", "client_ca", "cert_file", "key_file", "client_ca_file", "client_auth_type",
                              "client_allowed_sans", "min_version", "max_version", "cipher_suites",
                              "prefer_server_cipher_suites", "curve_preferences"})) {
        const std::string where = at + "." + key;
        if (key == "cert") tls.cert.inline_pem = r.string(value, where);
        else if (key == "key") tls.key.inline_pem = r.string(value, where);
        else if (key == "client_ca") tls.client_ca.inline_pem = r.string(value, where);
        else if (key == "cert_file") tls.cert.file = r.path(value, where);
        else if (key == "key_file") tls.key.file = r.path(value, where);
        else if (key == "client_ca_file") tls.client_ca.file = r.path(value, where);
        else if (key == "client_auth_type") {
            client_auth_text = r.string(value, where);
            tls.client_auth = client_auth(r, client_auth_text, where);
        } else if (key == "client_allowed_sans") {
            tls.client_allowed_sans = r.strings(value, where);
            sans_given = !value.IsNull();
        } else if (key == "min_version") tls.min_version = tls_version(r, r.string(value, where), where);
        else if (key == "max_version") tls.max_version = tls_version(r, r.string(value, where), where);
        else if (key == "cipher_suites") tls.cipher_suites = r.strings(value, where);
        else if (key == "prefer_server_cipher_suites") tls.prefer_server_cipher_suites = r.boolean(value, where);
        else if (key == "curve_preferences") {
            for (const std::string& c : r.strings(value, where)) tls.curve_groups.push_back(curve_group(r, c, where));
        }
        // exporter-toolkit turns TLS on when any of these is given (TLSConfig.IsEnabled).
        const bool enabling = key == "cert" || key == "key" || key == "client_ca" || key == "cert_file" ||
                              key == "key_file" || key == "client_ca_file" || key == "client_auth_type";
        const bool given = !value.IsNull() && !(value.IsScalar() && value.Scalar().empty());
        if (given && enabling) enabled = true;
        if (given && !enabling) other_keys = true;
    }
    if (!enabled) {
        // exporter-toolkit then serves plain HTTP and ignores the rest; a TLS setting that does
        // nothing is a mistake worth saying.
        if (other_keys) r.fail(at, "TLS settings without cert_file and key_file: give both (or remove the section)");
        return std::nullopt;
    }
    if (tls.cert.empty()) r.fail(at, "missing one of cert or cert_file");
    if (tls.key.empty()) r.fail(at, "missing one of key or key_file");
    if (!tls.cert.file.empty() && !tls.cert.inline_pem.empty()) r.fail(at, "cert and cert_file exclude each other");
    if (!tls.key.file.empty() && !tls.key.inline_pem.empty()) r.fail(at, "key and key_file exclude each other");
    if (!tls.client_ca.file.empty() && !tls.client_ca.inline_pem.empty())
        r.fail(at, "client_ca and client_ca_file exclude each other");
    if (!tls.client_ca.empty() && tls.client_auth == ClientAuth::none)
        r.fail(at, "client CAs have been configured without a client_auth_type");
    if ((tls.client_auth == ClientAuth::verify_if_given || tls.client_auth == ClientAuth::require_and_verify) &&
        tls.client_ca.empty())
        r.fail(at, "client_auth_type " + client_auth_text + " needs client_ca_file (the CAs that sign client certificates)");
    if (sans_given && tls.client_auth != ClientAuth::require_any && tls.client_auth != ClientAuth::require_and_verify)
        r.fail(at, "client_allowed_sans requires client_auth_type RequireAnyClientCert or RequireAndVerifyClientCert");
    if (tls.min_version > tls.max_version) r.fail(at, "min_version is above max_version");
    return tls;
}

bool has_control(std::string_view s) {
    for (const unsigned char c : s)
        if (c < 0x20 || c == 0x7f) return true;
    return false;
}

// The headers exporter-toolkit lets a config add, with the values it allows.
void read_http(const Reader& r, const YAML::Node& node, WebConfig& out) {
    const std::string at = "http_server_config";
    for (const auto& [key, value] : r.entries(node, at, {"http2", "headers"})) {
        const std::string where = at + "." + key;
        if (key == "http2") {
            if (r.boolean(value, where))
                r.fail(where, "pglock exporter speaks HTTP/1.1 only: set http2: false or remove it");
            continue;
        }
        for (const auto& [name, v] : r.entries(value, where, {"Content-Security-Policy", "X-Frame-Options",
                                                              "X-Content-Type-Options", "X-XSS-Protection",
                                                              "Strict-Transport-Security"})) {
            const std::string text = r.string(v, where + "." + name);
            if (has_control(text)) r.fail(where + "." + name, "a header value cannot hold control characters");
            if (name == "X-Frame-Options" && text != "deny" && text != "sameorigin")
                r.fail(where + "." + name, "expected deny or sameorigin");
            if (name == "X-Content-Type-Options" && text != "nosniff") r.fail(where + "." + name, "expected nosniff");
            if (!text.empty()) out.headers.emplace_back(name, text);  // blank: unset, as exporter-toolkit has it
        }
    }
}

void read_users(const Reader& r, const YAML::Node& node, WebConfig& out) {
    for (const auto& [name, value] : r.entries(node, "basic_auth_users", {})) {
        const std::string where = "basic_auth_users." + one_line(name);
        if (name.empty()) r.fail("basic_auth_users", "a user name cannot be empty");
        // Basic auth sends "user:password": a name with ':' could never sign in.
        if (name.find(':') != std::string::npos || has_control(name)) r.fail(where, "a user name cannot hold ':' or control characters");
        const std::string hash = r.string(value, where);
        if (!is_bcrypt_hash(hash))
            r.fail(where, "expected a bcrypt hash ($2y$, $2b$ or $2a$, cost 04-31, 60 characters)");
        out.users.emplace(name, hash);
    }
}

void read_rate_limit(const Reader& r, const YAML::Node& node, WebConfig& out) {
    RateLimit limit;
    bool interval_given = false;
    for (const auto& [key, value] : r.entries(node, "rate_limit", {"interval", "burst"})) {
        const std::string where = "rate_limit." + key;
        if (key == "burst") {
            limit.burst = r.integer(value, where);
            continue;
        }
        const std::string text = r.string(value, where);
        const auto d = parse_duration(text);
        if (!d) r.fail(where, "expected a duration (\"1s\", \"500ms\"; 0 turns the limit off), got \"" + one_line(text) + "\"");
        limit.interval = *d;
        interval_given = true;
    }
    if (!interval_given || limit.interval.count() == 0) return;
    if (limit.burst < 1) r.fail("rate_limit.burst", "must be at least 1 when an interval is set");
    out.rate_limit = limit;
}

}  // namespace

bool is_bcrypt_hash(std::string_view h) {
    if (h.size() != 60 || h[0] != '$' || h[1] != '2' || (h[2] != 'a' && h[2] != 'b' && h[2] != 'y') || h[3] != '$' ||
        h[6] != '$')
        return false;
    if (h[4] < '0' || h[4] > '3' || h[5] < '0' || h[5] > '9') return false;
    const int cost = (h[4] - '0') * 10 + (h[5] - '0');
    if (cost < 4 || cost > 31) return false;
    for (const char c : h.substr(7)) {
        const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '/';
        if (!ok) return false;
    }
    return true;
}

WebConfig parse_web_config(std::string_view text, const std::string& origin) {
    const Reader r(origin);
    YAML::Node root;
    try {
        root = YAML::Load(std::string(text));
    } catch (const YAML::Exception& e) {
        r.fail("", "not valid YAML: line " + std::to_string(e.mark.line + 1) + ": " + one_line(e.msg));
    }
    WebConfig out;
    try {
        for (const auto& [key, value] :
             r.entries(root, "", {"tls_server_config", "http_server_config", "basic_auth_users", "rate_limit"})) {
            if (key == "tls_server_config") out.tls = read_tls(r, value);
            else if (key == "http_server_config") read_http(r, value, out);
            else if (key == "basic_auth_users") read_users(r, value, out);
            else read_rate_limit(r, value, out);
        }
    } catch (const YAML::Exception& e) {
        r.fail("", one_line(e.msg));
    }
    return out;
}

WebConfig load_web_config(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw UsageError("--web-config-file " + path + ": cannot be read");
    std::ostringstream text;
    text << in.rdbuf();
    if (in.bad()) throw UsageError("--web-config-file " + path + ": read error");
    if (text.str().size() > 1024 * 1024) throw UsageError("--web-config-file " + path + ": larger than 1 MiB");
    return parse_web_config(text.str(), path);
}

}  // namespace pglock::cli
