// `pglock bench`: a short run reports positive rates and latencies, in JSON for scripts.
#include <QJsonDocument>
#include <QJsonObject>
#include <QtTest>

#include "cli_test_support.hpp"

using namespace clitest;

class TestCliBench : public QObject {
    Q_OBJECT
private slots:
    void short_json_run() {
        const auto r = run({"bench", "--clients", "2", "--seconds", "1", "--json", "--name-prefix",
                            unique_name("bench") + ".", "--dsn", dsn()},
                           {}, 120000);
        QVERIFY2(r.code == 0, r.err.constData());
        QJsonParseError perr;
        const auto doc = QJsonDocument::fromJson(r.out, &perr);
        QVERIFY2(perr.error == QJsonParseError::NoError, r.out.constData());
        const auto o = doc.object();
        QCOMPARE(o.value("clients").toInt(), 2);
        QVERIFY2(o.value("pairs").toInteger() > 0, r.out.constData());
        QVERIFY2(o.value("pairs_per_second").toDouble() > 0, r.out.constData());
        QCOMPARE(o.value("contended").toInteger(), 0);
        const auto lat = o.value("wake_latency_us").toObject();
        QVERIFY2(lat.value("samples").toInt() > 0, r.out.constData());
        QVERIFY2(lat.value("p50").toDouble() > 0, r.out.constData());
        QVERIFY2(lat.value("p99").toDouble() >= lat.value("p50").toDouble(), r.out.constData());
    }

    void text_output() {
        const auto r = run({"bench", "--clients", "1", "--seconds", "0.2", "--samples", "5", "--name-prefix",
                            unique_name("bench.text") + ".", "--dsn", dsn()});
        QVERIFY2(r.code == 0, r.err.constData());
        QVERIFY2(r.out.contains("pairs/s"), r.out.constData());
        QVERIFY2(r.out.contains("p99"), r.out.constData());
    }

    void wakeup_lock_held_elsewhere_names_the_holder() {
        const QString prefix = unique_name("bench.held") + ".";
        const auto key = key_of(prefix + "wake");  // the wake-up run's lock
        RawConn other(dsn());
        other.lock(key);
        const auto r = run({"bench", "--clients", "1", "--seconds", "0.2", "--samples", "2", "--name-prefix", prefix,
                            "--dsn", dsn()});
        QCOMPARE(r.code, 1);
        QVERIFY2(r.err.contains("held by pid " + QByteArray::number(other.pid())), r.err.constData());
        QVERIFY(other.unlock(key));
    }
};

QTEST_GUILESS_MAIN(TestCliBench)
#include "test_cli_bench.moc"
