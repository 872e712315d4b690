// `pglock exporter --web-config-file`: TLS, client certificates and basic auth in Prometheus'
// web config format. Certificates are made by openssl at test time, bcrypt hashes by libcrypt.
// A config that asks for anything unsupported or unsafe is refused with exit 2; curl proves
// what a client without the password, with a wrong one, without a client certificate or with
// one of another CA gets; silent TLS clients and a flood of wrong passwords hold back nobody;
// rate_limit answers 429 beyond its burst;
// and a real Prometheus scrapes the exporter with its own tls_config and basic_auth settings
// (and is refused with a wrong password), while promtool accepts the same web config file.
#include <crypt.h>

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QUrl>
#include <QUrlQuery>
#include <QtTest>

#include <future>
#include <memory>

#include "exporter_client_support.hpp"
#include "exporter_test_support.hpp"
#include "test_pki.hpp"

using namespace clitest;

namespace {

const QString password = QStringLiteral("s3cret-scrape");

QString write_file(const QString& dir, const QString& file, const QByteArray& content) {
    const QString path = dir + "/" + file;
    QFile f(path);
    if (!f.open(QIODevice::WriteOnly) || f.write(content) != content.size())
        throw std::runtime_error("cannot write " + path.toStdString());
    return path;
}

// A bcrypt hash as htpasswd -B writes it ($2y$), made by libcrypt.
QByteArray bcrypt_hash(const QByteArray& phrase, int cost = 10) {
    char salt[CRYPT_GENSALT_OUTPUT_SIZE];
    if (!crypt_gensalt_rn("$2y$", static_cast<unsigned long>(cost), nullptr, 0, salt, sizeof salt))
        throw std::runtime_error("crypt_gensalt_rn cannot make a bcrypt salt");
    crypt_data data{};
    const char* hash = crypt_rn(phrase.constData(), salt, &data, sizeof data);
    if (!hash || hash[0] == '*') throw std::runtime_error("crypt_rn cannot compute bcrypt");
    return hash;
}

QStringList tls_client(const QString& pki, const char* cert = nullptr) {
    QStringList args{"--cacert", pki + "/ca.crt"};
    if (cert) args << "--cert" << pki + "/" + cert + ".crt" << "--key" << pki + "/" + cert + ".key";
    return args;
}

QString https(quint16 port, const char* path = "/metrics") {
    return "https://localhost:" + QString::number(port) + path;
}

}  // namespace

class TestCliExporterTls : public QObject {
    Q_OBJECT

    QTemporaryDir pki_;
    QByteArray hash_;

    QString pki() const { return pki_.path(); }

    // TLS with the server certificate, basic auth for alice, a header.
    QByteArray tls_and_auth_config() const {
        return "tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\n"
               "http_server_config:\n  headers:\n    X-Content-Type-Options: nosniff\n"
               "basic_auth_users:\n  alice: " + hash_ + "\n";
    }

private slots:
    void initTestCase() {
        QVERIFY2(!curl_program().isEmpty(), "curl not found on PATH (scripts/setup installs it)");
        QVERIFY(pki_.isValid());
        try {
            using namespace pglock::test;
            write_pki_config(pki());
            make_ca(pki(), "ca");
            make_ca(pki(), "wrong-ca");
            make_server_cert(pki(), "ca");
            make_client_cert(pki(), "ca", "scraper.test");
            make_client_cert(pki(), "ca", "stranger.test");
            make_client_cert(pki(), "wrong-ca", "intruder.test");
            hash_ = bcrypt_hash(password.toUtf8());
        } catch (const std::exception& e) {
            QFAIL(e.what());
        }
    }

    void bad_web_config_exit_2_data() {
        QTest::addColumn<QByteArray>("config");
        QTest::addColumn<QString>("message");
        const QByteArray tls = "tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\n";
        QTest::newRow("not YAML") << QByteArray("tls_server_config: [\n") << "not valid YAML";
        QTest::newRow("unknown key") << QByteArray("tls_server_confg: {}\n") << "tls_server_confg: unknown or unsupported key";
        QTest::newRow("unknown TLS key") << tls + "  ocsp_staple: true\n" << "tls_server_config.ocsp_staple: unknown";
        QTest::newRow("key twice") << tls + "  key_file: other.key\n" << "tls_server_config.key_file: given twice";
        QTest::newRow("HTTP/2") << QByteArray("http_server_config:\n  http2: true\n") << "HTTP/1.1 only";
        QTest::newRow("no key") << QByteArray("tls_server_config:\n  cert_file: server.crt\n") << "missing one of key or key_file";
        QTest::newRow("settings without a certificate")
            << QByteArray("tls_server_config:\n  min_version: TLS13\n") << "without cert_file and key_file";
        QTest::newRow("client CA without client auth") << tls + "  client_ca_file: ca.crt\n" << "without a client_auth_type";
        QTest::newRow("verification without a CA")
            << tls + "  client_auth_type: RequireAndVerifyClientCert\n" << "needs client_ca_file";
        QTest::newRow("unknown client auth") << tls + "  client_auth_type: Sometimes\n" << "expected NoClientCert";
        QTest::newRow("SANs without a required certificate")
            << tls + "  client_auth_type: VerifyClientCertIfGiven\n  client_ca_file: ca.crt\n"
                     "  client_allowed_sans: [scraper.test]\n"
            << "client_allowed_sans requires";
        QTest::newRow("unknown version") << tls + "  min_version: TLS14\n" << "expected TLS10, TLS11, TLS12 or TLS13";
        QTest::newRow("min above max") << tls + "  min_version: TLS13\n  max_version: TLS12\n" << "above max_version";
        QTest::newRow("unknown cipher") << tls + "  cipher_suites: [TLS_RSA_WITH_ROT13]\n" << "unknown cipher suite";
        QTest::newRow("TLS 1.3 cipher") << tls + "  cipher_suites: [TLS_AES_128_GCM_SHA256]\n" << "TLS 1.3 suite";
        QTest::newRow("unknown curve") << tls + "  curve_preferences: [CurveP999]\n" << "expected CurveP256";
        QTest::newRow("missing certificate file")
            << QByteArray("tls_server_config:\n  cert_file: nothing.crt\n  key_file: server.key\n") << "cannot read";
        QTest::newRow("key of another certificate")
            << QByteArray("tls_server_config:\n  cert_file: server.crt\n  key_file: scraper.test.key\n")
            << "does not match the certificate";
        QTest::newRow("plain password") << QByteArray("basic_auth_users:\n  alice: Sekr1t-pw\n") << "expected a bcrypt hash";
        QTest::newRow("user twice") << "basic_auth_users:\n  alice: " + hash_ + "\n  alice: " + hash_ + "\n"
                                    << "basic_auth_users.alice: given twice";
        QTest::newRow("user with a colon") << "basic_auth_users:\n  'al:ice': " + hash_ + "\n" << "cannot hold ':'";
        QTest::newRow("header not allowed") << QByteArray("http_server_config:\n  headers:\n    Set-Cookie: a=b\n")
                                            << "headers.Set-Cookie: unknown";
        QTest::newRow("header with a line break")
            << QByteArray("http_server_config:\n  headers:\n    Content-Security-Policy: \"a\\r\\nSet-Cookie: b\"\n")
            << "control characters";
        QTest::newRow("header value not allowed")
            << QByteArray("http_server_config:\n  headers:\n    X-Frame-Options: allow\n") << "deny or sameorigin";
        QTest::newRow("rate without burst") << QByteArray("rate_limit:\n  interval: 1s\n") << "at least 1";
    }
    void bad_web_config_exit_2() {
        QFETCH(QByteArray, config);
        QFETCH(QString, message);
        const QString path = write_file(pki(), "web-bad.yml", config);
        const Run r = run({"exporter", "--listen", "127.0.0.1:0", "--dsn", dsn(), "--web-config-file", path}, {}, 30000);
        QCOMPARE(r.code, 2);
        QVERIFY2(r.err.contains(message.toUtf8()), r.err.constData());
        QVERIFY2(clean_one_line_error(r.err), r.err.constData());
        QVERIFY2(!r.err.contains("Sekr1t") && !r.err.contains(hash_), r.err.constData());
    }

    // Over TLS: no password, a wrong one and an unknown user get 401 with WWW-Authenticate;
    // alice gets the page and the configured header; plain HTTP gets no answer.
    void tls_and_basic_auth() {
        const QString config = write_file(pki(), "web.yml", tls_and_auth_config());
        Exporter exporter({"exporter", "--dsn", dsn(), "--web-config-file", config});
        QVERIFY2(exporter.cli().out().contains("serving https://"), exporter.cli().out().constData());
        const quint16 port = exporter.port();

        const CurlResult anonymous = curl(tls_client(pki()), https(port));
        QCOMPARE(anonymous.status, 401);
        QVERIFY2(anonymous.headers.contains("WWW-Authenticate: Basic"), anonymous.headers.constData());
        QVERIFY(!anonymous.body.contains("pglock_up"));
        QCOMPARE(curl(tls_client(pki()) << "-u" << "alice:wrong", https(port)).status, 401);
        QCOMPARE(curl(tls_client(pki()) << "-u" << "mallory:" + password, https(port)).status, 401);
        QCOMPARE(curl(tls_client(pki()) << "-u" << "alice:" + password + "x", https(port)).status, 401);

        const CurlResult alice = curl(tls_client(pki()) << "-u" << "alice:" + password, https(port));
        QCOMPARE(alice.status, 200);
        QCOMPARE(sample(alice.body, "pglock_up"), 1.0);
        QVERIFY2(alice.headers.contains("X-Content-Type-Options: nosniff"), alice.headers.constData());
        QCOMPARE(curl(tls_client(pki()) << "-I" << "-u" << "alice:" + password, https(port)).status, 200);

        const CurlResult plain = curl({}, "http://127.0.0.1:" + QString::number(port) + "/metrics");
        QVERIFY2(plain.exit_code != 0 && plain.status == 0, plain.headers.constData());
        const CurlResult other_ca = curl({"--cacert", pki() + "/wrong-ca.crt"}, https(port));
        QCOMPARE(other_ca.exit_code, 60);  // the certificate did not verify
        QCOMPARE(curl(tls_client(pki()) << "-u" << "alice:" + password, https(port)).status, 200);
    }

    // Silent TLS clients (no ClientHello) and a flood of wrong passwords (each a bcrypt): alice,
    // who signed in before, is answered at once all the same, and the silent ones are closed at
    // --header-timeout.
    void silent_tls_clients_and_wrong_passwords_hold_back_nobody() {
        const QString config = write_file(pki(), "web.yml", tls_and_auth_config());
        Exporter exporter({"exporter", "--dsn", dsn(), "--web-config-file", config, "--header-timeout", "2s"});
        const quint16 port = exporter.port();
        QCOMPARE(curl(tls_client(pki()) << "-u" << "alice:" + password, https(port)).status, 200);

        QElapsedTimer since_connect;
        since_connect.start();
        std::vector<std::unique_ptr<RawClient>> silent;
        for (int i = 0; i < 12; ++i) silent.push_back(std::make_unique<RawClient>(port, "127.0.0.2"));
        std::vector<std::future<CurlResult>> wrong;
        for (int i = 0; i < 10; ++i)
            wrong.push_back(std::async(std::launch::async, [&, i] {
                return curl(tls_client(pki()) << "-u" << "alice:guess" + QString::number(i), https(port));
            }));
        QElapsedTimer t;
        t.start();
        const CurlResult alice = curl(tls_client(pki()) << "-u" << "alice:" + password, https(port));
        QCOMPARE(alice.status, 200);
        QVERIFY2(t.elapsed() < 1500, qPrintable("alice answered after " + QString::number(t.elapsed()) + " ms"));
        for (auto& w : wrong) {
            const int status = w.get().status;  // 503 when its turn for bcrypt did not come in time
            QVERIFY2(status == 401 || status == 503, qPrintable(QString::number(status)));
        }
        for (auto& c : silent) QVERIFY(c->closed_within(int(5000 - since_connect.elapsed())));
        QVERIFY(since_connect.elapsed() >= 1800);
    }

    // RequireAndVerifyClientCert with client_allowed_sans: only the client certificate of the
    // configured CA with the allowed SAN gets in, over the TLS version and suite configured.
    void client_certificates() {
        const QString config = write_file(
            pki(), "web-mtls.yml",
            "tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\n"
            "  client_auth_type: RequireAndVerifyClientCert\n  client_ca_file: ca.crt\n"
            "  client_allowed_sans: [scraper.test]\n  min_version: TLS12\n  max_version: TLS12\n"
            "  cipher_suites: [TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384]\n  curve_preferences: [X25519, CurveP256]\n");
        Exporter exporter({"exporter", "--dsn", dsn(), "--web-config-file", config});
        const quint16 port = exporter.port();
        const CurlResult without = curl(tls_client(pki()), https(port));
        QVERIFY2(without.status == 0 && without.exit_code != 0, without.headers.constData());
        const CurlResult stranger = curl(tls_client(pki(), "stranger.test"), https(port));
        QVERIFY2(stranger.status == 0 && stranger.exit_code != 0, stranger.headers.constData());
        const CurlResult intruder = curl(tls_client(pki(), "intruder.test"), https(port));
        QVERIFY2(intruder.status == 0 && intruder.exit_code != 0, intruder.headers.constData());
        const CurlResult scraper = curl(tls_client(pki(), "scraper.test") << "-v", https(port));
        QCOMPARE(scraper.status, 200);
        QCOMPARE(sample(scraper.body, "pglock_up"), 1.0);
        // The version and the one suite the config allows (by its IANA name; OpenSSL's below).
        QVERIFY2(scraper.err.contains("TLSv1.2 / ECDHE-ECDSA-AES256-GCM-SHA384"), scraper.err.constData());
    }

    // rate_limit (a token bucket, as exporter-toolkit's): the burst is answered, the next
    // request gets 429 at once.
    void rate_limit_answers_429_beyond_the_burst() {
        const QString config = write_file(pki(), "web-rate.yml", "rate_limit:\n  interval: 1m\n  burst: 2\n");
        Exporter exporter({"exporter", "--dsn", dsn(), "--web-config-file", config, "--min-interval", "10m"});
        const QString url = "http://127.0.0.1:" + QString::number(exporter.port()) + "/metrics";
        QCOMPARE(curl({}, url).status, 200);
        QCOMPARE(curl({}, url).status, 200);
        QCOMPARE(curl({}, url).status, 429);
    }

    // A real Prometheus scrapes the exporter over TLS with a client certificate and basic auth
    // (its own tls_config and basic_auth settings); with a wrong password its target is down
    // with a 401. promtool accepts the same web config: it is exporter-toolkit's format.
    void prometheus_scrapes_over_tls_with_basic_auth() {
        const QString prometheus = prometheus_tool("prometheus");
        QVERIFY2(!prometheus.isEmpty(), missing_tool("prometheus").constData());  // a failure, not a skip
        const QString web = write_file(
            pki(), "web-prometheus.yml",
            "tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\n"
            "  client_auth_type: RequireAndVerifyClientCert\n  client_ca_file: ca.crt\n"
            "basic_auth_users:\n  alice: " + hash_ + "\n");
        const auto [check_code, check_out] = promtool({"check", "web-config", web});
        QVERIFY2(check_code == 0, check_out.constData());
        Exporter exporter({"exporter", "--dsn", dsn(), "--web-config-file", web});

        QTemporaryDir dir;
        const QByteArray target = "'127.0.0.1:" + QByteArray::number(exporter.port()) + "'";
        const QByteArray tls_config = "    tls_config: {ca_file: '" + pki().toUtf8() + "/ca.crt', cert_file: '" +
                                      pki().toUtf8() + "/scraper.test.crt', key_file: '" + pki().toUtf8() +
                                      "/scraper.test.key', server_name: localhost}\n";
        const QByteArray config =
            "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n"
            "scrape_configs:\n"
            "  - job_name: pglock-tls\n    scheme: https\n" + tls_config +
            "    basic_auth: {username: alice, password: '" + password.toUtf8() + "'}\n"
            "    static_configs: [{targets: [" + target + "]}]\n"
            "  - job_name: pglock-tls-wrong-password\n    scheme: https\n" + tls_config +
            "    basic_auth: {username: alice, password: 'not-the-password'}\n"
            "    static_configs: [{targets: [" + target + "]}]\n";
        const QString config_file = write_file(dir.path(), "prometheus.yml", config);
        const auto [code, out] = promtool({"check", "config", config_file});
        QVERIFY2(code == 0, out.constData());

        const quint16 port = free_port();
        Child server(prometheus, {"--config.file=" + config_file, "--storage.tsdb.path=" + dir.filePath("data"),
                                  "--web.listen-address=127.0.0.1:" + QString::number(port)});
        QVERIFY2(eventually([&] { return !server.running() || http_request(port, "/-/ready").status == 200; }, 60000) &&
                     server.running(),
                 server.output().right(2000).constData());
        const auto value = [&](const QString& promql) {
            QUrlQuery q;
            q.addQueryItem("query", promql);
            const HttpReply r = http_request(port, "/api/v1/query?" + q.query(QUrl::FullyEncoded).toUtf8());
            const QJsonArray result = QJsonDocument::fromJson(r.body).object()["data"].toObject()["result"].toArray();
            return result.size() == 1 ? result[0].toObject()["value"].toArray()[1].toString().toDouble() : std::nan("");
        };
        QVERIFY2(eventually([&] { return value("pglock_up{job=\"pglock-tls\"}") == 1.0; }, 60000),
                 server.output().right(2000).constData());
        QCOMPARE(value("up{job=\"pglock-tls\"}"), 1.0);
        QVERIFY(eventually([&] { return value("up{job=\"pglock-tls-wrong-password\"}") == 0.0; }, 30000));
        const QJsonArray targets = QJsonDocument::fromJson(http_request(port, "/api/v1/targets").body)
                                       .object()["data"].toObject()["activeTargets"].toArray();
        bool refused = false;
        for (const auto& t : targets) {
            const QJsonObject o = t.toObject();
            if (o["labels"].toObject()["job"].toString() == "pglock-tls-wrong-password")
                refused = o["lastError"].toString().contains("401");
        }
        QVERIFY2(refused, "the wrong password's scrape did not fail with 401");
        QVERIFY(std::isnan(value("pglock_up{job=\"pglock-tls-wrong-password\"}")));
    }
};

QTEST_GUILESS_MAIN(TestCliExporterTls)
#include "test_cli_exporter_tls.moc"
