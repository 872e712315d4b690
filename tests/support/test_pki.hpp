// Certificates made at test time with the openssl command: CAs, a server certificate for
// "localhost" (and 127.0.0.1) and client certificates, each signed by a CA of the test's choice.
// Short-lived (2 days) EC keys, in a directory the test owns.
#pragma once

#include <QFile>
#include <QString>
#include <QStringList>

#include <stdexcept>

#include "own_cluster.hpp"  // run_program

namespace pglock::test {

inline constexpr const char* pki_openssl_config = R"([req]
distinguished_name = dn
prompt = no
[dn]
CN = pglock test CA
[ca]
basicConstraints = critical, CA:TRUE
keyUsage = critical, keyCertSign, cRLSign
subjectKeyIdentifier = hash
[server]
basicConstraints = CA:FALSE
keyUsage = critical, digitalSignature, keyEncipherment
extendedKeyUsage = serverAuth
subjectAltName = DNS:localhost, IP:127.0.0.1
)";

// openssl.cnf in dir: the extensions the functions below use.
inline void write_pki_config(const QString& dir) {
    QFile cnf(dir + "/openssl.cnf");
    if (!cnf.open(QIODevice::WriteOnly) || cnf.write(pki_openssl_config) < 0)
        throw std::runtime_error("cannot write " + dir.toStdString() + "/openssl.cnf");
}

// A self-signed CA: NAME.key and NAME.crt in dir.
inline void make_ca(const QString& dir, const QString& name) {
    run_program(QStringLiteral("openssl"),
                {"req", "-x509", "-new", "-nodes", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-keyout",
                 name + ".key", "-out", name + ".crt", "-days", "2", "-config", "openssl.cnf", "-extensions", "ca", "-subj",
                 "/CN=pglock test " + name},
                dir);
}

// NAME.key and NAME.csr for the subject CN.
inline void make_request(const QString& dir, const QString& name, const QString& cn) {
    run_program(QStringLiteral("openssl"),
                {"req", "-new", "-nodes", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-keyout",
                 name + ".key", "-out", name + ".csr", "-config", "openssl.cnf", "-subj", "/CN=" + cn},
                dir);
}

// NAME.crt from NAME.csr, signed by CA (CA.crt and CA.key in dir), with the extensions of
// `section` of extfile (a file in dir).
inline void sign(const QString& dir, const QString& ca, const QString& name, const QString& extfile,
                 const QString& section) {
    run_program(QStringLiteral("openssl"),
                {"x509", "-req", "-in", name + ".csr", "-CA", ca + ".crt", "-CAkey", ca + ".key", "-set_serial", "2",
                 "-days", "2", "-extfile", extfile, "-extensions", section, "-out", name + ".crt"},
                dir);
}

// server.key and server.crt for CN and SAN "localhost" (and IP 127.0.0.1), signed by ca.
inline void make_server_cert(const QString& dir, const QString& ca) {
    make_request(dir, QStringLiteral("server"), QStringLiteral("localhost"));
    sign(dir, ca, QStringLiteral("server"), QStringLiteral("openssl.cnf"), QStringLiteral("server"));
}

// NAME.key and NAME.crt, a client certificate (extended key usage clientAuth) with CN and SAN
// DNS:NAME, signed by ca.
inline void make_client_cert(const QString& dir, const QString& ca, const QString& name) {
    QFile ext(dir + "/" + name + ".ext");
    const QByteArray text = "[client]\nbasicConstraints = CA:FALSE\nkeyUsage = critical, digitalSignature\n"
                            "extendedKeyUsage = clientAuth\nsubjectAltName = DNS:" + name.toUtf8() + "\n";
    if (!ext.open(QIODevice::WriteOnly) || ext.write(text) != text.size())
        throw std::runtime_error("cannot write " + ext.fileName().toStdString());
    ext.close();
    make_request(dir, name, name);
    sign(dir, ca, name, name + ".ext", QStringLiteral("client"));
}

}  // namespace pglock::test
