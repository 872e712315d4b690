#include "http_tls.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include <algorithm>
#include <fstream>
#include <sstream>

#include "pglock_cli/text.hpp"
#include "verbs.hpp"

namespace pglock::cli {

namespace {

std::string openssl_error() {
    const unsigned long e = ERR_get_error();
    ERR_clear_error();
    if (e == 0) return "unknown OpenSSL error";
    char text[256];
    ERR_error_string_n(e, text, sizeof text);
    return text;
}

struct FreeBio {
    void operator()(BIO* b) const noexcept { BIO_free(b); }
};
struct FreeX509 {
    void operator()(X509* x) const noexcept { X509_free(x); }
};
struct FreeKey {
    void operator()(EVP_PKEY* k) const noexcept { EVP_PKEY_free(k); }
};
struct FreeCtx {
    void operator()(SSL_CTX* c) const noexcept { SSL_CTX_free(c); }
};
struct FreeNames {
    void operator()(GENERAL_NAMES* n) const noexcept { GENERAL_NAMES_free(n); }
};
using Bio = std::unique_ptr<BIO, FreeBio>;
using Cert = std::unique_ptr<X509, FreeX509>;

// Refuses a key that wants a passphrase instead of asking for one on the terminal.
int no_passphrase(char*, int, int, void*) { return -1; }

// Client certificates that are asked for but not verified (RequestClientCert, RequireAnyClientCert).
int accept_any(int, X509_STORE_CTX*) { return 1; }

class Builder {
public:
    Builder(const std::string& origin, SSL_CTX* ctx) : origin_(origin), ctx_(ctx) {}

    [[noreturn]] void fail(const std::string& key, const std::string& why) const {
        throw UsageError("--web-config-file " + origin_ + ": tls_server_config." + key + ": " + one_line(why));
    }

    // The PEM text of a source; `key` is its file key ("cert_file") for messages.
    std::string pem(const PemSource& s, const std::string& key) const {
        if (s.file.empty()) return s.inline_pem;
        std::ifstream in(s.file, std::ios::binary);
        if (!in) fail(key, "cannot read " + s.file);
        std::ostringstream text;
        text << in.rdbuf();
        return text.str();
    }

    static Bio bio_of(const std::string& text) {
        return Bio(BIO_new_mem_buf(text.data(), static_cast<int>(text.size())));
    }

    std::string where(const PemSource& s, const std::string& key, const std::string& inline_key) const {
        return s.file.empty() ? inline_key : key;
    }

    void certificate(const PemSource& s) const {
        const std::string key = where(s, "cert_file", "cert");
        const std::string text = pem(s, "cert_file");
        Bio bio = bio_of(text);
        Cert leaf(PEM_read_bio_X509_AUX(bio.get(), nullptr, no_passphrase, nullptr));
        if (!leaf) fail(key, "no PEM certificate in it (" + openssl_error() + ")");
        if (SSL_CTX_use_certificate(ctx_, leaf.get()) != 1) fail(key, openssl_error());
        while (Cert next{PEM_read_bio_X509(bio.get(), nullptr, no_passphrase, nullptr)}) {
            if (SSL_CTX_add1_chain_cert(ctx_, next.get()) != 1) fail(key, openssl_error());
        }
        ERR_clear_error();  // the end of the PEM text reads as an error
    }

    void private_key(const PemSource& s) const {
        const std::string key = where(s, "key_file", "key");
        std::string text = pem(s, "key_file");
        Bio bio = bio_of(text);
        std::unique_ptr<EVP_PKEY, FreeKey> pkey(PEM_read_bio_PrivateKey(bio.get(), nullptr, no_passphrase, nullptr));
        OPENSSL_cleanse(text.data(), text.size());
        if (!pkey) fail(key, "no unencrypted PEM private key in it (" + openssl_error() + ")");
        if (X509_check_private_key(SSL_CTX_get0_certificate(ctx_), pkey.get()) != 1) {
            ERR_clear_error();
            fail(key, "does not match the certificate");
        }
        if (SSL_CTX_use_PrivateKey(ctx_, pkey.get()) != 1) fail(key, openssl_error());
    }

    void client_cas(const PemSource& s) const {
        const std::string key = where(s, "client_ca_file", "client_ca");
        const std::string text = pem(s, "client_ca_file");
        Bio bio = bio_of(text);
        X509_STORE* store = SSL_CTX_get_cert_store(ctx_);
        int count = 0;
        while (Cert ca{PEM_read_bio_X509(bio.get(), nullptr, no_passphrase, nullptr)}) {
            if (X509_STORE_add_cert(store, ca.get()) != 1 || SSL_CTX_add_client_CA(ctx_, ca.get()) != 1)
                fail(key, openssl_error());
            ++count;
        }
        ERR_clear_error();
        if (count == 0) fail(key, "holds no PEM certificate");
    }

    // IANA names (as Go and exporter-toolkit write them) to OpenSSL's names, TLS 1.2 and older.
    void cipher_suites(const std::vector<std::string>& names) const {
        std::unique_ptr<SSL_CTX, FreeCtx> all(SSL_CTX_new(TLS_server_method()));
        if (!all || SSL_CTX_set_cipher_list(all.get(), "ALL:COMPLEMENTOFALL") != 1) fail("cipher_suites", openssl_error());
        const STACK_OF(SSL_CIPHER)* known = SSL_CTX_get_ciphers(all.get());
        std::string list;
        for (const std::string& name : names) {
            const SSL_CIPHER* found = nullptr;
            for (int i = 0; i < sk_SSL_CIPHER_num(known) && !found; ++i) {
                const SSL_CIPHER* c = sk_SSL_CIPHER_value(known, i);
                if (const char* standard = SSL_CIPHER_standard_name(c); standard && name == standard) found = c;
            }
            if (!found) fail("cipher_suites", "unknown cipher suite \"" + name + "\"");
            if (std::string(SSL_CIPHER_get_version(found)) == "TLSv1.3")
                fail("cipher_suites", name + " is a TLS 1.3 suite; those are not configurable (as in Go)");
            list += (list.empty() ? "" : ":") + std::string(SSL_CIPHER_get_name(found));
        }
        if (SSL_CTX_set_cipher_list(ctx_, list.c_str()) != 1) fail("cipher_suites", openssl_error());
    }

private:
    const std::string& origin_;
    SSL_CTX* ctx_;
};

std::string text_of(const ASN1_STRING* s) {
    return std::string(reinterpret_cast<const char*>(ASN1_STRING_get0_data(s)), static_cast<std::size_t>(ASN1_STRING_length(s)));
}

// An IP SAN as Go's net.IP.String() writes it (an IPv4-mapped address as IPv4).
std::string ip_text(const ASN1_OCTET_STRING* s) {
    const unsigned char* d = ASN1_STRING_get0_data(s);
    const int n = ASN1_STRING_length(s);
    char out[INET6_ADDRSTRLEN] = {};
    if (n == 4) return inet_ntop(AF_INET, d, out, sizeof out) ? out : "";
    if (n != 16) return "";
    in6_addr a;
    std::copy(d, d + 16, a.s6_addr);
    if (IN6_IS_ADDR_V4MAPPED(&a)) return inet_ntop(AF_INET, d + 12, out, sizeof out) ? out : "";
    return inet_ntop(AF_INET6, d, out, sizeof out) ? out : "";
}

}  // namespace

TlsServer::TlsServer(const WebTlsConfig& config, const std::string& origin) : allowed_sans_(config.client_allowed_sans) {
    ctx_ = SSL_CTX_new(TLS_server_method());
    if (!ctx_) throw std::runtime_error("TLS: " + openssl_error());
    std::unique_ptr<SSL_CTX, FreeCtx> guard(ctx_);
    const Builder b(origin, ctx_);
    if (SSL_CTX_set_min_proto_version(ctx_, config.min_version) != 1) b.fail("min_version", openssl_error());
    if (SSL_CTX_set_max_proto_version(ctx_, config.max_version) != 1) b.fail("max_version", openssl_error());
    // No client-initiated renegotiation: a client could otherwise make the server redo the
    // expensive half of a handshake as often as it likes on one connection.
    std::uint64_t options = SSL_OP_NO_RENEGOTIATION | SSL_OP_NO_COMPRESSION;
    if (config.prefer_server_cipher_suites) options |= SSL_OP_CIPHER_SERVER_PREFERENCE;
    SSL_CTX_set_options(ctx_, options);
    SSL_CTX_set_mode(ctx_, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER | SSL_MODE_RELEASE_BUFFERS);
    static const unsigned char session_context[] = "pglock-exporter";
    SSL_CTX_set_session_id_context(ctx_, session_context, sizeof session_context - 1);

    b.certificate(config.cert);
    b.private_key(config.key);
    if (!config.client_ca.empty()) b.client_cas(config.client_ca);
    switch (config.client_auth) {
        case ClientAuth::none: SSL_CTX_set_verify(ctx_, SSL_VERIFY_NONE, nullptr); break;
        case ClientAuth::request: SSL_CTX_set_verify(ctx_, SSL_VERIFY_PEER, accept_any); break;
        case ClientAuth::require_any:
            SSL_CTX_set_verify(ctx_, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, accept_any);
            break;
        case ClientAuth::verify_if_given: SSL_CTX_set_verify(ctx_, SSL_VERIFY_PEER, nullptr); break;
        case ClientAuth::require_and_verify:
            SSL_CTX_set_verify(ctx_, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, nullptr);
            break;
    }
    if (!config.cipher_suites.empty()) b.cipher_suites(config.cipher_suites);
    if (!config.curve_groups.empty()) {
        std::string groups;
        for (const std::string& g : config.curve_groups) groups += (groups.empty() ? "" : ":") + g;
        if (SSL_CTX_set1_groups_list(ctx_, groups.c_str()) != 1) b.fail("curve_preferences", openssl_error());
    }
    guard.release();
}

TlsServer::~TlsServer() { SSL_CTX_free(ctx_); }

ssl_st* TlsServer::session_for(int fd) const {
    SSL* ssl = SSL_new(ctx_);
    if (ssl && SSL_set_fd(ssl, fd) != 1) {
        SSL_free(ssl);
        ssl = nullptr;
    }
    if (!ssl) ERR_clear_error();
    return ssl;
}

bool TlsServer::peer_allowed(ssl_st* ssl) const {
    if (allowed_sans_.empty()) return true;
    const Cert peer(SSL_get1_peer_certificate(ssl));
    if (!peer) return false;
    const std::unique_ptr<GENERAL_NAMES, FreeNames> names(
        static_cast<GENERAL_NAMES*>(X509_get_ext_d2i(peer.get(), NID_subject_alt_name, nullptr, nullptr)));
    if (!names) return false;
    for (int i = 0; i < sk_GENERAL_NAME_num(names.get()); ++i) {
        const GENERAL_NAME* n = sk_GENERAL_NAME_value(names.get(), i);
        std::string value;
        if (n->type == GEN_DNS) value = text_of(n->d.dNSName);
        else if (n->type == GEN_EMAIL) value = text_of(n->d.rfc822Name);
        else if (n->type == GEN_URI) value = text_of(n->d.uniformResourceIdentifier);
        else if (n->type == GEN_IPADD) value = ip_text(n->d.iPAddress);
        else continue;
        if (std::find(allowed_sans_.begin(), allowed_sans_.end(), value) != allowed_sans_.end()) return true;
    }
    return false;
}

}  // namespace pglock::cli
