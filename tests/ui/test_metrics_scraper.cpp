// The /metrics scraper as an operator meets it: the real `pglock hold --metrics` endpoint shows
// the lock (prometheus-cpp output, awkward name included); a dead, slow, huge or malformed
// endpoint shows a per-endpoint error while the GUI's event loop keeps running; rates come from
// two scrapes; the models merge incrementally under QAbstractItemModelTester.
#include <QAbstractItemModelTester>
#include <QCheckBox>
#include <QPlainTextEdit>
#include <QSettings>
#include <QTemporaryDir>
#include <QLabel>
#include <QPushButton>
#include <QSignalSpy>
#include <QTcpServer>
#include <QTableView>
#include <QTcpSocket>
#include <QTimer>
#include <QtTest>

#include <cmath>
#include <ctime>
#include <memory>

#include "cli_test_support.hpp"
#include "metrics/endpoint_status_model.hpp"
#include "metrics/metrics_model.hpp"
#include "metrics/metrics_panel.hpp"
#include "metrics/metrics_scraper.hpp"
#include "pglock/observe.hpp"
#include "stores/profile_store.hpp"
#include "stall_probe.hpp"
#include "widgets/connection_dialog.hpp"

using namespace lockscope;
using State = EndpointStatus::State;
namespace ex = pglock::exposition;

namespace {

// An HTTP server made for one test: answers with a fixed page, never answers, or streams an
// endless body.
class FakeServer : public QObject {
public:
    enum class Mode { respond, silent, stream };

    explicit FakeServer(Mode mode, QByteArray body = {}) : mode_(mode), body_(std::move(body)) {
        if (!server_.listen(QHostAddress::LocalHost, 0)) qFatal("cannot listen on 127.0.0.1");
        connect(&server_, &QTcpServer::newConnection, this, [this] {
            while (QTcpSocket* socket = server_.nextPendingConnection()) serve(socket);
        });
    }
    QUrl url() const { return QUrl(QStringLiteral("http://127.0.0.1:%1/metrics").arg(server_.serverPort())); }
    void setBody(QByteArray body) { body_ = std::move(body); }
    void setStatusLine(QByteArray line) { statusLine_ = std::move(line); }
    void setAnnouncedLength(qint64 length) { announcedLength_ = length; }
    int connections() const { return connections_; }
    qint64 streamed() const { return streamed_; }

private:
    void serve(QTcpSocket* socket) {
        ++connections_;
        socket->setParent(this);
        if (mode_ == Mode::silent) return;  // accepted, and never a byte back
        auto request = std::make_shared<QByteArray>();
        connect(socket, &QTcpSocket::readyRead, this, [this, socket, request] {
            *request += socket->readAll();
            if (!request->contains("\r\n\r\n")) return;
            socket->disconnect(this, nullptr);
            mode_ == Mode::respond ? respond(socket) : stream(socket);
        });
    }
    void respond(QTcpSocket* socket) {
        const qint64 length = announcedLength_ >= 0 ? announcedLength_ : body_.size();
        socket->write(statusLine_ + "\r\nContent-Type: text/plain; version=0.0.4\r\nContent-Length: " +
                      QByteArray::number(length) + "\r\nConnection: close\r\n\r\n");
        if (announcedLength_ < 0) socket->write(body_);
        if (announcedLength_ < 0) socket->disconnectFromHost();
    }
    void stream(QTcpSocket* socket) {
        // No Content-Length: only the bytes themselves can tell the client it is too much.
        socket->write("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nConnection: close\r\n\r\n");
        const QByteArray chunk(64 * 1024, 'x');
        auto more = [this, socket, chunk] {
            if (streamed_ < qint64(64) << 20 && socket->bytesToWrite() < 4 * chunk.size()) {
                streamed_ += socket->write(chunk);
            }
        };
        connect(socket, &QTcpSocket::bytesWritten, this, more);
        more();
    }

    QTcpServer server_;
    Mode mode_;
    QByteArray body_;
    QByteArray statusLine_ = "HTTP/1.1 200 OK";
    qint64 announcedLength_ = -1;
    int connections_ = 0;
    qint64 streamed_ = 0;
};

QUrl closedPortUrl() {
    QTcpServer probe;
    probe.listen(QHostAddress::LocalHost, 0);
    const quint16 port = probe.serverPort();
    probe.close();
    return QUrl(QStringLiteral("http://127.0.0.1:%1/metrics").arg(port));
}

QByteArray page(double acquired, double contended, double errors) {
    QByteArray text =
        "# HELP lock_acquires_total Advisory lock acquisition attempts by outcome.\n"
        "# TYPE lock_acquires_total counter\n";
    text += "lock_acquires_total{name=\"jobs.a\",outcome=\"acquired\"} " + QByteArray::number(acquired) + "\n";
    text += "lock_acquires_total{name=\"jobs.a\",outcome=\"contended\"} " + QByteArray::number(contended) + "\n";
    text += "lock_acquires_total{name=\"jobs.a\",outcome=\"error\"} " + QByteArray::number(errors) + "\n";
    return text;
}

std::shared_ptr<const ex::LockScrape> parsed(const std::string& text) {
    auto result = ex::parse_lock_metrics(text);
    if (result.error) qFatal("%s", result.error->describe().c_str());
    return std::make_shared<const ex::LockScrape>(std::move(result.scrape));
}

std::string acquires(const std::string& name, double acquired, double contended, double errors) {
    return "lock_acquires_total{name=\"" + name + "\",outcome=\"acquired\"} " + std::to_string(acquired) + "\n" +
           "lock_acquires_total{name=\"" + name + "\",outcome=\"contended\"} " + std::to_string(contended) + "\n" +
           "lock_acquires_total{name=\"" + name + "\",outcome=\"error\"} " + std::to_string(errors) + "\n";
}

std::string holds(const std::string& name, std::initializer_list<std::pair<const char*, double>> buckets, double sum) {
    std::string out;
    double count = 0;
    for (auto [le, c] : buckets) {
        out += "lock_hold_duration_seconds_bucket{name=\"" + name + "\",le=\"" + le + "\"} " + std::to_string(c) + "\n";
        count = c;
    }
    out += "lock_hold_duration_seconds_sum{name=\"" + name + "\"} " + std::to_string(sum) + "\n";
    out += "lock_hold_duration_seconds_count{name=\"" + name + "\"} " + std::to_string(count) + "\n";
    return out;
}

}  // namespace

class TestMetricsScraper : public QObject {
    Q_OBJECT

private slots:
    void endpoints_from_user_input() {
        QCOMPARE(MetricsScraper::endpointFromUserInput("127.0.0.1:9187"), QUrl("http://127.0.0.1:9187/metrics"));
        QCOMPARE(MetricsScraper::endpointFromUserInput(" https://app:8443/custom "), QUrl("https://app:8443/custom"));
        QString error;
        QVERIFY(!MetricsScraper::endpointFromUserInput("ftp://host/metrics", &error).isValid());
        QVERIFY(error.contains("http"));
        QVERIFY(!MetricsScraper::endpointFromUserInput("", &error).isValid());

        MetricsScraper scraper;
        QVERIFY(scraper.addEndpoint(QUrl("http://127.0.0.1:1/metrics")));
        QVERIFY(!scraper.addEndpoint(QUrl("http://127.0.0.1:1/metrics")));  // already there
        QVERIFY(!scraper.addEndpoint(QUrl("file:///etc/passwd")));
        scraper.setEndpoints({QUrl("http://127.0.0.1:2/metrics"), QUrl("http://127.0.0.1:1/metrics")});
        QCOMPARE(scraper.endpoints(),
                 QList<QUrl>({QUrl("http://127.0.0.1:1/metrics"), QUrl("http://127.0.0.1:2/metrics")}));
        QCOMPARE(scraper.interval(), std::chrono::milliseconds(15000));
    }

    void scrapes_the_real_cli_endpoint() {
#if !PGLOCK_WITH_PROMETHEUS
        QSKIP("pglock built without prometheus-cpp: the CLI has no --metrics");
#else
        if (QStringLiteral(PGLOCK_CLI_PATH).isEmpty()) QSKIP("the pglock CLI is not built");
        // A name only escapes keep whole: a quote, a backslash and a newline.
        const QString name = QStringLiteral("metrics.e2e \"quoted\" back\\slash\nline %1").arg(QCoreApplication::applicationPid());
        clitest::Cli cli({"hold", name, "--metrics", "127.0.0.1:0", "--dsn", clitest::dsn()});
        const auto served = cli.wait_stdout(QRegularExpression("metrics: serving (http://127\\.0\\.0\\.1:\\d+/metrics)"));
        QVERIFY2(served.hasMatch(), (cli.out() + cli.err()).constData());
        QVERIFY2(cli.wait_stdout(QRegularExpression("acquired: .* pid=\\d+")).hasMatch(), cli.err().constData());
        const QUrl url(served.captured(1));

        MetricsScraper scraper;
        MetricsModel model(&scraper);
        QAbstractItemModelTester modelTester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        EndpointStatusModel statusModel(&scraper);
        QAbstractItemModelTester statusTester(&statusModel, QAbstractItemModelTester::FailureReportingMode::QtTest);
        scraper.setInterval(std::chrono::milliseconds(300));
        scraper.addEndpoint(url);
        QSignalSpy scrapes(&scraper, &MetricsScraper::scraped);
        scraper.start();
        QTRY_VERIFY_WITH_TIMEOUT(scrapes.count() >= 2, 15000);

        const EndpointStatus status = scraper.status(url);
        QCOMPARE(int(status.state), int(State::ok));
        QVERIFY(status.lastSuccess.isValid());
        QVERIFY(status.samples > 0);
        const std::string raw = name.toStdString();
        const int row = model.rowOf(url, raw);
        QVERIFY2(row >= 0, "the held lock's name is not in the model");
        const MetricsModel::Row& r = model.row(row);
        QCOMPARE(r.acquired, 1.0);
        QCOMPARE(r.contended, 0.0);
        QVERIFY(r.acquiredRate.has_value());  // two scrapes: a rate, 0 while nothing changes
        QCOMPARE(*r.acquiredRate, 0.0);
        QCOMPARE(model.index(row, MetricsModel::NameColumn).data(MetricsModel::RawNameRole).toByteArray(),
                 QByteArray::fromStdString(raw));
        QVERIFY(model.index(row, MetricsModel::NameColumn).data().toString().contains("back\\\\slash\\nline"));
        // The histogram series exist (all zero while the lock is still held).
        const auto histograms = model.histograms();
        QVERIFY(histograms.count(raw));
        QCOMPARE(histograms.at(raw).upper_bounds.size(), std::size(pglock::hold_buckets) + 1);
        QCOMPARE(histograms.at(raw).count, 0.0);
        QCOMPARE(statusModel.index(0, EndpointStatusModel::StateColumn).data().toString(), QStringLiteral("ok"));

        // The application goes away: the endpoint turns to an error, its rows go grey, stay visible.
        cli.terminate();
        QVERIFY(cli.wait_finished());
        QTRY_COMPARE_WITH_TIMEOUT(int(scraper.status(url).state), int(State::error), 10000);
        QVERIFY(model.row(model.rowOf(url, raw)).stale);
        scraper.stop();
#endif
    }

    void dead_endpoint_reports_an_error() {
        MetricsScraper scraper;
        EndpointStatusModel statusModel(&scraper);
        const QUrl url = closedPortUrl();
        scraper.addEndpoint(url);
        scraper.scrapeNow();
        QTRY_COMPARE_WITH_TIMEOUT(int(scraper.status(url).state), int(State::error), 10000);
        QVERIFY2(scraper.status(url).error.contains("refused", Qt::CaseInsensitive), qPrintable(scraper.status(url).error));
        QVERIFY(!scraper.status(url).lastSuccess.isValid());
        const QModelIndex state = statusModel.index(0, EndpointStatusModel::StateColumn);
        QVERIFY(state.data().toString().startsWith("error: "));
        QCOMPARE(state.data(Qt::ForegroundRole).value<QBrush>().color(), QColor(0xb0, 0x00, 0x20));
    }

    void slow_endpoint_times_out_without_stalling_the_gui() {
        FakeServer silent(FakeServer::Mode::silent);
        MetricsScraper scraper;
        scraper.setTimeout(std::chrono::milliseconds(1500));
        scraper.addEndpoint(silent.url());
        StallProbe probe;
        QElapsedTimer elapsed;
        elapsed.start();
        scraper.scrapeNow();
        scraper.scrapeNow();  // a second tick while the first is in flight does not pile up
        QTRY_COMPARE_WITH_TIMEOUT(int(scraper.status(silent.url()).state), int(State::error), 10000);
        const qint64 tookMs = elapsed.elapsed();
        QVERIFY2(scraper.status(silent.url()).error.contains("timed out"), qPrintable(scraper.status(silent.url()).error));
        QVERIFY2(tookMs >= 1400 && tookMs < 5000, qPrintable(QString("timed out after %1 ms").arg(tookMs)));
        QCOMPARE(silent.connections(), 1);
        qInfo("slow endpoint: error after %lld ms; longest event-loop stall meanwhile %lld ms", tookMs, probe.maxGapMs());
        // A fetch that blocked the GUI thread would stall it for the whole 1.5 s timeout (a blocked
        // thread burns no CPU, so wall time is the measure here); the margin is for a loaded machine.
        QVERIFY2(probe.maxGapMs() < 1000, qPrintable(QString("event loop stalled %1 ms").arg(probe.maxGapMs())));
    }

    void huge_response_is_cut_off() {
        FakeServer endless(FakeServer::Mode::stream);
        MetricsScraper scraper;
        scraper.setMaxResponseBytes(qint64(8) << 20);
        scraper.addEndpoint(endless.url());
        StallProbe probe;
        scraper.scrapeNow();
        QTRY_COMPARE_WITH_TIMEOUT(int(scraper.status(endless.url()).state), int(State::error), 20000);
        const QString error = scraper.status(endless.url()).error;
        QVERIFY2(error.contains("too large") && error.contains("8 MiB"), qPrintable(error));
        qInfo("huge response: cut after the server wrote %lld bytes; longest event-loop stall %lld ms",
              endless.streamed(), probe.maxGapMs());
        QVERIFY(endless.streamed() < qint64(64) << 20);  // aborted, not read to the end
        QVERIFY2(probe.maxBusyMs() < 250, qPrintable(QString("the GUI thread worked %1 ms between two ticks").arg(probe.maxBusyMs())));
        QVERIFY2(probe.maxGapMs() < 1000, qPrintable(QString("event loop stalled %1 ms").arg(probe.maxGapMs())));

        // A Content-Length over the cap is refused before any of the body is read.
        FakeServer announced(FakeServer::Mode::respond);
        announced.setAnnouncedLength(qint64(1) << 30);
        scraper.addEndpoint(announced.url());
        scraper.scrapeNow();
        QTRY_COMPARE_WITH_TIMEOUT(int(scraper.status(announced.url()).state), int(State::error), 10000);
        QVERIFY2(scraper.status(announced.url()).error.contains("announced"), qPrintable(scraper.status(announced.url()).error));
    }

    void malformed_text_names_the_line() {
        FakeServer server(FakeServer::Mode::respond, page(1, 0, 0) + "lock_acquires_total{name=\"x\" 2\n");
        MetricsScraper scraper;
        MetricsModel model(&scraper);
        scraper.addEndpoint(server.url());
        scraper.scrapeNow();
        QTRY_COMPARE_WITH_TIMEOUT(int(scraper.status(server.url()).state), int(State::error), 10000);
        const QString error = scraper.status(server.url()).error;
        QVERIFY2(error.contains("malformed") && error.contains("line 6"), qPrintable(error));
        QCOMPARE(model.rowCount(), 0);  // nothing half-read is shown
    }

    void http_error_status_is_reported() {
        FakeServer server(FakeServer::Mode::respond, "no such page\n");
        server.setStatusLine("HTTP/1.1 404 Not Found");
        MetricsScraper scraper;
        scraper.addEndpoint(server.url());
        scraper.scrapeNow();
        QTRY_COMPARE_WITH_TIMEOUT(int(scraper.status(server.url()).state), int(State::error), 10000);
        QVERIFY2(scraper.status(server.url()).error.contains("Not Found"), qPrintable(scraper.status(server.url()).error));
    }

    void rates_across_two_real_scrapes() {
        FakeServer server(FakeServer::Mode::respond, page(10, 4, 0));
        MetricsScraper scraper;
        MetricsModel model(&scraper);
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        scraper.addEndpoint(server.url());
        QSignalSpy scrapes(&scraper, &MetricsScraper::scraped);
        scraper.scrapeNow();
        QTRY_COMPARE_WITH_TIMEOUT(int(scrapes.count()), 1, 10000);
        const std::int64_t firstMs = scraper.latestScrape(server.url()).steadyMs;
        QCOMPARE(model.rowCount(), 1);
        QVERIFY(!model.row(0).acquiredRate);  // one scrape: no rate yet
        QCOMPARE(model.index(0, MetricsModel::AcquiredRateColumn).data().toString(), QStringLiteral("–"));

        QTest::qWait(200);
        server.setBody(page(40, 4, 3));
        QSignalSpy changed(&model, &QAbstractItemModel::dataChanged);
        scraper.scrapeNow();
        QTRY_COMPARE_WITH_TIMEOUT(int(scrapes.count()), 2, 10000);
        const double seconds = double(scraper.latestScrape(server.url()).steadyMs - firstMs) / 1000.0;
        QVERIFY(seconds >= 0.2);
        QCOMPARE(model.rowCount(), 1);
        QVERIFY(!changed.isEmpty());  // updated in place
        QVERIFY(std::abs(*model.row(0).acquiredRate - 30 / seconds) < 1e-9);
        QCOMPARE(*model.row(0).contendedRate, 0.0);
        QVERIFY(std::abs(*model.row(0).errorRate - 3 / seconds) < 1e-9);
    }

    void large_page_is_parsed_off_the_gui_thread() {
        // A 4 MiB page (thousands of names): fetched in chunks, joined and parsed on the pool.
        std::string text;
        for (int i = 0; text.size() < (4u << 20); ++i) {
            const std::string name = "svc.job-" + std::to_string(i);
            text += acquires(name, i, 1, 0) + holds(name, {{"0.1", 1}, {"1", 3}, {"+Inf", 4}}, 2.5);
        }
        FakeServer server(FakeServer::Mode::respond, QByteArray::fromStdString(text));
        MetricsScraper scraper;
        MetricsModel model(&scraper);
        scraper.addEndpoint(server.url());
        QSignalSpy scrapes(&scraper, &MetricsScraper::scraped);
        StallProbe probe;
        scraper.scrapeNow();
        QTRY_COMPARE_WITH_TIMEOUT(int(scrapes.count()), 1, 20000);
        const EndpointStatus status = scraper.status(server.url());
        QCOMPARE(status.bytes, qint64(text.size()));
        QCOMPARE(qsizetype(model.rowCount()), status.locks);
        qInfo("%lld-byte page: %lld lock names, fetch + parse %lld ms, longest event-loop stall %lld ms "
              "(GUI thread's own CPU %.1f ms)", status.bytes, qlonglong(status.locks), status.durationMs,
              probe.maxGapMs(), probe.maxBusyMs());
        // Parsing 4 MiB on the GUI thread would take it as long as the fetch + parse above; what
        // is left there is merging the rows into the model.
        QVERIFY2(probe.maxBusyMs() < 250, qPrintable(QString("the GUI thread worked %1 ms between two ticks").arg(probe.maxBusyMs())));
    }

    void model_merges_incrementally() {
        MetricsModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        const QUrl a("http://a:1/metrics"), b("http://b:1/metrics");
        QSignalSpy inserted(&model, &QAbstractItemModel::rowsInserted);
        QSignalSpy removed(&model, &QAbstractItemModel::rowsRemoved);
        QSignalSpy changed(&model, &QAbstractItemModel::dataChanged);
        QSignalSpy reset(&model, &QAbstractItemModel::modelReset);

        model.applyScrape(a, {parsed(acquires("x", 10, 5, 0) + acquires("y", 1, 0, 0)), 0});
        model.applyScrape(b, {parsed(acquires("x", 7, 0, 0)), 0});
        QCOMPARE(model.rowCount(), 3);
        QCOMPARE(int(inserted.count()), 2);

        // 15 s later on a: x moved, y gone, z new.
        model.applyScrape(a, {parsed(acquires("x", 40, 5, 3) + acquires("z", 2, 0, 0)), 15000});
        QCOMPARE(model.rowCount(), 3);
        QCOMPARE(int(removed.count()), 1);
        QCOMPARE(int(inserted.count()), 3);
        const MetricsModel::Row& x = model.row(model.rowOf(a, "x"));
        QCOMPARE(*x.acquiredRate, 2.0);    // (40 - 10) / 15
        QCOMPARE(*x.contendedRate, 0.0);
        QCOMPARE(*x.errorRate, 0.2);
        QVERIFY(!model.row(model.rowOf(a, "z")).acquiredRate);  // new name: no rate yet
        QCOMPARE(model.rowOf(a, "y"), -1);
        QVERIFY(!model.row(model.rowOf(b, "x")).acquiredRate);  // b untouched
        QVERIFY(!changed.isEmpty());

        // The application restarted: its counter began again, and 5 in 10 s is 0.5/s.
        model.applyScrape(a, {parsed(acquires("x", 5, 0, 0)), 25000});
        QCOMPARE(*model.row(model.rowOf(a, "x")).acquiredRate, 0.5);

        // The same scrape again changes nothing and signals nothing for the rows.
        const int changesBefore = int(changed.count());
        model.applyScrape(b, {parsed(acquires("x", 7, 0, 0)), 0});
        QCOMPARE(int(changed.count()), changesBefore);

        model.setEndpointStale(b, true);
        QVERIFY(model.row(model.rowOf(b, "x")).stale);
        QCOMPARE(model.index(model.rowOf(b, "x"), 0).data(Qt::ForegroundRole).value<QBrush>().color(), QColor(Qt::gray));
        model.removeEndpoint(a);
        QCOMPARE(model.rowCount(), 1);
        QCOMPARE(int(reset.count()), 0);  // never a reset: selection and scroll survive scrapes
    }

    void histograms_sum_over_endpoints() {
        MetricsModel model;
        QSignalSpy changed(&model, &MetricsModel::histogramsChanged);
        model.applyScrape(QUrl("http://a:1/metrics"),
                          {parsed(holds("x", {{"0.1", 2}, {"0.5", 6}, {"1", 8}, {"+Inf", 10}}, 4.5)), 0});
        model.applyScrape(QUrl("http://b:1/metrics"),
                          {parsed(holds("x", {{"0.1", 1}, {"0.5", 1}, {"1", 2}, {"+Inf", 2}}, 1.0) +
                                  holds("y", {{"0.1", 0}, {"+Inf", 1}}, 9.0)),
                           0});
        QCOMPARE(int(changed.count()), 2);
        const auto h = model.histograms();
        QCOMPARE(h.size(), std::size_t(2));
        const ScrapedHistogram& x = h.at("x");
        QCOMPARE(x.upper_bounds, (std::vector<double>{0.1, 0.5, 1, std::numeric_limits<double>::infinity()}));
        QCOMPARE(x.cumulative, (std::vector<double>{3, 7, 10, 12}));
        QCOMPARE(x.count, 12.0);
        QCOMPARE(x.sum, 5.5);
        QCOMPARE(h.at("y").cumulative, (std::vector<double>{0, 1}));

        // Per row, quantiles come from that endpoint's buckets: a's median is 0.4 s.
        const int row = model.rowOf(QUrl("http://a:1/metrics"), "x");
        QCOMPARE(model.row(row).p50, 0.4);
        QCOMPARE(model.row(row).holds, 10.0);
        QCOMPARE(model.index(row, MetricsModel::HoldP50Column).data().toString(), QStringLiteral("400.0 ms"));
        QCOMPARE(model.row(row).p99, 1.0);  // in +Inf: the highest finite bound
    }

    void panel_shows_failures_and_edits_endpoints() {
        MetricsScraper scraper;
        MetricsModel model(&scraper);
        MetricsPanel panel(&scraper, &model);
        panel.show();
        QVERIFY(!panel.addEndpointFromText("ftp://nope"));
        QCOMPARE(int(scraper.endpoints().size()), 0);
        const QUrl dead = closedPortUrl();
        QVERIFY(panel.addEndpointFromText(dead.toString()));
        QVERIFY(!panel.addEndpointFromText(dead.toString()));  // already there
        QCOMPARE(panel.statusModel()->rowCount(), 1);
        scraper.scrapeNow();
        auto failingSummary = [&] {
            for (QLabel* label : panel.findChildren<QLabel*>()) {
                if (label->isVisible() && label->text().contains("failing")) return true;
            }
            return false;
        };
        QTRY_VERIFY_WITH_TIMEOUT(failingSummary(), 10000);
        panel.endpointsView()->selectRow(0);
        const auto buttons = panel.findChildren<QPushButton*>();
        const auto remove = std::find_if(buttons.begin(), buttons.end(), [](QPushButton* b) { return b->text() == "Remove"; });
        QVERIFY(remove != buttons.end() && (*remove)->isEnabled());
        (*remove)->click();
        QCOMPARE(int(scraper.endpoints().size()), 0);
        QCOMPARE(panel.statusModel()->rowCount(), 0);
        QVERIFY(!failingSummary());
    }

    void profiles_keep_metrics_urls_and_read_only() {
        QTemporaryDir dir;
        const QString ini = dir.filePath(QStringLiteral("profiles.ini"));
        {
            ProfileStore store(ini);
            ConnectionProfile p;
            p.name = QStringLiteral("prod");
            p.host = QStringLiteral("db1");
            p.production = true;
            p.readOnly = false;  // an explicit choice against the production default
            p.metricsUrls = {QStringLiteral("http://app1:9187/metrics"), QStringLiteral("http://app2:9187/metrics")};
            store.save(p);
        }
        {
            ProfileStore store(ini);
            const ConnectionProfile p = store.load(QStringLiteral("prod"));
            QCOMPARE(p.metricsUrls.size(), 2);
            QCOMPARE(p.metricsUrls.at(1), QStringLiteral("http://app2:9187/metrics"));
            QVERIFY(p.production);
            QVERIFY(!p.readOnly);
        }
        {
            // Saved before read_only existed: production implies read-only.
            QSettings raw(ini, QSettings::IniFormat);
            raw.remove(QStringLiteral("profiles/") + QString::fromLatin1(QByteArray("prod").toHex()) +
                       QStringLiteral("/read_only"));
        }
        ProfileStore store(ini);
        QVERIFY(store.load(QStringLiteral("prod")).readOnly);

        // The dialog: read-only follows "production" until the user clicks it.
        ConnectionDialog dialog(store);
        QCheckBox* production = nullptr;
        QCheckBox* readOnly = nullptr;
        for (QCheckBox* box : dialog.findChildren<QCheckBox*>()) {
            if (box->text().startsWith(QStringLiteral("Production"))) production = box;
            if (box->text().startsWith(QStringLiteral("Read-only"))) readOnly = box;
        }
        QVERIFY(production && readOnly);
        QVERIFY(!readOnly->isChecked());
        production->setChecked(true);
        QVERIFY(readOnly->isChecked());
        production->setChecked(false);
        QVERIFY(!readOnly->isChecked());
        production->setChecked(true);
        readOnly->click();  // the user says: not read-only
        production->setChecked(false);
        production->setChecked(true);
        QVERIFY(!readOnly->isChecked());
        auto* urls = dialog.findChild<QPlainTextEdit*>();
        QVERIFY(urls);
        urls->setPlainText(QStringLiteral("app3:9187\n\n  https://app4/custom  \n"));
        QCOMPARE(dialog.profile().metricsUrls,
                 QStringList({QStringLiteral("http://app3:9187/metrics"), QStringLiteral("https://app4/custom")}));
        QVERIFY(dialog.profile().production && !dialog.profile().readOnly);
    }

    void removing_an_endpoint_mid_scrape_drops_its_result() {
        FakeServer server(FakeServer::Mode::respond, page(1, 0, 0));
        MetricsScraper scraper;
        MetricsModel model(&scraper);
        scraper.addEndpoint(server.url());
        QSignalSpy scrapes(&scraper, &MetricsScraper::scraped);
        scraper.scrapeNow();
        scraper.removeEndpoint(server.url());
        QTest::qWait(300);
        QCOMPARE(int(scrapes.count()), 0);
        QCOMPARE(model.rowCount(), 0);
    }
};

QTEST_MAIN(TestMetricsScraper)
#include "test_metrics_scraper.moc"
