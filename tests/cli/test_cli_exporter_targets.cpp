// `pglock exporter`'s targets are independent and --poll-timeout bounds every answer: unreachable
// fleet targets (a port that accepts and never answers) do not hold back a healthy one or the
// exporter's own /metrics, and a server that stops in the middle of a result (a relay that
// passes the first bytes of the reply and then nothing) gets pglock_up 0 within --poll-timeout,
// then pglock_up 1 again once it answers.
#include <QTemporaryDir>
#include <QtTest>

#include <future>

#include "exporter_client_support.hpp"
#include "exporter_test_support.hpp"
#include "tcp_relay.hpp"

using namespace clitest;
using pglock::test::TcpRelay;

namespace {

QString write_file(const QTemporaryDir& dir, const QString& file, const QByteArray& content) {
    const QString path = dir.filePath(file);
    QFile f(path);
    if (!f.open(QIODevice::WriteOnly) || f.write(content) != content.size())
        throw std::runtime_error("cannot write " + path.toStdString());
    return path;
}

struct Timed {
    CurlResult reply;
    qint64 ms = 0;
};

Timed timed_get(quint16 port, const QString& path) {
    QElapsedTimer t;
    t.start();
    CurlResult r = curl({}, "http://127.0.0.1:" + QString::number(port) + path);
    return {std::move(r), t.elapsed()};
}

}  // namespace

class TestCliExporterTargets : public QObject {
    Q_OBJECT

private slots:
    void initTestCase() { QVERIFY2(!curl_program().isEmpty(), "curl not found on PATH (scripts/setup installs it)"); }

    // Five targets that never answer are probed at once; meanwhile the healthy target and the
    // exporter's own /metrics answer at once, and each dead one says pglock_up 0 within
    // --poll-timeout.
    void unreachable_targets_do_not_hold_back_a_healthy_one() {
        constexpr int dead = 5;
        QTemporaryDir dir;
        SilentServer hung;
        QByteArray config = "main = " + dsn().toUtf8() + "\n";
        for (int i = 0; i < dead; ++i) config += "hung" + QByteArray::number(i) + " = " + hung.dsn().toUtf8() + "\n";
        Exporter fleet({"exporter", "--config", write_file(dir, "targets.conf", config), "--poll-timeout", "3s"});
        QCOMPARE(timed_get(fleet.port(), "/probe?target=main").reply.status, 200);  // connected before the test

        std::vector<std::future<Timed>> probes;
        for (int i = 0; i < dead; ++i)
            probes.push_back(std::async(std::launch::async, [&, i] {
                return timed_get(fleet.port(), "/probe?target=hung" + QString::number(i));
            }));
        for (int i = 0; i < dead - 1; ++i) QVERIFY2(hung.wait_for_client(10000), "the dead targets are not being polled");

        const Timed main = timed_get(fleet.port(), "/probe?target=main");
        QCOMPARE(main.reply.status, 200);
        QCOMPARE(sample(main.reply.body, "pglock_up"), 1.0);
        QVERIFY2(main.ms < 1000, qPrintable("the healthy target answered after " + QString::number(main.ms) + " ms"));
        const Timed self = timed_get(fleet.port(), "/metrics");
        QCOMPARE(self.reply.status, 200);
        QVERIFY2(self.ms < 1000, qPrintable("/metrics answered after " + QString::number(self.ms) + " ms"));
        QVERIFY2(hung.wait_for_client(10000), "not every dead target was polled at once");

        for (auto& p : probes) {
            const Timed r = p.get();
            QCOMPARE(r.reply.status, 200);
            QCOMPARE(sample(r.reply.body, "pglock_up"), 0.0);
            QVERIFY2(r.ms < 4000, qPrintable("a dead target answered after " + QString::number(r.ms) + " ms"));
        }
    }

    // A server that stops in the middle of the poll's result: the answer is pglock_up 0 within
    // --poll-timeout (not after the statement's cancel has been waited for too), and once the
    // server answers again so does the exporter.
    void poll_timeout_bounds_the_answer_when_the_server_stalls() {
        TcpRelay relay(TcpRelay::target_of(dsn().toStdString()));
        const QString via = QString::fromStdString(relay.dsn_via(dsn().toStdString()));
        Exporter exporter({"exporter", "--dsn", via, "--poll-timeout", "2s", "--min-interval", "250ms"});
        const Timed first = timed_get(exporter.port(), "/metrics");
        QCOMPARE(sample(first.reply.body, "pglock_up"), 1.0);

        relay.stall_replies_after(20);
        // Cached answers come first; the first answer of a new poll is the one to time.
        Timed stalled;
        QVERIFY(eventually(
            [&] {
                stalled = timed_get(exporter.port(), "/metrics");
                return sample(stalled.reply.body, "pglock_exporter_polls_total") >= 2;
            },
            30000));
        QCOMPARE(stalled.reply.status, 200);
        QCOMPARE(sample(stalled.reply.body, "pglock_up"), 0.0);
        QVERIFY2(stalled.ms < 2700, qPrintable("--poll-timeout 2s answered after " + QString::number(stalled.ms) + " ms"));

        relay.resume();
        QVERIFY2(eventually([&] { return sample(timed_get(exporter.port(), "/metrics").reply.body, "pglock_up") == 1.0; },
                            30000),
                 exporter.cli().err().constData());
    }
};

QTEST_GUILESS_MAIN(TestCliExporterTargets)
#include "test_cli_exporter_targets.moc"
