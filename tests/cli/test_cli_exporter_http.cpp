// `pglock exporter`'s HTTP side against the clients an open port gets: connections that say
// nothing, that send their headers a byte a second, that never read the answer, too many from
// one address or in all; HEAD requests (never a poll) and /probe targets with escapes (an encoded
// NUL is refused, never cut short). Real sockets and curl against the real binary and server.
#include <QTemporaryDir>
#include <QtTest>

#include <memory>

#include "exporter_client_support.hpp"
#include "exporter_test_support.hpp"

using namespace clitest;

namespace {

QString write_file(const QTemporaryDir& dir, const QString& file, const QByteArray& content) {
    const QString path = dir.filePath(file);
    QFile f(path);
    if (!f.open(QIODevice::WriteOnly) || f.write(content) != content.size())
        throw std::runtime_error("cannot write " + path.toStdString());
    return path;
}

QString url(quint16 port, const char* path) { return "http://127.0.0.1:" + QString::number(port) + path; }

std::vector<std::unique_ptr<RawClient>> connect_many(quint16 port, int n, const char* source = "127.0.0.1") {
    std::vector<std::unique_ptr<RawClient>> clients;
    for (int i = 0; i < n; ++i) clients.push_back(std::make_unique<RawClient>(port, source));
    return clients;
}

}  // namespace

class TestCliExporterHttp : public QObject {
    Q_OBJECT

private slots:
    void initTestCase() { QVERIFY2(!curl_program().isEmpty(), "curl not found on PATH (scripts/setup installs it)"); }

    // More silent connections than a thread-per-connection server has threads: a scrape is
    // still answered at once, and the silent ones are closed at the header timeout (5 s).
    void silent_clients_do_not_hold_back_a_scrape() {
        Exporter exporter({"exporter", "--dsn", dsn()});
        QElapsedTimer since_connect;
        since_connect.start();
        auto silent = connect_many(exporter.port(), 12);

        QElapsedTimer t;
        t.start();
        const HttpReply reply = exporter.get("/metrics");
        QCOMPARE(reply.status, 200);
        QCOMPARE(sample(reply.body, "pglock_up"), 1.0);
        QVERIFY2(t.elapsed() < 2000, qPrintable(QString::number(t.elapsed()) + " ms for a scrape"));

        for (auto& c : silent)
            QVERIFY2(c->closed_within(int(9000 - since_connect.elapsed())),
                     qPrintable("a silent client still open after " + QString::number(since_connect.elapsed()) + " ms"));
        QVERIFY2(since_connect.elapsed() >= 4500,
                 qPrintable("closed after " + QString::number(since_connect.elapsed()) + " ms, before --header-timeout"));
    }

    // Headers sent one byte a second never finish: such clients are closed at the header
    // timeout however steadily they send, and a scrape meanwhile is answered at once.
    void header_trickle_is_cut_at_the_header_timeout() {
        Exporter exporter({"exporter", "--dsn", dsn()});
        QElapsedTimer since_connect;
        since_connect.start();
        auto slow = connect_many(exporter.port(), 8);
        std::vector<RawClient*> raw;
        for (auto& c : slow) raw.push_back(c.get());
        Trickler trickle(raw, "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: " + std::string(100, 'a'),
                         std::chrono::seconds(1));

        QElapsedTimer t;
        t.start();
        const HttpReply reply = exporter.get("/metrics");
        QCOMPARE(reply.status, 200);
        QVERIFY2(t.elapsed() < 2000, qPrintable(QString::number(t.elapsed()) + " ms for a scrape"));

        for (auto& c : slow)
            QVERIFY2(c->closed_within(int(9000 - since_connect.elapsed())),
                     qPrintable("a trickling client still open after " + QString::number(since_connect.elapsed()) +
                                " ms"));
        QVERIFY(since_connect.elapsed() >= 4500);
    }

    // Clients that ask for a large page and never read it: others are answered meanwhile, and
    // each is reset at the write timeout.
    void clients_that_never_read_are_cut_at_the_write_timeout() {
        constexpr int names = 3000;
        QTemporaryDir dir;
        QByteArray catalog, keys = "{";
        const QString prefix = unique_name("exporter.unread");
        for (int i = 0; i < names; ++i) {
            const QString name = prefix + "." + QString::number(i);
            catalog += name.toUtf8() + '\n';
            keys += QByteArray::number(qint64(key_of(name))) + ',';
        }
        keys.back() = '}';
        RawConn holder(dsn());
        QCOMPARE(holder.scalar("SELECT count(pg_advisory_lock(k)) FROM unnest($1::bigint[]) AS k", {keys.toStdString()}),
                 std::to_string(names));
        Exporter exporter({"exporter", "--dsn", dsn(), "--catalog", write_file(dir, "catalog.txt", catalog),
                           "--max-names", QString::number(names), "--min-interval", "10m", "--write-timeout", "2s"});
        const HttpReply first = exporter.get("/metrics");  // the poll, so the readers below get the cache
        QCOMPARE(first.status, 200);
        QVERIFY2(first.body.size() > 1000000, qPrintable(QString::number(first.body.size()) + " bytes"));

        QElapsedTimer since_request;
        since_request.start();
        std::vector<std::unique_ptr<RawClient>> readers;
        for (int i = 0; i < 8; ++i) {
            readers.push_back(std::make_unique<RawClient>(exporter.port(), "127.0.0.1", 4096));
            QVERIFY(readers.back()->send("GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"));
        }
        QElapsedTimer t;
        t.start();
        QCOMPARE(exporter.get("/metrics").status, 200);
        QVERIFY2(t.elapsed() < 3000, qPrintable(QString::number(t.elapsed()) + " ms for a scrape"));
        for (auto& r : readers)
            QVERIFY2(r->reset_within(int(8000 - since_request.elapsed())),
                     qPrintable("a client that reads nothing still connected after " +
                                QString::number(since_request.elapsed()) + " ms"));
        QVERIFY(since_request.elapsed() >= 1500);
    }

    // Beyond --max-connections-per-client from one address, and beyond --max-connections in
    // all, a connection is answered 503 and closed at once; the ones it has stay open, other
    // addresses are served, and once the silent ones time out every client is served again.
    void connection_limits_per_client_and_in_all() {
        Exporter exporter({"exporter", "--dsn", dsn(), "--max-connections", "6", "--max-connections-per-client", "3",
                           "--header-timeout", "2s"});
        QElapsedTimer since_connect;
        since_connect.start();
        auto first = connect_many(exporter.port(), 3, "127.0.0.2");
        RawClient fourth(exporter.port(), "127.0.0.2");
        QVERIFY2(fourth.closed_within(1500), "a 4th connection from one address was kept");
        QVERIFY2(fourth.received().startsWith("HTTP/1.1 503 "), fourth.received().constData());
        QVERIFY2(fourth.received().contains("--max-connections-per-client"), fourth.received().constData());
        for (auto& c : first) QVERIFY(!c->closed_within(0));

        QCOMPARE(exporter.get("/metrics").status, 200);  // 127.0.0.1 is another client

        auto more = connect_many(exporter.port(), 3, "127.0.0.3");  // 6 in all
        RawClient seventh(exporter.port(), "127.0.0.4");
        QVERIFY2(seventh.closed_within(1500), "a 7th connection was kept past --max-connections 6");
        QVERIFY2(seventh.received().startsWith("HTTP/1.1 503 "), seventh.received().constData());
        QVERIFY2(seventh.received().contains("--max-connections"), seventh.received().constData());

        // The silent six are closed at the header timeout; then scrapes are answered again.
        for (auto& c : first) QVERIFY(c->closed_within(int(6000 - since_connect.elapsed())));
        for (auto& c : more) QVERIFY(c->closed_within(int(6000 - since_connect.elapsed())));
        const CurlResult after = curl({}, url(exporter.port(), "/metrics"));
        QCOMPARE(after.status, 200);
    }

    // HEAD says what GET would answer without polling: with --dsn the page's scrape counter does
    // not move, and a fleet's unreachable target is not even connected to.
    void head_answers_without_a_poll() {
        {
            Exporter exporter({"exporter", "--dsn", dsn(), "--min-interval", "10m"});
            const CurlResult head = curl({"-I"}, url(exporter.port(), "/metrics"));
            QCOMPARE(head.status, 200);
            QVERIFY2(head.headers.contains("Content-Type: text/plain; version=0.0.4"), head.headers.constData());
            QVERIFY(head.body.isEmpty());
            const HttpReply page = exporter.get("/metrics");
            QCOMPARE(sample(page.body, "pglock_exporter_scrapes_total"), 1.0);
            QCOMPARE(sample(page.body, "pglock_exporter_polls_total"), 1.0);
        }
        QTemporaryDir dir;
        SilentServer hung;
        const QString config = write_file(dir, "targets.conf", ("hung = " + hung.dsn() + "\n").toUtf8());
        Exporter fleet({"exporter", "--config", config, "--poll-timeout", "3s"});
        QElapsedTimer t;
        t.start();
        const CurlResult head = curl({"-I"}, url(fleet.port(), "/probe?target=hung"));
        QCOMPARE(head.status, 200);
        QVERIFY2(t.elapsed() < 1500, qPrintable(QString::number(t.elapsed()) + " ms for HEAD"));
        QCOMPARE(curl({"-I"}, url(fleet.port(), "/probe?target=nope")).status, 400);
        QCOMPARE(curl({"-I"}, url(fleet.port(), "/probe")).status, 400);
        const HttpReply self = fleet.get("/metrics");
        QCOMPARE(sample(self.body, "pglock_exporter_polls_total{target=\"hung\"}"), 0.0);
        QCOMPARE(sample(self.body, "pglock_exporter_scrapes_total{target=\"hung\"}"), 0.0);
    }

    // The target parameter is decoded whole: an encoded NUL (or newline) is refused, not read as
    // the end of the name, and so are bad escapes and a second target.
    void probe_target_is_taken_whole() {
        QTemporaryDir dir;
        const QString config = write_file(dir, "targets.conf", ("main = " + dsn() + "\n").toUtf8());
        Exporter fleet({"exporter", "--config", config});
        const CurlResult ok = curl({}, url(fleet.port(), "/probe?target=ma%69n"));
        QCOMPARE(ok.status, 200);
        QCOMPARE(sample(ok.body, "pglock_up"), 1.0);
        for (const char* query : {"target=main%00junk", "target=main%00", "target=main%0a", "target=main%zz",
                                  "target=main&target=main", "target=main%"}) {
            const CurlResult r = curl({}, url(fleet.port(), (std::string("/probe?") + query).c_str()));
            QVERIFY2(r.status == 400, qPrintable(QString(query) + " answered " + QString::number(r.status) + ": " +
                                                 QString::fromUtf8(r.body.left(300))));
            QVERIFY2(!r.body.contains('\0'), query);
            QVERIFY(std::isnan(sample(r.body, "pglock_up")));
        }
        const HttpReply self = fleet.get("/metrics");
        QCOMPARE(sample(self.body, "pglock_exporter_scrapes_total{target=\"main\"}"), 1.0);
    }
};

QTEST_GUILESS_MAIN(TestCliExporterHttp)
#include "test_cli_exporter_http.moc"
