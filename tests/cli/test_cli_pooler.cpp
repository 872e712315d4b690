// `pglock hold` and `pglock try` behind a real PgBouncer (tests/pg/pgbouncer). In transaction mode
// a quiet pool hands every client the same server connection: `hold` took the lock on it, each
// `try` through the same pooler was granted it again (advisory locks are reentrant per session)
// and its pg_advisory_unlock_all() dropped the holder's lock from the server while `hold` still
// said it held. Now the pooler is refused before any lock (the check is on by default), and with
// --no-pooler-check a second client still never gets the lock nor takes it from the holder. In
// session mode everything works as against the server itself.
#include "cli_test_support.hpp"

#include <cstdlib>

using namespace clitest;

namespace {

QString field(const QString& conninfo, const QString& key) {
    const auto m = QRegularExpression(QStringLiteral("(?:^|\\s)%1=(\\S+)").arg(key)).match(conninfo);
    return m.hasMatch() ? m.captured(1) : QString();
}

}  // namespace

class TestCliPooler : public QObject {
    Q_OBJECT

    QStringList dirs_;
    QString transaction_, session_;  // DSNs through each PgBouncer

    QString start_bouncer(const QString& options) {
        QTemporaryDir* dir = new QTemporaryDir(QStringLiteral("/tmp/pglock-cli-bouncer.XXXXXX"));
        dir->setAutoRemove(false);
        dirs_ << dir->path();
        const QString d = dsn();
        QProcess p;
        p.start(QStringLiteral(PGLOCK_TEST_SOURCE_DIR "/tests/pg/pgbouncer"),
                QStringList{"start", dir->path(), field(d, "host"), field(d, "port")} + options.split(' '));
        delete dir;
        if (!p.waitForFinished(60000) || p.exitCode() != 0) return {};
        return QString::fromUtf8(p.readAllStandardOutput()).trimmed();
    }

private slots:
    void initTestCase() {
        QVERIFY2(!dsn().isEmpty(), "no test server");
        transaction_ = start_bouncer(QStringLiteral("--mode transaction --pool-size 3 --lifo"));
        QVERIFY2(!transaction_.isEmpty(), "PgBouncer (transaction mode) did not start: scripts/setup installs it");
        session_ = start_bouncer(QStringLiteral("--mode session --pool-size 3"));
        QVERIFY2(!session_.isEmpty(), "PgBouncer (session mode) did not start");
    }

    void cleanupTestCase() {
        for (const QString& dir : dirs_) {
            QProcess::execute(QStringLiteral(PGLOCK_TEST_SOURCE_DIR "/tests/pg/pgbouncer"), {"stop", dir});
            QDir(dir).removeRecursively();
        }
    }

    // The check is on by default: both verbs refuse the pooler with exit 1 and say why.
    void transaction_pooler_is_refused() {
        const QString name = unique_name("refused");
        for (const QStringList& verb : {QStringList{"hold", name, "--for", "1s"}, QStringList{"try", name}}) {
            const Run r = run(verb + QStringList{"--dsn", transaction_});
            QCOMPARE(r.code, 1);
            QVERIFY2(r.err.contains("pool_mode=transaction"), r.err.constData());
            QVERIFY2(clean_one_line_error(r.err), r.err.constData());
        }
        RawConn server(dsn());
        QCOMPARE(server.granted_count(key_of(name)), 0);
    }

    // Without the check a holder may get its lock through a pooler no client used before, but no
    // `try` through the same pooler is ever told the lock was free, and none takes it from the
    // holder. (A pooler in transaction mode keeps what a client left on a backend: this needs
    // backends no pglock client has marked yet.)
    void second_client_never_gets_the_holders_lock() {
        const QString fresh = start_bouncer(QStringLiteral("--mode transaction --pool-size 3 --lifo"));
        QVERIFY2(!fresh.isEmpty(), "PgBouncer did not start");
        const QString name = unique_name("held");
        Cli hold({"hold", name, "--dsn", fresh, "--no-pooler-check"});
        QVERIFY2(hold.wait_stdout(QRegularExpression("holding")).hasMatch(), hold.err().constData());
        RawConn server(dsn());
        QCOMPARE(server.granted_count(key_of(name)), 1);
        for (int i = 0; i < 4; ++i) {
            const Run r = run({"try", name, "--dsn", fresh, "--no-pooler-check"});
            QVERIFY2(r.code != 0, r.out.constData());
            // Refused on the holder's backend (1), or contended on a backend of its own (3).
            QVERIFY2(r.code == 3 || (r.code == 1 && r.err.contains("another client")), r.err.constData());
            QCOMPARE(server.granted_count(key_of(name)), 1);
        }
        hold.signal(SIGINT);
        QVERIFY(hold.wait_finished(15000));
        QVERIFY2(hold.exit_code() == 0, hold.err().constData());
        QCOMPARE(server.granted_count(key_of(name)), 0);
    }

    // Session mode: a lock is one client's, another is told who holds it.
    void session_pooler_works() {
        const QString name = unique_name("session");
        Cli hold({"hold", name, "--dsn", session_});
        QVERIFY2(hold.wait_stdout(QRegularExpression("holding")).hasMatch(), hold.err().constData());
        const Run contended = run({"try", name, "--dsn", session_});
        QCOMPARE(contended.code, 3);
        QVERIFY2(contended.out.contains("held by pid"), contended.out.constData());
        hold.signal(SIGINT);
        QVERIFY(hold.wait_finished(15000));
        QCOMPARE(hold.exit_code(), 0);
        QCOMPARE(run({"try", name, "--dsn", session_}).code, 0);
    }
};

QTEST_MAIN(TestCliPooler)
#include "test_cli_pooler.moc"
