// `pglock exporter` under a real Prometheus (the Debian package's server, started here on a free
// port with a temporary data directory): the shipped rules pass promtool, Prometheus scrapes the
// exporter both ways (/metrics for one server, /probe?target= with the documented relabelling),
// a PromQL query through its HTTP API finds the lock by name with 1 holder and 1 waiter, and the
// shipped waiter alert goes to firing (its threshold and `for:` shortened for the test).
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QUrl>
#include <QUrlQuery>
#include <QtTest>

#include "exporter_test_support.hpp"

using namespace clitest;

namespace {

const QString rules_path = QStringLiteral(PGLOCK_TEST_SOURCE_DIR "/resources/prometheus/pglock-rules.yml");
const QString dashboard_path = QStringLiteral(PGLOCK_TEST_SOURCE_DIR "/resources/prometheus/pglock-dashboard.json");

QByteArray read_file(const QString& path) {
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly)) throw std::runtime_error("cannot read " + path.toStdString());
    return f.readAll();
}

QString write_file(const QTemporaryDir& dir, const QString& file, const QByteArray& content) {
    const QString path = dir.filePath(file);
    QFile f(path);
    if (!f.open(QIODevice::WriteOnly) || f.write(content) != content.size())
        throw std::runtime_error("cannot write " + path.toStdString());
    return path;
}

// Prometheus' HTTP API answer as JSON ({} when there is none yet).
QJsonObject api(quint16 port, const QByteArray& path_and_query) {
    const HttpReply r = http_request(port, path_and_query);
    if (r.status != 200) return {};
    return QJsonDocument::fromJson(r.body).object();
}

QByteArray query_path(const QString& promql) {
    QUrlQuery q;
    q.addQueryItem("query", promql);
    return "/api/v1/query?" + q.query(QUrl::FullyEncoded).toUtf8();
}

// The one value of an instant vector query, or NaN when it has not exactly one series.
double instant_value(quint16 port, const QString& promql) {
    const QJsonArray result = api(port, query_path(promql))["data"].toObject()["result"].toArray();
    if (result.size() != 1) return std::nan("");
    return result[0].toObject()["value"].toArray()[1].toString().toDouble();
}

}  // namespace

class TestCliExporterPrometheus : public QObject {
    Q_OBJECT

private slots:
    void shipped_rules_pass_promtool() {
        const auto [code, out] = promtool({"check", "rules", rules_path});
        QVERIFY2(code == 0, out.constData());
        QVERIFY2(out.contains("SUCCESS"), out.constData());
    }

    // The dashboard is JSON Grafana can import, and every query in it names only metrics the
    // exporter serves or the shipped rules record.
    void dashboard_queries_known_metrics() {
        QJsonParseError error{};
        const QJsonDocument doc = QJsonDocument::fromJson(read_file(dashboard_path), &error);
        QVERIFY2(error.error == QJsonParseError::NoError, qPrintable(error.errorString()));
        const QByteArray rules = read_file(rules_path);
        int queries = 0;
        std::function<void(const QJsonValue&)> walk = [&](const QJsonValue& v) {
            if (v.isArray()) {
                for (const auto& e : v.toArray()) walk(e);
            } else if (v.isObject()) {
                const QJsonObject o = v.toObject();
                for (auto it = o.begin(); it != o.end(); ++it) {
                    if ((it.key() == "expr" || it.key() == "query") && it.value().isString()) {
                        ++queries;
                        static const QRegularExpression metric("\\b(pglock_[a-z_]+|instance:pglock_[a-z_:]+)");
                        for (auto m = metric.globalMatch(it.value().toString()); m.hasNext();) {
                            const QString name = m.next().captured(1);
                            const bool known = name.startsWith("instance:") ? rules.contains(name.toUtf8())
                                                                            : read_file(PGLOCK_TEST_SOURCE_DIR "/cli/src/exporter_render.cpp")
                                                                                  .contains('"' + name.toUtf8() + '"');
                            QVERIFY2(known, qPrintable("dashboard query uses unknown metric " + name));
                        }
                    } else {
                        walk(it.value());
                    }
                }
            }
        };
        walk(doc.object());
        QVERIFY2(queries >= 6, "the dashboard should have per-server and per-lock panels");
    }

    void prometheus_scrapes_names_and_fires_the_waiter_alert() {
        const QString prometheus = prometheus_tool("prometheus");
        QVERIFY2(!prometheus.isEmpty(), missing_tool("prometheus").constData());  // a failure, not a skip
        QTemporaryDir dir;
        const QString name = unique_name("exporter.prom");
        const QString catalog = write_file(dir, "catalog.txt", name.toUtf8() + "\n");
        const QString targets = write_file(dir, "targets.conf", ("main = " + dsn() + "\n").toUtf8());

        // One holder, one waiter.
        RawConn holder(dsn());
        holder.lock(key_of(name));
        AsyncConn waiter(dsn());
        waiter.send("SELECT pg_advisory_lock(" + std::to_string(key_of(name)) + ")");
        QVERIFY(eventually([&] { return holder.waiting_count(key_of(name)) == 1; }, 10000));

        Exporter single({"exporter", "--dsn", dsn(), "--catalog", catalog, "--min-interval", "250ms"});
        Exporter fleet({"exporter", "--config", targets, "--catalog", catalog, "--min-interval", "250ms"});

        // The shipped rules with the waiter alert's threshold and window shortened: the test
        // fails (rather than silently testing nothing) if the rule's text changes.
        QByteArray rules = read_file(rules_path);
        const QByteArray wait_rule = "expr: pglock_lock_oldest_wait_seconds > 300\n        for: 1m\n";
        QVERIFY2(rules.contains(wait_rule), "the waiter alert's expression changed: update this test");
        rules.replace(wait_rule, "expr: pglock_lock_oldest_wait_seconds > 1\n        for: 2s\n");
        const QString rules_file = write_file(dir, "rules.yml", rules);

        const quint16 port = free_port();
        const QByteArray config =
            "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n  evaluation_interval: 1s\n"
            "rule_files: ['" + rules_file.toUtf8() + "']\n"
            "scrape_configs:\n"
            "  - job_name: pglock\n"
            "    static_configs: [{targets: ['127.0.0.1:" + QByteArray::number(single.port()) + "']}]\n"
            // The fleet form, as docs/exporter.md gives it.
            "  - job_name: pglock-fleet\n"
            "    metrics_path: /probe\n"
            "    static_configs: [{targets: [main]}]\n"
            "    relabel_configs:\n"
            "      - {source_labels: [__address__], target_label: __param_target}\n"
            "      - {source_labels: [__param_target], target_label: instance}\n"
            "      - {target_label: __address__, replacement: '127.0.0.1:" + QByteArray::number(fleet.port()) + "'}\n";
        const QString config_file = write_file(dir, "prometheus.yml", config);
        const auto [check_code, check_out] = promtool({"check", "config", config_file});
        QVERIFY2(check_code == 0, check_out.constData());

        Child server(prometheus, {"--config.file=" + config_file, "--storage.tsdb.path=" + dir.filePath("data"),
                                  "--web.listen-address=127.0.0.1:" + QString::number(port)});
        QVERIFY2(eventually([&] { return !server.running() || http_request(port, "/-/ready").status == 200; }, 60000) &&
                     server.running(),
                 server.output().right(2000).constData());

        const QString holders = "pglock_lock_holders{job=\"%1\",name=\"" + name + "\"}";
        const QString waiters = "pglock_lock_waiters{job=\"%1\",name=\"" + name + "\"}";
        for (const char* job : {"pglock", "pglock-fleet"}) {
            QVERIFY2(eventually([&] { return instant_value(port, QString(holders).arg(job)) == 1.0; }, 60000),
                     qPrintable(QString("no holder series for job ") + job + "; prometheus says:\n" +
                                QString::fromUtf8(server.output().right(2000))));
            QCOMPARE(instant_value(port, QString(waiters).arg(job)), 1.0);
        }
        // The fleet job's instance is the target's name, as relabelled.
        const QJsonArray fleet_result =
            api(port, query_path(QString(holders).arg("pglock-fleet")))["data"].toObject()["result"].toArray();
        QCOMPARE(fleet_result[0].toObject()["metric"].toObject()["instance"].toString(), QStringLiteral("main"));

        const auto firing = [&] {
            for (const auto& a : api(port, "/api/v1/alerts")["data"].toObject()["alerts"].toArray()) {
                const QJsonObject alert = a.toObject();
                const QJsonObject labels = alert["labels"].toObject();
                if (labels["alertname"].toString() == "PglockLockWaitTooLong" && labels["name"].toString() == name &&
                    labels["job"].toString() == "pglock" && alert["state"].toString() == "firing")
                    return true;
            }
            return false;
        };
        QVERIFY2(eventually(firing, 60000), api(port, "/api/v1/alerts").isEmpty() ? "no alerts API answer" : "the alert never fired");

        holder.unlock(key_of(name));
        QVERIFY(eventually([&] { return PQconsumeInput(waiter.get()) && !PQisBusy(waiter.get()); }, 10000));
        QVERIFY(waiter.finish());
    }
};

QTEST_GUILESS_MAIN(TestCliExporterPrometheus)
#include "test_cli_exporter_prometheus.moc"
