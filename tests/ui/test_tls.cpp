// TLS with full verification, against a cluster of this test's own: a CA and a server certificate
// for "localhost" are made with the openssl command at test time, the server gets ssl=on and
// hostssl-only TCP rules, and then the library (Pool, Lock) and the lockscope paths (Poller,
// LockController, a saved ConnectionProfile) connect with sslmode=verify-full. pg_stat_ssl, read
// over the trusted unix socket, is the judge. A second CA that signed nothing must be refused
// with a message that says the certificate could not be verified.
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>
#include <QUuid>

#include <memory>

#include "actions/lock_controller.hpp"
#include "actions/read_only_switch.hpp"
#include "own_cluster.hpp"
#include "pg_conn.hpp"
#include "pglock/error.hpp"
#include "pglock/lock.hpp"
#include "pglock/pool.hpp"
#include "poller/poller.hpp"
#include "stores/profile_store.hpp"
#include "test_pki.hpp"

using namespace lockscope;
using pglock::test::OwnCluster;
using pglock::test::PgConn;

namespace {

constexpr int kWaitMs = 15000;

std::string readFile(const QString& path) {
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly)) throw std::runtime_error("cannot read " + path.toStdString());
    return f.readAll().toStdString();
}

QByteArray uniqueName(const char* what) {
    return QByteArray("tls-test.") + what + "." + QUuid::createUuid().toByteArray(QUuid::WithoutBraces);
}

}  // namespace

class TestTls : public QObject {
    Q_OBJECT

    std::unique_ptr<OwnCluster> cluster_;
    QTemporaryDir pki_;
    std::unique_ptr<PgConn> judge_;  // the unix socket, trusted: sees every backend

    // verify-full against `ca` (the file name in the pki dir).
    std::string dsn(const QString& ca, const std::string& app = "tls-test") const {
        return "host=localhost port=" + std::to_string(cluster_->port()) +
               " user=postgres dbname=postgres sslmode=verify-full sslrootcert=" + pki_.filePath(ca).toStdString() +
               " application_name=" + app;
    }
    // pg_stat_ssl of a backend: "t TLSv1.3" or "f " or "" when there is no such backend.
    std::string sslOf(int pid) {
        return judge_->one("SELECT ssl::text || ' ' || coalesce(version, '') FROM pg_stat_ssl WHERE pid = " +
                           std::to_string(pid));
    }
    std::string sslOfApp(const std::string& app) {
        return judge_->one("SELECT s.ssl::text FROM pg_stat_ssl s JOIN pg_stat_activity a USING (pid) "
                           "WHERE a.application_name = '" + app + "'");
    }

private slots:
    void initTestCase() {
        QVERIFY(pki_.isValid());
        try {
            pglock::test::write_pki_config(pki_.path());
            pglock::test::make_ca(pki_.path(), QStringLiteral("ca"));
            pglock::test::make_ca(pki_.path(), QStringLiteral("wrong-ca"));  // a CA that signed nothing of this server's
            pglock::test::make_server_cert(pki_.path(), QStringLiteral("ca"));

            cluster_ = std::make_unique<OwnCluster>();
            cluster_->write_data_file("server.crt", readFile(pki_.filePath(QStringLiteral("server.crt"))), 0644);
            cluster_->write_data_file("server.key", readFile(pki_.filePath(QStringLiteral("server.key"))), 0600);
            // "localhost" may resolve to ::1 first: listen there too, so verify-full is tested on
            // whichever address libpq picks.
            cluster_->append_conf("ssl = on\nssl_cert_file = 'server.crt'\nssl_key_file = 'server.key'\n"
                                  "listen_addresses = 'localhost'");
            // TCP only with TLS; the unix socket stays trusted for the judge.
            cluster_->set_hba("local all all trust\n"
                              "hostssl all all 127.0.0.1/32 trust\n"
                              "hostssl all all ::1/128 trust\n");
            cluster_->restart();
        } catch (const std::exception& e) {
            QFAIL(e.what());
        }
        judge_ = std::make_unique<PgConn>(cluster_->admin_dsn());
        QVERIFY(judge_->ok());
        QCOMPARE(judge_->one("SHOW ssl"), std::string("on"));
    }

    void cleanupTestCase() {
        judge_.reset();
        cluster_.reset();
    }

    // Without TLS the server refuses TCP: the rules above are what the other tests go through.
    void plainTcpIsRefused() {
        pglock::Pool pool("host=localhost port=" + std::to_string(cluster_->port()) +
                          " user=postgres dbname=postgres sslmode=disable connect_timeout=5");
        try {
            pool.acquire();
            QFAIL("a plain TCP connection was accepted");
        } catch (const pglock::Error& e) {
            QCOMPARE(e.code(), pglock::Errc::connection_failed);
            QVERIFY2(std::string(e.what()).find("no encryption") != std::string::npos, e.what());
        }
    }

    void poolAndLockOverVerifiedTls() {
        pglock::Pool pool(dsn(QStringLiteral("ca.crt")));
        {
            auto session = pool.acquire();
            const auto r = session->exec("SELECT ssl::text, version FROM pg_stat_ssl WHERE pid = pg_backend_pid()");
            QCOMPARE(r.get(0, 0), std::string_view("true"));
            QVERIFY(r.get(0, 1).starts_with("TLS"));
        }
        pglock::Lock lock(pool, uniqueName("pool").toStdString());
        auto guard = lock.try_acquire();
        QVERIFY(guard.has_value());
        const int pid = guard->backend_pid();
        QVERIFY2(sslOf(pid).starts_with("true TLS"), sslOf(pid).c_str());
        QCOMPARE(judge_->one("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND granted AND pid = " +
                             std::to_string(pid)),
                 std::string("1"));
        QVERIFY(!guard->release());
        QCOMPARE(judge_->one("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND pid = " + std::to_string(pid)),
                 std::string("0"));
    }

    // The app's way: a profile saved with the connection line, loaded again, and its conninfo
    // given to the poller and the lock controller.
    void lockscopeOverVerifiedTls() {
        QTemporaryDir settings;
        ProfileStore store(settings.filePath(QStringLiteral("profiles.ini")));
        ConnectionProfile saved;
        saved.name = QStringLiteral("tls");
        saved.conninfo = QString::fromStdString(dsn(QStringLiteral("ca.crt"), "tls-test-poller"));
        store.save(saved);
        const QString conninfo = store.load(QStringLiteral("tls")).toConninfo();
        QCOMPARE(conninfo, saved.conninfo);

        Poller poller;
        QSignalSpy results(&poller, &Poller::resultReady);
        poller.start(conninfo);
        QTRY_VERIFY_WITH_TIMEOUT(results.count() > 0, kWaitMs);
        QCOMPARE(poller.state(), PollState::connected);
        QCOMPARE(sslOfApp("tls-test-poller"), std::string("true"));

        ReadOnlySwitch readOnly;
        LockController locks(readOnly);
        locks.setConnection(conninfo);
        const auto taken = locks.take(uniqueName("app"), TakeMode::Try, false);
        QVERIFY2(taken.accepted(), qPrintable(taken.refusal));
        QTRY_VERIFY_WITH_TIMEOUT(locks.find(taken.id) && locks.find(taken.id)->state == OwnLockState::Held, kWaitMs);
        const int pid = locks.find(taken.id)->pid;
        QVERIFY2(sslOf(pid).starts_with("true TLS"), sslOf(pid).c_str());
        QVERIFY(locks.release(taken.id).accepted());
        QTRY_COMPARE_WITH_TIMEOUT(locks.find(taken.id)->state, OwnLockState::Released, kWaitMs);
        QCOMPARE(judge_->one("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND pid = " + std::to_string(pid)),
                 std::string("0"));
    }

    void wrongCaIsRefusedWithAClearMessage() {
        const std::string wrong = dsn(QStringLiteral("wrong-ca.crt"), "tls-test-wrong");
        pglock::Pool pool(wrong);
        try {
            pool.acquire();
            QFAIL("a server certificate from another CA was accepted");
        } catch (const pglock::Error& e) {
            QCOMPARE(e.code(), pglock::Errc::connection_failed);
            qInfo("library: %s", e.what());
            QVERIFY2(e.detail().find("certificate could not be verified") != std::string::npos, e.what());
        }
        pglock::Lock lock(pool, uniqueName("wrong").toStdString());
        try {
            lock.acquire();
            QFAIL("a lock was taken over an unverified connection");
        } catch (const pglock::Error& e) {
            QVERIFY2(std::string(e.what()).find("certificate could not be verified") != std::string::npos, e.what());
        }

        Poller poller;
        QSignalSpy states(&poller, &Poller::stateChanged);
        poller.start(QString::fromStdString(wrong));
        QTRY_VERIFY_WITH_TIMEOUT(poller.state() == PollState::disconnected, kWaitMs);
        const QString shown = states.last().at(1).toString();
        qInfo("lockscope status: %s", qPrintable(shown));
        QVERIFY2(shown.contains(QStringLiteral("certificate could not be verified")), qPrintable(shown));

        ReadOnlySwitch readOnly;
        LockController locks(readOnly);
        locks.setConnection(QString::fromStdString(wrong));
        const auto taken = locks.take(uniqueName("app-wrong"), TakeMode::Try, false);
        QVERIFY(taken.accepted());  // accepted for work; the worker then fails to connect
        QTRY_COMPARE_WITH_TIMEOUT(locks.find(taken.id)->state, OwnLockState::Failed, kWaitMs);
        QVERIFY2(locks.find(taken.id)->message.contains(QStringLiteral("certificate could not be verified")),
                 qPrintable(locks.find(taken.id)->message));
        QCOMPARE(sslOfApp("tls-test-wrong"), std::string());  // no session got through
    }
};

QTEST_GUILESS_MAIN(TestTls)
#include "test_tls.moc"
