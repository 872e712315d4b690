// `pglock exporter`: bad flags and config files refused with exit 2, the exposition checked by
// promtool, holders and waiters by name, the scrape cache, /probe for a fleet (a dead target is
// pglock_up 0, an unknown one HTTP 400), and the series caps holding with 50,000 named locks.
// Holders and waiters are plain libpq sessions.
#include <QTemporaryDir>
#include <QtTest>

#include <cmath>
#include <future>

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

QByteArray holders_series(const QString& name) { return "pglock_lock_holders{name=\"" + name.toUtf8() + "\"}"; }
QByteArray waiters_series(const QString& name) { return "pglock_lock_waiters{name=\"" + name.toUtf8() + "\"}"; }

}  // namespace

class TestCliExporter : public QObject {
    Q_OBJECT

private slots:
    void bad_flags_exit_2_data() {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<QString>("message");
        QTest::newRow("no --listen") << QStringList{"exporter"} << "--listen is required";
        QTest::newRow("bad --listen") << QStringList{"exporter", "--listen", "localhost"} << "HOST:PORT";
        QTest::newRow("bad port") << QStringList{"exporter", "--listen", "127.0.0.1:99999"} << "bad port";
        QTest::newRow("min interval too short")
            << QStringList{"exporter", "--listen", "127.0.0.1:0", "--min-interval", "10ms"} << "--min-interval";
        QTest::newRow("not a duration")
            << QStringList{"exporter", "--listen", "127.0.0.1:0", "--poll-timeout", "5"} << "--poll-timeout";
        QTest::newRow("dsn and config")
            << QStringList{"exporter", "--listen", "127.0.0.1:0", "--dsn", "dbname=x", "--config", "/dev/null"}
            << "exclude each other";
        QTest::newRow("bad dsn") << QStringList{"exporter", "--listen", "127.0.0.1:0", "--dsn", "port=abc"}
                                 << "invalid --dsn";
        QTest::newRow("missing config")
            << QStringList{"exporter", "--listen", "127.0.0.1:0", "--config", "/nonexistent/targets"} << "cannot be read";
        QTest::newRow("cap too big")
            << QStringList{"exporter", "--listen", "127.0.0.1:0", "--max-names", "1000000"} << "at most 100000";
        QTest::newRow("header timeout too short")
            << QStringList{"exporter", "--listen", "127.0.0.1:0", "--header-timeout", "10ms"} << "--header-timeout";
        QTest::newRow("write timeout not a duration")
            << QStringList{"exporter", "--listen", "127.0.0.1:0", "--write-timeout", "soon"} << "--write-timeout";
        QTest::newRow("no connections")
            << QStringList{"exporter", "--listen", "127.0.0.1:0", "--max-connections", "0"} << "between 1 and 100000";
        QTest::newRow("missing web config")
            << QStringList{"exporter", "--listen", "127.0.0.1:0", "--web-config-file", "/nonexistent/web.yml"}
            << "--web-config-file /nonexistent/web.yml: cannot be read";
    }
    void bad_flags_exit_2() {
        QFETCH(QStringList, args);
        QFETCH(QString, message);
        const Run r = run(args, {}, 30000);
        QCOMPARE(r.code, 2);
        QVERIFY2(r.err.contains(message.toUtf8()), r.err.constData());
        QVERIFY2(clean_one_line_error(r.err), r.err.constData());
    }

    void bad_config_exit_2_data() {
        QTest::addColumn<QByteArray>("config");
        QTest::addColumn<QString>("message");
        QTest::newRow("password keyword") << QByteArray("main = host=db1 password=Sekr1t-pw\n") << "line 1: target \"main\" carries a password";
        QTest::newRow("uri password") << QByteArray("# fleet\n\nmain = postgresql://mon:Sekr1t-pw@db1/app\n")
                                      << "line 3: target \"main\" carries a password";
        QTest::newRow("no equals") << QByteArray("main\n") << "line 1: expected NAME = CONNINFO";
        QTest::newRow("bad name") << QByteArray("ma in = host=db1\n") << "target name must be";
        QTest::newRow("twice") << QByteArray("a = host=x\na = host=y\n") << "line 2: target \"a\" is defined twice";
        QTest::newRow("libpq refuses") << QByteArray("a = host=x port=abc\n") << "line 1: target \"a\"";
        QTest::newRow("empty") << QByteArray("# nothing\n") << "no targets";
    }
    void bad_config_exit_2() {
        QFETCH(QByteArray, config);
        QFETCH(QString, message);
        QTemporaryDir dir;
        const QString path = write_file(dir, "targets.conf", config);
        const Run r = run({"exporter", "--listen", "127.0.0.1:0", "--config", path}, {}, 30000);
        QCOMPARE(r.code, 2);
        QVERIFY2(r.err.contains(message.toUtf8()), r.err.constData());
        QVERIFY2(!r.err.contains("Sekr1t"), r.err.constData());  // the secret is never repeated
        QVERIFY2(clean_one_line_error(r.err), r.err.constData());
    }

    // A named lock with one holder and one waiter (whose transaction pins xmin), a lock held idle
    // in transaction, and an unknown key: each as a series with the right numbers, and the page
    // valid for promtool.
    void holders_and_waiters_by_name() {
        QTemporaryDir dir;
        const QString name = unique_name("exporter.named");
        const QString idle = unique_name("exporter.idle");
        const QString catalog = write_file(dir, "catalog.txt", (name + "\n" + idle + "\n").toUtf8());
        const std::int64_t unknown_key = key_of(unique_name("exporter.unknown")) ^ 1;

        RawConn holder(dsn());
        holder.lock(key_of(name));
        holder.lock(unknown_key);
        AsyncConn waiter(dsn());
        waiter.send("BEGIN; SELECT txid_current(); SELECT pg_advisory_lock(" + std::to_string(key_of(name)) + ")");
        RawConn idler(dsn());
        idler.query("BEGIN");
        idler.query("SELECT pg_advisory_xact_lock($1::bigint)", {std::to_string(key_of(idle))});
        QVERIFY(eventually([&] { return holder.waiting_count(key_of(name)) == 1; }, 10000));

        Exporter exporter({"exporter", "--dsn", dsn(), "--catalog", catalog, "--min-interval", "250ms"});
        HttpReply page;
        // The waiter has waited a measurable time and the holds have been seen twice.
        QVERIFY(eventually(
            [&] {
                page = exporter.get("/metrics");
                return sample(page.body, "pglock_lock_oldest_wait_seconds{name=\"" + name.toUtf8() + "\"}") > 0.3 &&
                       sample(page.body, "pglock_lock_oldest_hold_seconds{name=\"" + name.toUtf8() + "\"}") > 0.3;
            },
            15000));
        QCOMPARE(page.status, 200);
        const QByteArray& body = page.body;
        QCOMPARE(sample(body, "pglock_up"), 1.0);
        QCOMPARE(sample(body, holders_series(name)), 1.0);
        QCOMPARE(sample(body, waiters_series(name)), 1.0);
        QCOMPARE(sample(body, "pglock_lock_idle_in_transaction_holders{name=\"" + name.toUtf8() + "\"}"), 0.0);
        QVERIFY(sample(body, "pglock_lock_waiter_xmin_pin_seconds{name=\"" + name.toUtf8() + "\"}") > 0);
        QCOMPARE(sample(body, holders_series(idle)), 1.0);
        QCOMPARE(sample(body, "pglock_lock_idle_in_transaction_holders{name=\"" + idle.toUtf8() + "\"}"), 1.0);
        const QByteArray unknown = "{name=\"(unknown)\",key=\"" + QByteArray::number(qint64(unknown_key)) + "\"}";
        QCOMPARE(sample(body, "pglock_lock_holders" + unknown), 1.0);
        QVERIFY(sample(body, "pglock_advisory_locks") >= 3);
        QVERIFY(sample(body, "pglock_unknown_keys") >= 1);
        QVERIFY(sample(body, "pglock_poll_duration_seconds") > 0);
        // Never a pid or a query as a label.
        QVERIFY(!body.contains(QByteArray::number(holder.pid())));
        QVERIFY(!body.contains("SELECT"));

        const auto [code, out] = promtool({"check", "metrics"}, body);
        QVERIFY2(code == 0, (out + "\n" + body).constData());

        idler.query("ROLLBACK");
        holder.unlock(key_of(name));
        QVERIFY(eventually([&] { return PQconsumeInput(waiter.get()) && !PQisBusy(waiter.get()); }, 10000));
        QVERIFY(waiter.finish());
    }

    // A name with an escape sequence and a right-to-left override (here from the catalog; a
    // holder's application_name could carry one through a server that does not clean it) would
    // reach a terminal running curl or a dashboard's legend as it is: such a name is a hex label.
    void a_name_a_terminal_would_obey_is_a_hex_label() {
        QTemporaryDir dir;
        const QByteArray name = "exporter.\x1b[2J\xe2\x80\xae" + unique_name("hostile").toUtf8();
        const QString catalog = write_file(dir, "catalog.txt", R"(exporter.\x1b[2J\u202e)" + unique_name("hostile").toUtf8() + "\n");
        RawConn holder(dsn());
        holder.lock(pglock::key_of(std::string_view(name.constData(), std::size_t(name.size()))));

        Exporter exporter({"exporter", "--dsn", dsn(), "--catalog", catalog});
        const QByteArray series = "pglock_lock_holders{name=\"hex:" + name.toHex() + "\"}";
        HttpReply page;
        QVERIFY(eventually([&] { return sample((page = exporter.get("/metrics")).body, series) == 1.0; }, 15000));
        QVERIFY2(!page.body.contains('\x1b') && !page.body.contains("\xe2\x80\xae"), page.body.toHex().constData());
        const auto [code, out] = promtool({"check", "metrics"}, page.body);
        QVERIFY2(code == 0, out.constData());
    }

    // Every name has a series of its own: a name that is not UTF-8 is written as hex, and so is
    // every name that could be mistaken for such an encoding or for a folded series ("hex:...",
    // "(other)", "(unknown)"), so two locks never share a series.
    void names_never_share_a_series() {
        const QString tag = QString::number(QCoreApplication::applicationPid());
        const QByteArray invalid = "bad\xff" "utf8-" + tag.toUtf8();                     // not UTF-8
        const QByteArray lookalike = "hex:" + invalid.toHex();                           // valid, its old label
        const QByteArray hex_prefixed = "hex:plain-" + tag.toUtf8();                     // valid, starts with hex:
        const QByteArray plain = "plain-" + tag.toUtf8();
        // The catalog is core's name list: \xff is the escape of a byte that is not UTF-8.
        QByteArray catalog = "bad\\xffutf8-" + tag.toUtf8() + "\n" + lookalike + "\n" + hex_prefixed + "\n" + plain +
                             "\n(other)\n(unknown)\n";
        QTemporaryDir dir;
        const QString catalog_path = write_file(dir, "catalog.txt", catalog);
        RawConn holder(dsn());
        for (const QByteArray& name : {invalid, lookalike, hex_prefixed, plain, QByteArray("(other)"), QByteArray("(unknown)")})
            holder.lock(pglock::key_of(name.toStdString()));

        Exporter exporter({"exporter", "--dsn", dsn(), "--catalog", catalog_path});
        const HttpReply page = exporter.get("/metrics");
        QCOMPARE(page.status, 200);
        const auto series = [&](const QByteArray& label) { return "pglock_lock_holders{name=\"" + label + "\"}"; };
        // No label twice in the page, and nothing our names could have folded into.
        const auto holders = samples_of(page.body, "pglock_lock_holders");
        QSet<QByteArray> labels;
        for (const QByteArray& line : holders) {
            const QByteArray label = line.left(line.lastIndexOf(' '));
            QVERIFY2(!labels.contains(label), ("two series " + label).constData());
            labels.insert(label);
        }
        QVERIFY(!labels.contains(series("(other)")));
        // Each lock its own series, under its documented label.
        QCOMPARE(sample(page.body, series("hex:" + invalid.toHex())), 1.0);
        QCOMPARE(sample(page.body, series("hex:" + lookalike.toHex())), 1.0);
        QCOMPARE(sample(page.body, series("hex:" + hex_prefixed.toHex())), 1.0);
        QCOMPARE(sample(page.body, series(plain)), 1.0);
        QCOMPARE(sample(page.body, series("hex:" + QByteArray("(other)").toHex())), 1.0);
        QCOMPARE(sample(page.body, series("hex:" + QByteArray("(unknown)").toHex())), 1.0);
        const auto [code, out] = promtool({"check", "metrics"}, page.body);
        QVERIFY2(code == 0, out.constData());
    }

    // Scrapes within --min-interval are answered from the last poll: replicas cannot multiply
    // the load on the server.
    void scrapes_within_min_interval_share_one_poll() {
        Exporter exporter({"exporter", "--dsn", dsn(), "--min-interval", "10m"});
        for (int i = 0; i < 5; ++i) QCOMPARE(exporter.get("/metrics").status, 200);
        const QByteArray body = exporter.get("/metrics").body;
        QCOMPARE(sample(body, "pglock_exporter_polls_total"), 1.0);
        QCOMPARE(sample(body, "pglock_exporter_scrapes_total"), 6.0);
        QCOMPARE(sample(body, "pglock_up"), 1.0);

        // SIGTERM is how a service manager stops it: exit 0, nothing on stderr (sanitizer builds
        // report leaks and shutdown races here).
        exporter.cli().terminate();
        QVERIFY(exporter.cli().wait_finished(15000));
        QVERIFY(!exporter.cli().crashed());
        QCOMPARE(exporter.cli().exit_code(), 0);
        QVERIFY2(exporter.cli().err().isEmpty(), exporter.cli().err().constData());
    }

    // Replicas scraping at the same moment: they wait for one poll, they do not each make one.
    void concurrent_scrapes_share_one_poll() {
        Exporter exporter({"exporter", "--dsn", dsn(), "--min-interval", "10m"});
        std::vector<std::future<HttpReply>> replies;
        for (int i = 0; i < 4; ++i)
            replies.push_back(std::async(std::launch::async, [&] { return http_request(exporter.port(), "/metrics"); }));
        for (auto& r : replies) QCOMPARE(r.get().status, 200);
        const QByteArray body = exporter.get("/metrics").body;
        QCOMPARE(sample(body, "pglock_exporter_polls_total"), 1.0);
        QCOMPARE(sample(body, "pglock_exporter_scrapes_total"), 5.0);
    }

    // A server that accepts the connection and never answers: the scrape still answers within
    // --poll-timeout (not the target's connect_timeout=60), with pglock_up 0.
    void hung_target_answers_within_poll_timeout() {
        QTemporaryDir dir;
        SilentServer hung;
        const QString config = write_file(dir, "targets.conf", ("hung = " + hung.dsn() + "\n").toUtf8());
        Exporter exporter({"exporter", "--config", config, "--poll-timeout", "2s"});
        QElapsedTimer t;
        t.start();
        const HttpReply reply = exporter.get("/probe?target=hung");
        QCOMPARE(reply.status, 200);
        QCOMPARE(sample(reply.body, "pglock_up"), 0.0);
        QVERIFY2(t.elapsed() < 8000, qPrintable(QString::number(t.elapsed()) + " ms"));
    }

    // One exporter for a fleet: a live target, a dead one (pglock_up 0, HTTP 200, as the blackbox
    // exporter answers), no target and an unknown one (HTTP 400).
    void probe_targets_from_config() {
        QTemporaryDir dir;
        SilentServer closed;
        const int dead_port = closed.port();
        closed.close();
        const QString config = write_file(
            dir, "targets.conf",
            ("# the test fleet\nmain = " + dsn() + "\ndead = host=127.0.0.1 port=" + QString::number(dead_port) +
             " user=nobody dbname=nothing connect_timeout=2\n")
                .toUtf8());
        Exporter exporter({"exporter", "--config", config, "--min-interval", "250ms", "--poll-timeout", "3s"});

        const HttpReply main = exporter.get("/probe?target=main");
        QCOMPARE(main.status, 200);
        QCOMPARE(sample(main.body, "pglock_up"), 1.0);

        const HttpReply dead = exporter.get("/probe?target=dead");
        QCOMPARE(dead.status, 200);
        QCOMPARE(sample(dead.body, "pglock_up"), 0.0);
        QCOMPARE(sample(dead.body, "pglock_exporter_poll_errors_total"), 1.0);
        QVERIFY(samples_of(dead.body, "pglock_lock_holders").isEmpty());
        QVERIFY(eventually([&] { return exporter.cli().err().contains("target dead: poll failed"); }, 5000));

        const HttpReply missing = exporter.get("/probe");
        QCOMPARE(missing.status, 400);
        QVERIFY2(missing.body.contains("Target parameter is missing"), missing.body.constData());
        const HttpReply unknown = exporter.get("/probe?target=nope");
        QCOMPARE(unknown.status, 400);
        QVERIFY2(unknown.body.contains("Unknown target \"nope\""), unknown.body.constData());
        QCOMPARE(exporter.get("/elsewhere").status, 404);

        const HttpReply self = exporter.get("/metrics");
        QCOMPARE(self.status, 200);
        QCOMPARE(sample(self.body, "pglock_exporter_targets"), 2.0);
        QCOMPARE(sample(self.body, "pglock_exporter_scrapes_total{target=\"main\"}"), 1.0);
        const auto [code, out] = promtool({"check", "metrics"}, self.body);
        QVERIFY2(code == 0, out.constData());
    }

    // 50,000 distinct named locks and 5,000 unknown keys on one server: the page has at most
    // --max-names + --max-unknown-keys + 2 series per metric, and the folded series still count
    // every lock.
    void series_caps_hold_with_50000_names() {
        constexpr int names = 50000, unknowns = 5000, max_names = 100, max_unknown = 10;
        QTemporaryDir dir;
        QByteArray catalog;
        QByteArray keys = "{";
        const QString prefix = unique_name("exporter.cap");
        for (int i = 0; i < names; ++i) {
            const QString name = prefix + "." + QString::number(i);
            catalog += name.toUtf8() + '\n';
            keys += QByteArray::number(qint64(key_of(name))) + ',';
        }
        const std::int64_t base = key_of(prefix + ".unknown");
        for (int i = 0; i < unknowns; ++i) keys += QByteArray::number(qint64(base ^ (std::int64_t(i) << 8))) + ',';
        keys.back() = '}';
        const QString catalog_path = write_file(dir, "catalog.txt", catalog);

        RawConn holder(dsn());
        QCOMPARE(holder.scalar("SELECT count(pg_advisory_lock(k)) FROM unnest($1::bigint[]) AS k", {keys.toStdString()}),
                 std::to_string(names + unknowns));

        Exporter exporter({"exporter", "--dsn", dsn(), "--catalog", catalog_path, "--max-names",
                           QString::number(max_names), "--max-unknown-keys", QString::number(max_unknown)});
        const HttpReply page = exporter.get("/metrics");
        QCOMPARE(page.status, 200);
        QCOMPARE(sample(page.body, "pglock_up"), 1.0);
        const auto holders = samples_of(page.body, "pglock_lock_holders");
        int named = 0, keyed = 0, other = 0, folded_unknown = 0;
        double locks_in_series = 0;
        for (const QByteArray& line : holders) {
            if (line.startsWith("pglock_lock_holders{name=\"(other)\"}")) ++other;
            else if (line.startsWith("pglock_lock_holders{name=\"(unknown)\",key=")) ++keyed;
            else if (line.startsWith("pglock_lock_holders{name=\"(unknown)\"}")) ++folded_unknown;
            else ++named;
        }
        for (const QByteArray& line : samples_of(page.body, "pglock_lock_series_locks"))
            locks_in_series += line.mid(line.lastIndexOf(' ') + 1).toDouble();
        QCOMPARE(named, max_names);
        QCOMPARE(other, 1);
        QCOMPARE(keyed, max_unknown);
        QCOMPARE(folded_unknown, 1);
        QVERIFY(holders.size() <= max_names + max_unknown + 2);
        QCOMPARE(locks_in_series, sample(page.body, "pglock_advisory_locks"));
        QVERIFY(sample(page.body, "pglock_advisory_locks") >= names + unknowns);
        QVERIFY(sample(page.body, "pglock_folded_locks") >= names + unknowns - max_names - max_unknown);
        const auto [code, out] = promtool({"check", "metrics"}, page.body);
        QVERIFY2(code == 0, out.constData());
    }
};

QTEST_GUILESS_MAIN(TestCliExporter)
#include "test_cli_exporter.moc"
