// The exporter's parsers of outside text, without a server: the HTTP request head and query
// (what any client on the network sends), the web config (what the operator writes) and the
// series label of a lock name.
#include <QtTest>

#include "exporter_series.hpp"
#include "http_request.hpp"
#include "web_config.hpp"

using namespace pglock::cli;
using namespace std::literals;

namespace {

QByteArray S(const std::string& s) { return QByteArray::fromStdString(s); }

int refused(std::string_view head) {
    const auto r = parse_request_head(head);
    return std::holds_alternative<HttpRefusal>(r) ? std::get<HttpRefusal>(r).status : 0;
}

HttpRequest request(std::string_view head) {
    auto r = parse_request_head(head);
    if (auto* refusal = std::get_if<HttpRefusal>(&r)) throw std::runtime_error("refused: " + refusal->message);
    return std::get<HttpRequest>(r);
}

QByteArray param(std::string_view query, std::string_view name = "target") {
    const QueryParameter p = query_parameter(query, name);
    if (!p.error.empty()) return "error: " + S(p.error);
    return p.value ? "=" + S(*p.value) : QByteArray("absent");
}

const char* const bcrypt = "$2y$10$X0h1gDsPszWURQaxFh.zoubFi6DXncSjhoQNJgRrnGs7EsimhC7zG";

}  // namespace

class TestCliExporterUnits : public QObject {
    Q_OBJECT
private slots:
    void request_head_ends_at_the_first_empty_line() {
        QCOMPARE(request_head_length("GET / HTTP/1.1\r\nHost: a\r\n\r\nrest").value_or(0), std::size_t(27));
        QCOMPARE(request_head_length("GET / HTTP/1.1\nHost: a\n\nrest").value_or(0), std::size_t(24));
        QVERIFY(!request_head_length("GET / HTTP/1.1\r\nHost: a\r\n"));
        QVERIFY(!request_head_length("GET / HTTP/1.1\r\n\r"));
    }

    void request_line_and_headers() {
        const HttpRequest r = request("HEAD /probe?target=a%2Db HTTP/1.0\r\nAuthorization:  Basic eDp5 \r\n\r\n");
        QCOMPARE(S(r.method), QByteArray("HEAD"));
        QCOMPARE(S(r.path), QByteArray("/probe"));
        QCOMPARE(S(r.query), QByteArray("target=a%2Db"));
        QCOMPARE(S(r.authorization), QByteArray("Basic eDp5"));
        QCOMPARE(S(request("GET /metrics HTTP/1.1\nContent-Length: 0\n\n").path), QByteArray("/metrics"));
    }

    void what_is_refused() {
        QCOMPARE(refused("POST /metrics HTTP/1.1\r\n\r\n"), 405);
        QCOMPARE(refused("GET /metrics HTTP/2.0\r\n\r\n"), 505);
        QCOMPARE(refused("GET  /metrics HTTP/1.1\r\n\r\n"), 400);
        QCOMPARE(refused("GET http://host/metrics HTTP/1.1\r\n\r\n"), 400);
        QCOMPARE(refused("GET /metrics HTTP/1.1\r\nX: a\0b\r\n\r\n"sv), 400);
        QCOMPARE(refused("GET /metrics HTTP/1.1\r\nX: a\r\n folded\r\n\r\n"), 400);
        QCOMPARE(refused("GET /metrics HTTP/1.1\r\nX : a\r\n\r\n"), 400);
        QCOMPARE(refused("GET /metrics HTTP/1.1\r\nContent-Length: 5\r\n\r\n"), 400);
        QCOMPARE(refused("GET /metrics HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n"), 400);
        QCOMPARE(refused("GET /metrics HTTP/1.1\r\nAuthorization: a\r\nauthorization: b\r\n\r\n"), 400);
        QCOMPARE(refused("\r\n"), 400);
    }

    void query_parameters_are_decoded_whole() {
        QCOMPARE(param("target=main"), QByteArray("=main"));
        QCOMPARE(param("a=1&target=ma%69n&b"), QByteArray("=main"));
        QCOMPARE(param("target=a+b%20c"), QByteArray("=a b c"));
        QCOMPARE(param("target=main%00junk").size(), qsizetype(10));  // all of it, NUL included
        QCOMPARE(param("other=1"), QByteArray("absent"));
        QCOMPARE(param("target"), QByteArray("="));
        QCOMPARE(param("target=main&target=main"), QByteArray("error: target given twice"));
        QVERIFY(param("target=%zz").startsWith("error"));
        QVERIFY(param("target=main%").startsWith("error"));
        QVERIFY(param("target=main%4").startsWith("error"));
        QVERIFY(param("x=%g0&target=main").startsWith("error"));  // a bad escape anywhere
    }

    void web_config_reads_what_it_supports() {
        const WebConfig c = parse_web_config(
            "tls_server_config:\n  cert_file: certs/server.crt\n  key_file: /abs/server.key\n"
            "  client_auth_type: RequireAndVerifyClientCert\n  client_ca_file: ca.crt\n"
            "  client_allowed_sans: [a.example, 10.0.0.1]\n  min_version: TLS13\n"
            "  cipher_suites: [TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256]\n  prefer_server_cipher_suites: false\n"
            "  curve_preferences: [CurveP384, X25519]\n"
            "http_server_config:\n  http2: false\n  headers:\n    X-Frame-Options: deny\n    X-XSS-Protection: ''\n"
            "basic_auth_users:\n  alice: " + std::string(bcrypt) + "\n"
            "rate_limit:\n  interval: 500ms\n  burst: 3\n",
            "/etc/pglock/web.yml");
        QVERIFY(c.tls);
        QCOMPARE(S(c.tls->cert.file), QByteArray("/etc/pglock/certs/server.crt"));  // relative to the file
        QCOMPARE(S(c.tls->key.file), QByteArray("/abs/server.key"));
        QCOMPARE(S(c.tls->client_ca.file), QByteArray("/etc/pglock/ca.crt"));
        QVERIFY(c.tls->client_auth == ClientAuth::require_and_verify);
        QCOMPARE(c.tls->client_allowed_sans.size(), std::size_t(2));
        QCOMPARE(c.tls->min_version, 0x0304);
        QVERIFY(!c.tls->prefer_server_cipher_suites);
        QCOMPARE(c.tls->curve_groups.size(), std::size_t(2));
        QCOMPARE(S(c.tls->curve_groups[0]), QByteArray("P-384"));
        QCOMPARE(c.headers.size(), std::size_t(1));  // a blank header is unset
        QCOMPARE(S(c.users.at("alice")), QByteArray(bcrypt));
        QVERIFY(c.rate_limit && c.rate_limit->burst == 3);
        // Empty: plain HTTP, no auth, as exporter-toolkit has it.
        const WebConfig empty = parse_web_config("", "web.yml");
        QVERIFY(!empty.tls && empty.users.empty() && !empty.rate_limit);
    }

    void bcrypt_hashes_are_recognised() {
        QVERIFY(is_bcrypt_hash(bcrypt));
        QVERIFY(is_bcrypt_hash("$2b$04$" + std::string(53, 'a')));
        QVERIFY(!is_bcrypt_hash("$2x$10$" + std::string(53, 'a')));  // the broken variant
        QVERIFY(!is_bcrypt_hash("$2y$03$" + std::string(53, 'a')));
        QVERIFY(!is_bcrypt_hash("$2y$10$" + std::string(52, 'a')));
        QVERIFY(!is_bcrypt_hash("$2y$10$" + std::string(52, 'a') + "!"));
        QVERIFY(!is_bcrypt_hash("$6$salt$hash"));
    }

    void name_labels_cannot_collide() {
        QCOMPARE(S(name_label(std::string("orders.daily"))), QByteArray("orders.daily"));
        QCOMPARE(S(name_label(std::string("bad\xff" "utf8"))), QByteArray("hex:626164ff75746638"));
        QCOMPARE(S(name_label(std::string("hex:626164ff75746638"))), QByteArray("hex:6865783a36323631363466663735373436363338"));
        QCOMPARE(S(name_label(std::string("(other)"))), QByteArray("hex:286f7468657229"));
        QCOMPARE(S(name_label(std::string("(unknown)"))), QByteArray("hex:28756e6b6e6f776e29"));
        QCOMPARE(S(name_label(std::string("hexagon"))), QByteArray("hexagon"));
        LockSeries folded;
        folded.kind = LockSeries::Kind::other;
        folded.name = other_name;
        QCOMPARE(S(name_label(folded)), QByteArray("(other)"));
    }
};

QTEST_GUILESS_MAIN(TestCliExporterUnits)
#include "test_cli_exporter_units.moc"
