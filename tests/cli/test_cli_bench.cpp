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

    // While the pairs run, another session looks at pg_stat_activity: by default the holding
    // session's application_name names the pair's lock about half the time (from the lock's reply
    // to the unlock); with --no-holder-identity it never does.
    void no_holder_identity_leaves_application_name_alone() {
        for (const bool named : {true, false}) {
            const QString prefix = unique_name(named ? "bench.named" : "bench.anon") + ".";
            QStringList args{"bench", "--clients", "1", "--seconds", "2", "--samples", "2", "--json",
                             "--name-prefix", prefix, "--dsn", dsn()};
            if (!named) args << "--no-holder-identity";
            Cli cli(args);
            RawConn look(dsn());
            const std::string pattern = "%pglock:" + (prefix + "pair.0").toStdString();
            int looks = 0, seen = 0;
            QElapsedTimer t;
            t.start();
            while (cli.running() && t.elapsed() < 5000) {
                const auto rows = look.query("SELECT count(*) FROM pg_stat_activity WHERE application_name LIKE $1",
                                             {pattern});
                ++looks;
                if (rows.at(0).at(0) != "0") ++seen;
            }
            QVERIFY2(cli.wait_finished(60000), "pglock bench did not finish");
            QVERIFY2(cli.exit_code() == 0, cli.err().constData());
            QVERIFY2(cli.out().contains(named ? "\"holder_identity\":true" : "\"holder_identity\":false"),
                     cli.out().constData());
            QVERIFY2(looks > 20, qPrintable(QString::number(looks)));
            if (named) QVERIFY2(seen > 0, qPrintable(QStringLiteral("named in none of %1 looks").arg(looks)));
            else QVERIFY2(seen == 0, qPrintable(QStringLiteral("named in %1 of %2 looks").arg(seen).arg(looks)));
        }
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
