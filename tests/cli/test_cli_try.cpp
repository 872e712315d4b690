// `pglock try`: exit 0 when the lock was free, 3 when another session holds it, 1 on errors,
// each with one clear line.
#include <QtTest>

#include "cli_test_support.hpp"

using namespace clitest;

class TestCliTry : public QObject {
    Q_OBJECT
private slots:
    void free_lock_exits_0_and_is_released() {
        const QString name = unique_name("try.free");
        const auto r = run({"try", name, "--dsn", dsn()});
        QVERIFY2(r.code == 0, r.err.constData());
        QVERIFY2(r.out.startsWith("acquired:"), r.out.constData());
        QVERIFY(r.out.contains(QByteArray::number(qint64(key_of(name)))));
        RawConn obs(dsn());
        QCOMPARE(obs.granted_count(key_of(name)), 0);  // nothing left behind
    }

    void held_elsewhere_exits_3() {
        const QString name = unique_name("try.held");
        RawConn other(dsn());  // "another replica": plain libpq, not pglock
        other.lock(key_of(name));
        const auto r = run({"try", name, "--dsn", dsn()});
        QCOMPARE(r.code, 3);
        QVERIFY2(r.out.startsWith("contended:"), r.out.constData());
        QVERIFY2(r.out.contains("held by pid " + QByteArray::number(other.pid())), r.out.constData());  // who holds it
        QVERIFY(other.unlock(key_of(name)));  // and the CLI did not take it from us
        // Once released elsewhere it is free again.
        QCOMPARE(run({"try", name, "--dsn", dsn()}).code, 0);
    }

    void verbose_logs_lock_events() {
        const auto r = run({"--verbose", "try", unique_name("try.verbose"), "--dsn", dsn()});
        QCOMPARE(r.code, 0);
        QVERIFY2(r.err.contains("lock: acquired"), r.err.constData());
        QVERIFY2(r.err.contains("lock: released"), r.err.constData());
    }

    void malformed_dsn_is_one_line_error() {
        const auto r = run({"try", "x", "--dsn", "this is not a dsn"});
        QCOMPARE(r.code, 1);
        QVERIFY(!r.crashed);
        QVERIFY2(clean_one_line_error(r.err), r.err.constData());
        QVERIFY2(r.err.startsWith("pglock: error: connection_failed"), r.err.constData());
        QVERIFY2(r.err.contains("missing \"=\""), r.err.constData());  // libpq's own words
    }

    void unreachable_server_is_one_line_error() {
        // Port 1 on loopback: nobody listens, the connect is refused at once.
        const auto r = run({"try", "x", "--dsn", "host=127.0.0.1 port=1 user=postgres connect_timeout=5"});
        QCOMPARE(r.code, 1);
        QVERIFY(!r.crashed);
        QVERIFY2(clean_one_line_error(r.err), r.err.constData());
        QVERIFY2(r.err.contains("connection_failed"), r.err.constData());
        QVERIFY2(r.err.contains("127.0.0.1"), r.err.constData());
    }

    void empty_name_is_an_error() {
        const auto r = run({"try", "", "--dsn", dsn()});
        QCOMPARE(r.code, 1);
        QVERIFY2(clean_one_line_error(r.err), r.err.constData());
        QVERIFY2(r.err.contains("lock_empty_name"), r.err.constData());
    }
};

QTEST_GUILESS_MAIN(TestCliTry)
#include "test_cli_try.moc"
