// Bad connection input for the `pglock` binary: malformed --dsn strings, a port nobody listens
// on, a server that never answers, an unroutable address and a wrong password. Each time the
// exit code is 1 and stderr is one `pglock: error: connection_failed: ...` line that names the
// problem, comes within connect_timeout, and does not contain the password.
#include <QElapsedTimer>
#include <QUuid>
#include <QtTest>

#include <memory>

#include "cli_test_support.hpp"
#include "own_cluster.hpp"

using namespace clitest;
using pglock::test::OwnCluster;

namespace {

const char* const kRole = "cli_operator";

// Without PG* variables that could fill in what a test string leaves out.
QProcessEnvironment cleanEnv() {
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    for (const QString& key : env.keys()) {
        if (key.startsWith(QStringLiteral("PG"))) env.remove(key);
    }
    return env;
}

}  // namespace

class TestCliBadInput : public QObject {
    Q_OBJECT

    std::unique_ptr<OwnCluster> cluster_;
    const QByteArray password_ = "cli-pw-" + QUuid::createUuid().toByteArray(QUuid::Id128);

    QString roleDsn(const QString& extra = {}) const {
        return QStringLiteral("host=127.0.0.1 port=%1 user=%2 dbname=postgres connect_timeout=5 %3")
            .arg(cluster_->port())
            .arg(QLatin1String(kRole), extra)
            .trimmed();
    }

    // Runs `args`, checks exit 1 and one clean line containing `says` and not `secret`.
    static void expectOneLine(const QStringList& args, const QString& says, const QByteArray& secret = {},
                              const QProcessEnvironment& env = cleanEnv(), qint64 max_ms = 5000,
                              const QByteArray& code = "connection_failed") {
        QElapsedTimer t;
        t.start();
        const Run r = run(args, {}, 30000, env);
        const qint64 ms = t.elapsed();
        const QByteArray what = args.join(QLatin1Char(' ')).toUtf8() + " -> " + r.err;
        QVERIFY2(!r.crashed, what.constData());
        QCOMPARE(r.code, 1);
        QVERIFY2(clean_one_line_error(r.err), what.constData());
        // The typed error's code: connection_failed, or lock_acquire_failed with it as the cause
        // (a Lock reports what stopped it inside its own code).
        QVERIFY2(r.err.startsWith("pglock: error: " + code + ": ") ||
                     r.err.startsWith("pglock: error: lock_acquire_failed: " + code + ": "),
                 what.constData());
        QVERIFY2(r.err.contains(says.toUtf8()), what.constData());
        if (!secret.isEmpty()) {
            QVERIFY2(!r.err.contains(secret) && !r.out.contains(secret), what.constData());
        }
        QVERIFY2(ms < max_ms, (what + " took " + QByteArray::number(ms) + " ms").constData());
    }

private slots:
    void initTestCase() {
        try {
            cluster_ = std::make_unique<OwnCluster>();
            cluster_->set_hba("local all postgres trust\nhost all all 127.0.0.1/32 scram-sha-256\n");
            cluster_->restart();
        } catch (const std::exception& e) {
            QFAIL(e.what());
        }
        RawConn admin(QString::fromStdString(cluster_->admin_dsn()));
        admin.query(std::string("CREATE ROLE ") + kRole + " LOGIN PASSWORD '" + password_.toStdString() + "'");
    }

    void cleanupTestCase() { cluster_.reset(); }

    void malformedDsn_data() {
        QTest::addColumn<QString>("dsn");
        QTest::addColumn<QString>("says");
        QTest::newRow("empty keyword") << "=foo" << R"(invalid --dsn: invalid connection option "": no keyword before "=")";
        QTest::newRow("port not a number") << "host=127.0.0.1 port=notanumber"
                                           << R"(invalid --dsn: invalid integer value "notanumber" for connection option "port")";
        QTest::newRow("unbalanced quote") << "host='db1 dbname=app" << "invalid --dsn: unterminated quoted string";
        QTest::newRow("unknown keyword") << "hots=db1" << R"(invalid --dsn: invalid connection option "hots")";
        QTest::newRow("bad sslmode") << "host=db1 sslmode=sometimes" << R"(invalid sslmode value: "sometimes")";
        QTest::newRow("bad connect_timeout") << "host=db1 connect_timeout=soon"
                                             << R"(invalid integer value "soon" for connection option "connect_timeout")";
        // libpq's message quotes this URI whole: the password must come out masked.
        QTest::newRow("uri with password") << "postgresql://op:Sekr3t-cli@[::1/app" << "postgresql://op:***@[::1/app";
        // An '@' in a URI password must be written %40. Unencoded, libpq ends the password at the
        // first '@' and takes the rest ("Sekr3t-cli@127.0.0.1") for the host, which its lookup
        // error then quoted. Refused before any lookup, and nothing of the password is shown.
        QTest::newRow("uri password with a raw @") << "postgresql://op:wrong@Sekr3t-cli@127.0.0.1/app"
                                                   << R"(invalid --dsn: more than one "@" before the host)";
        QTest::newRow("uri password with raw @s") << "postgresql://op:a@b@Sekr3t-cli@127.0.0.1:5432/app?sslmode=disable"
                                                  << "write an @ that belongs to the user name or password as %40";
    }

    void malformedDsn() {
        QFETCH(QString, dsn);
        QFETCH(QString, says);
        for (const char* verb : {"try", "hold", "status"}) {
            QStringList args{QString::fromLatin1(verb)};
            if (args[0] != QLatin1String("status")) args << QStringLiteral("bad-input");
            args << QStringLiteral("--dsn") << dsn;
            expectOneLine(args, says, "Sekr3t-cli");
        }
    }

    // An empty host means libpq's default socket; here there is no server behind it. Followed by
    // another setting, libpq takes that as the host's value: said plainly, before any lookup.
    void emptyHost() {
        expectOneLine({"try", "x", "--dsn", "host="}, QStringLiteral("connection to server on socket"));
        expectOneLine({"try", "x", "--dsn", "host= port=1"},
                      QStringLiteral(R"(invalid --dsn: host "port=1" looks like another setting: write an empty value as host='')"));
    }

    void nobodyListens() {
        SilentServer l;
        l.close();
        expectOneLine({"try", "x", "--dsn", QStringLiteral("host=127.0.0.1 port=%1 user=postgres").arg(l.port())},
                      QStringLiteral("Connection refused"));
    }

    // Accepts TCP, never answers: connect_timeout=2 ends it, and the line says so and where.
    void serverNeverAnswers() {
        SilentServer l;
        const QString dsn = QStringLiteral("host=127.0.0.1 port=%1 user=postgres connect_timeout=2").arg(l.port());
        const QString where = QStringLiteral("while connecting to 127.0.0.1 port %1").arg(l.port());
        expectOneLine({"try", "x", "--dsn", dsn}, QStringLiteral("timeout expired after"), {}, cleanEnv(), 4500);
        expectOneLine({"try", "x", "--dsn", dsn}, where, {}, cleanEnv(), 4500);
        // status bounds the whole connect by the same timeout: a deadline, naming the server.
        expectOneLine({"status", "--dsn", dsn}, where, {}, cleanEnv(), 4500, "deadline_exceeded");
    }

    // What comes back depends on the network; it names the address, within the timeout.
    void unroutableAddress() {
        expectOneLine({"try", "x", "--dsn", "host=10.255.255.1 port=5432 user=postgres connect_timeout=2"},
                      QStringLiteral("10.255.255.1"), {}, cleanEnv(), 4500);
    }

    void wrongPassword() {
        const QByteArray wrong = "wrong-" + password_;
        const QString says = QStringLiteral("password authentication failed for user \"%1\"").arg(QLatin1String(kRole));
        // In the DSN, in PGPASSWORD, and in a .pgpass file: all refused the same way.
        expectOneLine({"try", "x", "--dsn", roleDsn("password=" + QString::fromLatin1(wrong))}, says, wrong);
        QProcessEnvironment env = cleanEnv();
        env.insert(QStringLiteral("PGPASSWORD"), QString::fromLatin1(wrong));
        expectOneLine({"try", "x", "--dsn", roleDsn()}, says, wrong, env);
        expectOneLine({"status", "--dsn", roleDsn()}, says, wrong, env);
        QTemporaryDir home;
        QFile pgpass(home.filePath(QStringLiteral(".pgpass")));
        QVERIFY(pgpass.open(QIODevice::WriteOnly));
        pgpass.write("*:*:*:" + QByteArray(kRole) + ":" + wrong + "\n");
        pgpass.close();
        QVERIFY(pgpass.setPermissions(QFileDevice::ReadOwner | QFileDevice::WriteOwner));
        QProcessEnvironment homeEnv = cleanEnv();
        homeEnv.insert(QStringLiteral("HOME"), home.path());
        expectOneLine({"try", "x", "--dsn", roleDsn()}, says, wrong, homeEnv);

        // No password at all is told apart from a wrong one.
        expectOneLine({"try", "x", "--dsn", roleDsn()}, QStringLiteral("no password supplied"));

        // And the right one gets in, from each of those places: the refusals above were about
        // the password, nothing else.
        const auto ok = run({"try", "bad-input.right", "--dsn", roleDsn("password=" + QString::fromLatin1(password_))}, {},
                            30000, cleanEnv());
        QVERIFY2(ok.code == 0, ok.err.constData());
        env.insert(QStringLiteral("PGPASSWORD"), QString::fromLatin1(password_));
        QCOMPARE(run({"try", "bad-input.right", "--dsn", roleDsn()}, {}, 30000, env).code, 0);
        QVERIFY(pgpass.open(QIODevice::WriteOnly | QIODevice::Truncate));
        pgpass.write("*:*:*:" + QByteArray(kRole) + ":" + password_ + "\n");
        pgpass.close();
        QCOMPARE(run({"try", "bad-input.right", "--dsn", roleDsn()}, {}, 30000, homeEnv).code, 0);
    }
};

QTEST_GUILESS_MAIN(TestCliBadInput)
#include "test_cli_bad_input.moc"
