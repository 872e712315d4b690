// Bad connection input gives a clear message, fast, and never repeats a password: connection
// strings libpq refuses, a port nobody listens on, an address nothing answers (bounded by
// connect_timeout; a server that never answers). Checked where each surfaces: the library's typed error, the poller's status
// line (what the lockscope status bar shows) and the connection dialog's inline error.
// No server is needed; the wrong-password case is in test_passwords.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <QApplication>
#include <QDialogButtonBox>
#include <QElapsedTimer>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>
#include <QTimer>

#include "pglock/conninfo.hpp"
#include "pglock/error.hpp"
#include "pglock/lock.hpp"
#include "pglock/pool.hpp"
#include "poller/poller.hpp"
#include "stores/profile_store.hpp"
#include "widgets/connection_dialog.hpp"

using namespace lockscope;

namespace {

const char* const kSecret = "Sekr3t-never-shown";

// A TCP port on loopback that nobody listens on: bound to get a free one, then closed again.
int closedPort() {
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof addr;
    int port = 0;
    if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0 &&
        ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0)
        port = ntohs(addr.sin_port);
    ::close(fd);
    return port;
}

}  // namespace

class TestConnectErrors : public QObject {
    Q_OBJECT

    // The message the library gives for `conninfo`, checked to be connection_failed.
    static std::string libraryMessage(const std::string& conninfo, qint64* ms = nullptr) {
        QElapsedTimer t;
        t.start();
        pglock::Pool pool(conninfo);
        try {
            pool.acquire();
        } catch (const pglock::Error& e) {
            if (ms) *ms = t.elapsed();
            if (e.code() != pglock::Errc::connection_failed) return std::string("WRONG CODE: ") + e.what();
            return e.what();
        }
        return "CONNECTED";
    }

    // What the poller's status line says after its first failed attempt, and how long it took.
    static QString pollerMessage(const QString& conninfo, qint64* ms = nullptr) {
        Poller poller;
        QSignalSpy states(&poller, &Poller::stateChanged);
        QElapsedTimer t;
        t.start();
        poller.start(conninfo);
        while (poller.state() != PollState::disconnected && t.elapsed() < 20000) QTest::qWait(10);
        if (ms) *ms = t.elapsed();
        return states.isEmpty() ? QString() : states.last().at(1).toString();
    }

private slots:
    void refusedStrings_data() {
        QTest::addColumn<QString>("conninfo");
        QTest::addColumn<QString>("says");
        QTest::newRow("empty keyword") << "=foo" << R"(no keyword before "=")";
        QTest::newRow("port not a number") << "host=127.0.0.1 port=notanumber"
                                           << R"(invalid integer value "notanumber" for connection option "port")";
        QTest::newRow("unbalanced quote") << "host='db1 dbname=app" << "unterminated quoted string";
        QTest::newRow("no equals") << "this is not a dsn" << R"(missing "=" after "this")";
        QTest::newRow("unknown keyword") << "hots=db1" << R"(invalid connection option "hots")";
        QTest::newRow("bad sslmode") << "host=db1 sslmode=sometimes" << R"(invalid sslmode value: "sometimes")";
        // libpq quotes a malformed URI whole, password and all: it must come out masked.
        QTest::newRow("uri with password")
            << QStringLiteral("postgresql://op:%1@[::1/app").arg(QLatin1String(kSecret)) << "postgresql://op:***@[::1/app";
        QTest::newRow("uri bad percent in password")
            << QStringLiteral("postgresql://op:%1%zz@db1/app").arg(QLatin1String(kSecret)) << "invalid percent-encoded token";
    }

    void refusedStrings() {
        QFETCH(QString, conninfo);
        QFETCH(QString, says);
        const std::string lib = libraryMessage(conninfo.toStdString());
        QVERIFY2(lib.starts_with("connection_failed: "), lib.c_str());
        QVERIFY2(lib.find(says.toStdString()) != std::string::npos, lib.c_str());
        QVERIFY2(lib.find(kSecret) == std::string::npos, lib.c_str());
        const auto checked = pglock::conninfo_error(conninfo.toStdString());
        QVERIFY(checked.has_value());
        QVERIFY2(checked->find(says.toStdString()) != std::string::npos, checked->c_str());
        QVERIFY2(checked->find(kSecret) == std::string::npos, checked->c_str());

        qint64 ms = 0;
        const QString shown = pollerMessage(conninfo, &ms);
        QVERIFY2(shown.contains(says), qPrintable(shown));
        QVERIFY2(!shown.contains(QLatin1String(kSecret)), qPrintable(shown));
        QVERIFY2(ms < 3000, qPrintable(QString::number(ms)));
    }

    // A string libpq refuses to parse can never connect: the poller says so once and stops,
    // instead of retrying the same error forever (the first retry would come after 0.5 s).
    void refusedStringsAreNotRetried() {
        Poller poller;
        QSignalSpy states(&poller, &Poller::stateChanged);
        poller.start(QStringLiteral("host=127.0.0.1 sslmode=bogus"));
        QTRY_VERIFY_WITH_TIMEOUT(poller.state() == PollState::disconnected, 5000);
        QTest::qWait(2000);
        QStringList seen;
        for (const auto& args : states) seen << args.at(1).toString();
        QCOMPARE(poller.state(), PollState::disconnected);
        QVERIFY2(!seen.join(QLatin1Char('|')).contains(QStringLiteral("retrying")), qPrintable(seen.join(QLatin1Char('|'))));
        int disconnected = 0;
        for (const auto& args : states) disconnected += args.at(0).value<PollState>() == PollState::disconnected ? 1 : 0;
        QCOMPARE(disconnected, 1);
        QVERIFY2(seen.last().contains(QStringLiteral("invalid sslmode value: \"bogus\"")), qPrintable(seen.last()));
    }

    // Lock (the library's main type) reports the cause inside its own code.
    void lockKeepsTheCause() {
        pglock::Pool pool("host=127.0.0.1 port=notanumber");
        pglock::Lock lock(pool, "connect-errors.lock");
        try {
            lock.acquire();
            QFAIL("acquired without a server");
        } catch (const pglock::Error& e) {
            QCOMPARE(e.code(), pglock::Errc::acquire_failed);
            QVERIFY2(std::string(e.what()).find("notanumber") != std::string::npos, e.what());
        }
    }

    void nobodyListens() {
        const std::string conninfo = "host=127.0.0.1 port=" + std::to_string(closedPort()) + " user=postgres connect_timeout=5";
        qint64 ms = 0;
        const std::string lib = libraryMessage(conninfo, &ms);
        QVERIFY2(lib.find("Connection refused") != std::string::npos, lib.c_str());
        QVERIFY2(lib.find("127.0.0.1") != std::string::npos, lib.c_str());
        QVERIFY2(ms < 3000, lib.c_str());
        const QString shown = pollerMessage(QString::fromStdString(conninfo), &ms);
        QVERIFY2(shown.contains(QStringLiteral("Connection refused")), qPrintable(shown));
        QVERIFY(ms < 3000);
    }

    // A server that accepts the TCP connection and then says nothing (a hung host, a black-holing
    // proxy): connect_timeout=2 must end the wait and the message must say so.
    void silentServer() {
        const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
        sockaddr_in addr{};
        addr.sin_family = AF_INET;
        addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        socklen_t len = sizeof addr;
        QVERIFY(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
        QVERIFY(::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0);
        QVERIFY(::listen(fd, 16) == 0);  // the kernel completes handshakes; nobody ever reads
        const std::string conninfo =
            "host=127.0.0.1 port=" + std::to_string(ntohs(addr.sin_port)) + " user=postgres connect_timeout=2";
        qint64 ms = 0;
        const std::string lib = libraryMessage(conninfo, &ms);
        qInfo("library after %lld ms: %s", static_cast<long long>(ms), lib.c_str());
        QVERIFY2(lib.find("timeout expired after") != std::string::npos, lib.c_str());
        QVERIFY2(lib.find("127.0.0.1") != std::string::npos, lib.c_str());
        QVERIFY2(ms >= 1900 && ms < 4000, lib.c_str());
        const QString shown = pollerMessage(QString::fromStdString(conninfo), &ms);
        qInfo("poller after %lld ms: %s", static_cast<long long>(ms), qPrintable(shown));
        QVERIFY2(shown.contains(QStringLiteral("timeout expired after")), qPrintable(shown));
        QVERIFY2(ms < 4000, qPrintable(shown));
        ::close(fd);
    }

    // An address routed nowhere. What comes back depends on the network (unreachable at once, a
    // timeout, or a middlebox answering for it); whatever it is, it names the address and comes
    // within connect_timeout.
    void unroutableAddress() {
        const std::string conninfo = "host=10.255.255.1 port=5432 user=postgres connect_timeout=2";
        qint64 ms = 0;
        const std::string lib = libraryMessage(conninfo, &ms);
        qInfo("library after %lld ms: %s", static_cast<long long>(ms), lib.c_str());
        QVERIFY2(lib.starts_with("connection_failed: "), lib.c_str());
        QVERIFY2(lib.find("10.255.255.1") != std::string::npos, lib.c_str());
        QVERIFY2(ms < 4000, lib.c_str());
        const QString shown = pollerMessage(QString::fromStdString(conninfo), &ms);
        qInfo("poller after %lld ms: %s", static_cast<long long>(ms), qPrintable(shown));
        QVERIFY2(shown.contains(QStringLiteral("10.255.255.1")), qPrintable(shown));
        QVERIFY2(ms < 4000, qPrintable(shown));
    }

    // The dialog refuses to connect with a string libpq cannot parse and says why, inline.
    void dialogShowsTheProblem() {
        QTemporaryDir dir;
        ProfileStore store(dir.filePath(QStringLiteral("profiles.ini")));
        ConnectionDialog dialog(store);
        QLineEdit* conninfo = nullptr;
        for (QLineEdit* edit : dialog.findChildren<QLineEdit*>()) {
            if (edit->placeholderText().startsWith(QStringLiteral("host=db1"))) conninfo = edit;
        }
        QVERIFY(conninfo);
        QSignalSpy accepted(&dialog, &QDialog::accepted);
        for (const char* bad : {"=foo", "host=127.0.0.1 port=notanumber", "host='db1"}) {
            conninfo->setText(QString::fromLatin1(bad));
            dialog.findChild<QDialogButtonBox*>()->button(QDialogButtonBox::Ok)->click();
            QCOMPARE(accepted.count(), 0);
            QString shown;
            for (QLabel* label : dialog.findChildren<QLabel*>()) {
                if (label->text().startsWith(QStringLiteral("Not a valid connection string"))) shown = label->text();
            }
            QVERIFY2(!shown.isEmpty(), bad);
            QVERIFY2(shown.size() > 32, qPrintable(shown));  // names the problem, not only that there is one
        }
        QVERIFY(store.names().isEmpty());
    }
};

QTEST_MAIN(TestConnectErrors)
#include "test_connect_errors.moc"
