// `pglock hold`: what an operator sees while it holds a lock, and how each way of ending ends.
#include <QTcpSocket>
#include <QtTest>

#include <csignal>

#include "cli_test_support.hpp"
#include "stopped_backend.hpp"

using namespace clitest;

namespace {

const QRegularExpression acquired_line(QStringLiteral("acquired: .* pid=(\\d+)"));

// The test DSN with an application_name, so pg_stat_activity rows of one CLI run can be told
// apart from everything else on the server.
QString dsn_with_app(const QString& app) {
    const QString d = dsn();
    if (d.startsWith("postgres")) return d + (d.contains('?') ? "&" : "?") + "application_name=" + app;
    return d + " application_name=" + app;
}

int advisory_waiters(RawConn& obs, const QString& app) {
    return std::stoi(obs.scalar("SELECT count(*) FROM pg_stat_activity WHERE application_name = $1 "
                                "AND wait_event_type = 'Lock' AND wait_event = 'advisory'",
                                {app.toStdString()}));
}


}  // namespace

class TestCliHold : public QObject {
    Q_OBJECT
private slots:
    void for_duration_holds_visibly_then_releases() {
        const QString name = unique_name("hold.for");
        const auto key = key_of(name);
        RawConn obs(dsn());
        QElapsedTimer t;
        t.start();
        Cli cli({"hold", name, "--for", "300ms", "--dsn", dsn()});
        // Poll what an operator would look at: a granted bigint advisory row (objsubid 1) for the
        // key's classid/objid.
        int seen_pid = 0;
        QVERIFY(eventually([&] {
            for (auto [pid, granted] : obs.lock_rows(key))
                if (granted) seen_pid = pid;
            return seen_pid != 0 || !cli.running();
        }));
        QVERIFY2(seen_pid != 0, "the lock never showed in pg_locks while held");
        QVERIFY(cli.wait_finished());
        QVERIFY2(cli.exit_code() == 0, cli.err().constData());
        QVERIFY(t.elapsed() >= 300);
        const auto m = acquired_line.match(QString::fromUtf8(cli.out()));
        QVERIFY2(m.hasMatch(), cli.out().constData());
        QCOMPARE(m.captured(1).toInt(), seen_pid);  // the pid it printed is the holder
        QVERIFY2(cli.out().contains("released:"), cli.out().constData());
        QCOMPARE(obs.granted_count(key), 0);
    }

    void contended_without_wait_exits_3() {
        const QString name = unique_name("hold.contended");
        RawConn other(dsn());
        other.lock(key_of(name));
        const auto r = run({"hold", name, "--for", "10s", "--dsn", dsn()});
        QCOMPARE(r.code, 3);
        QVERIFY2(r.out.startsWith("contended:"), r.out.constData());
        // An operator's next question is who holds it: the message names the holder's pid.
        QVERIFY2(r.out.contains("held by pid " + QByteArray::number(other.pid())), r.out.constData());
        QVERIFY(other.unlock(key_of(name)));
    }

    void wait_timeout_exits_3_and_leaves_no_waiter() {
        const QString name = unique_name("hold.timeout");
        const QString app = unique_name("timeout-app");
        const auto key = key_of(name);
        RawConn other(dsn()), obs(dsn());
        other.lock(key);
        QElapsedTimer t;
        t.start();
        const auto r = run({"hold", name, "--wait", "--timeout", "300ms", "--for", "10s", "--dsn", dsn_with_app(app)});
        QCOMPARE(r.code, 3);
        QVERIFY2(r.out.startsWith("timed out:"), r.out.constData());
        QVERIFY2(r.out.contains("held by pid " + QByteArray::number(other.pid())), r.out.constData());
        QVERIFY(t.elapsed() >= 300);
        // The server-side wait was cancelled, not abandoned.
        QCOMPARE(obs.waiting_count(key), 0);
        QCOMPARE(advisory_waiters(obs, app), 0);
        QVERIFY(other.unlock(key));
    }

    void wait_gets_the_lock_when_released() {
        const QString name = unique_name("hold.wait");
        const auto key = key_of(name);
        RawConn other(dsn()), obs(dsn());
        other.lock(key);
        Cli cli({"hold", name, "--wait", "--for", "0", "--dsn", dsn()});
        QVERIFY(eventually([&] { return obs.waiting_count(key) == 1 || !cli.running(); }));
        QCOMPARE(obs.waiting_count(key), 1);
        QVERIFY(other.unlock(key));
        QVERIFY(cli.wait_finished());
        QVERIFY2(cli.exit_code() == 0, cli.err().constData());
        QVERIFY(cli.out().contains("acquired:"));
    }

    // Every signal that ends a shell session or a pipeline (a closed terminal sends SIGHUP, a
    // dead reader SIGPIPE) must cancel the server-side wait: a killed waiter stays queued on the
    // server, pinning xmin, until the lock is granted.
    void signal_while_waiting_cancels_data() {
        QTest::addColumn<int>("sig");
        QTest::addColumn<QByteArray>("sig_name");
        QTest::newRow("SIGINT") << int(SIGINT) << QByteArray("SIGINT");
        QTest::newRow("SIGTERM") << int(SIGTERM) << QByteArray("SIGTERM");
        QTest::newRow("SIGHUP") << int(SIGHUP) << QByteArray("SIGHUP");
        QTest::newRow("SIGQUIT") << int(SIGQUIT) << QByteArray("SIGQUIT");
        QTest::newRow("SIGPIPE") << int(SIGPIPE) << QByteArray("SIGPIPE");
    }
    void signal_while_waiting_cancels() {
        QFETCH(int, sig);
        QFETCH(QByteArray, sig_name);
        const QString name = unique_name("hold.cancel");
        const QString app = unique_name("cancel-app");
        const auto key = key_of(name);
        RawConn other(dsn()), obs(dsn());
        other.lock(key);
        Cli cli({"hold", name, "--wait", "--dsn", dsn_with_app(app)});
        QVERIFY(eventually([&] { return advisory_waiters(obs, app) == 1 || !cli.running(); }));
        QCOMPARE(advisory_waiters(obs, app), 1);
        QVERIFY(cli.signal(sig));
        QVERIFY(cli.wait_finished(10000));
        QVERIFY2(!cli.crashed(), "killed by the signal: its wait stays queued on the server");
        QCOMPARE(cli.exit_code(), 1);
        QVERIFY2(cli.err().contains("canceled by signal (" + sig_name + ")"), cli.err().constData());
        QVERIFY2(eventually([&] { return advisory_waiters(obs, app) == 0; }, 2000), "a ghost waiter stays queued");
        QCOMPARE(obs.waiting_count(key), 0);
        QVERIFY(other.unlock(key));  // still ours: the canceled wait took nothing
    }

    void signal_while_holding_releases_and_exits_0_data() {
        QTest::addColumn<int>("sig");
        QTest::newRow("SIGTERM") << int(SIGTERM);
        QTest::newRow("SIGINT") << int(SIGINT);
        QTest::newRow("SIGHUP") << int(SIGHUP);
        QTest::newRow("SIGQUIT") << int(SIGQUIT);
        QTest::newRow("SIGPIPE") << int(SIGPIPE);
    }
    void signal_while_holding_releases_and_exits_0() {
        QFETCH(int, sig);
        const QString name = unique_name("hold.signal");
        const auto key = key_of(name);
        RawConn obs(dsn());
        Cli cli({"hold", name, "--dsn", dsn()});
        QVERIFY2(cli.wait_stdout(acquired_line).hasMatch(), cli.err().constData());
        QCOMPARE(obs.granted_count(key), 1);
        QCOMPARE(::kill(pid_t(cli.pid()), sig), 0);
        QVERIFY(cli.wait_finished(10000));
        QVERIFY(!cli.crashed());
        QVERIFY2(cli.exit_code() == 0, cli.err().constData());
        QVERIFY2(cli.out().contains("released:"), cli.out().constData());
        QVERIFY(obs.try_lock(key));
        QVERIFY(obs.unlock(key));
    }

    // The first SIGINT starts the release; when that hangs (here: the backend is frozen), a
    // second one ends the process at once, and the lock goes with its closed connection.
    void second_signal_during_a_stuck_release_exits_at_once() {
        const QString name = unique_name("hold.second_signal");
        const auto key = key_of(name);
        RawConn obs(dsn());
        Cli cli({"hold", name, "--dsn", dsn()});
        const auto m = cli.wait_stdout(acquired_line);
        QVERIFY2(m.hasMatch(), cli.err().constData());
        {
            pgt::StoppedBackend frozen(m.captured(1).toInt());
            QCOMPARE(::kill(pid_t(cli.pid()), SIGINT), 0);
            QTest::qWait(300);
            QVERIFY2(cli.running(), "the release did not wait for the frozen backend: nothing to test");
            QCOMPARE(::kill(pid_t(cli.pid()), SIGINT), 0);
            QElapsedTimer t;
            t.start();
            QVERIFY2(cli.wait_finished(10000), "pglock still running 10 s after the second SIGINT");
            QVERIFY2(t.elapsed() < 1500, qPrintable(QString("exited %1 ms after the second SIGINT").arg(t.elapsed())));
        }
        QVERIFY(!cli.crashed());
        QCOMPARE(cli.exit_code(), 1);
        QVERIFY2(cli.err().contains("second signal"), cli.err().constData());
        QVERIFY2(eventually([&] { return obs.granted_count(key) == 0; }), "the lock outlived the process");
    }

    // `timeout` sends its SIGTERM to the command and again to its process group: one request,
    // delivered twice, milliseconds apart. It must end the hold in order (release, exit 0), not
    // take the second-signal exit. The release is held up by a frozen backend so that the second
    // copy surely arrives while pglock is still running.
    void one_signal_delivered_twice_is_one_request() {
        const QString name = unique_name("hold.twice");
        const auto key = key_of(name);
        RawConn obs(dsn());
        Cli cli({"hold", name, "--dsn", dsn()});
        const auto m = cli.wait_stdout(acquired_line);
        QVERIFY2(m.hasMatch(), cli.err().constData());
        {
            pgt::StoppedBackend frozen(m.captured(1).toInt());
            QCOMPARE(::kill(pid_t(cli.pid()), SIGTERM), 0);
            QTest::qWait(20);
            QCOMPARE(::kill(pid_t(cli.pid()), SIGTERM), 0);
            QTest::qWait(300);
            QVERIFY2(cli.running(), qPrintable("the repeated SIGTERM ended pglock at once: " + QString::fromUtf8(cli.err())));
        }
        QVERIFY2(cli.wait_finished(10000), "pglock still running 10 s after its backend resumed");
        QVERIFY(!cli.crashed());
        QVERIFY2(!cli.err().contains("second signal"), cli.err().constData());
        QCOMPARE(cli.exit_code(), 0);
        QVERIFY2(eventually([&] { return obs.granted_count(key) == 0; }), "the lock outlived the process");
    }

    void terminated_backend_is_lock_lost() {
        const QString name = unique_name("hold.lost");
        RawConn obs(dsn());
        Cli cli({"hold", name, "--dsn", dsn()});
        const auto m = cli.wait_stdout(acquired_line);
        QVERIFY2(m.hasMatch(), cli.err().constData());
        const int pid = m.captured(1).toInt();
        QCOMPARE(obs.scalar("SELECT pg_terminate_backend($1)", {std::to_string(pid)}), std::string("t"));
        QElapsedTimer t;
        t.start();
        QVERIFY(cli.wait_finished(10000));
        QVERIFY2(t.elapsed() < 2000, qPrintable(QString("took %1 ms to notice").arg(t.elapsed())));
        QVERIFY(!cli.crashed());
        QCOMPARE(cli.exit_code(), 4);
        QVERIFY2(cli.err().contains("lock lost"), cli.err().constData());
    }

    void shared_holders_coexist() {
        const QString name = unique_name("hold.shared");
        RawConn obs(dsn());
        Cli a({"hold", name, "--shared", "--dsn", dsn()});
        Cli b({"hold", name, "--shared", "--dsn", dsn()});
        QVERIFY2(a.wait_stdout(acquired_line).hasMatch(), a.err().constData());
        QVERIFY2(b.wait_stdout(acquired_line).hasMatch(), b.err().constData());
        QVERIFY(a.out().contains("mode=shared"));
        QCOMPARE(obs.granted_count(key_of(name)), 2);
        QCOMPARE(run({"try", name, "--dsn", dsn()}).code, 3);  // exclusive is contended
        a.terminate();
        b.terminate();
        QVERIFY(a.wait_finished() && b.wait_finished());
        QCOMPARE(a.exit_code(), 0);
        QCOMPARE(b.exit_code(), 0);
    }

    void metrics_endpoint_counts_the_acquire() {
#if !PGLOCK_WITH_PROMETHEUS
        QSKIP("built without prometheus-cpp");
#endif
        const QString name = unique_name("hold.metrics");
        Cli cli({"hold", name, "--metrics", "127.0.0.1:0", "--dsn", dsn()});
        const auto url = cli.wait_stdout(QRegularExpression("metrics: serving http://127\\.0\\.0\\.1:(\\d+)/metrics"));
        QVERIFY2(url.hasMatch(), (cli.out() + cli.err()).constData());
        const int port = url.captured(1).toInt();
        QVERIFY(port > 0);  // the real port, not the 0 we asked for
        QVERIFY2(cli.wait_stdout(acquired_line).hasMatch(), cli.err().constData());

        const QByteArray reply = http_get(quint16(port), "/metrics");
        QVERIFY2(reply.startsWith("HTTP/1.") && reply.contains(" 200 "), reply.left(200).constData());
        bool found = false;
        const QRegularExpression series(QStringLiteral("^lock_acquires_total\\{([^}]*)\\} 1$"),
                                        QRegularExpression::MultilineOption);
        for (auto it = series.globalMatch(QString::fromUtf8(reply)); it.hasNext();) {
            const QString labels = it.next().captured(1);
            if (labels.contains("name=\"" + name + "\"") && labels.contains("outcome=\"acquired\"")) found = true;
        }
        QVERIFY2(found, reply.constData());

        cli.terminate();
        QVERIFY(cli.wait_finished());
        QCOMPARE(cli.exit_code(), 0);
    }

    void bad_durations_are_usage_errors() {
        QCOMPARE(run({"hold", "x", "--for", "5"}).code, 2);           // no unit
        QCOMPARE(run({"hold", "x", "--timeout", "soon"}).code, 2);
        QCOMPARE(run({"hold", "x", "--metrics", "nohostport"}).code, 2);
    }

    // A duration that overflows the clock once added to now: it used to print a huge --for and
    // release at once with exit 0, or time out a --timeout after 0.15 s. Out of range: exit 2,
    // before anything connects.
    void out_of_range_durations_are_usage_errors() {
        for (const QStringList& args :
             {QStringList{"hold", "x", "--for", "9223372036s"}, QStringList{"hold", "x", "--timeout", "9223372036s"},
              QStringList{"hold", "x", "--wait", "--timeout", "2562047h"}, QStringList{"hold", "x", "--for", "8761h"},
              QStringList{"demo", "--for", "9223372036s"}, QStringList{"status", "--watch", "9223372036s"}}) {
            const Run r = run(args + QStringList{"--dsn", dsn()});
            const QByteArray what = args.join(' ').toUtf8() + " -> " + QByteArray::number(r.code) + ": " + r.out + r.err;
            QVERIFY2(r.code == 2, what.constData());
            QVERIFY2(r.err.startsWith("pglock: usage: "), what.constData());
            QVERIFY2(r.out.isEmpty(), what.constData());
        }
        // The largest allowed value holds (no overflow into "release at once").
        const QString name = unique_name("hold.max-for");
        Cli cli({"hold", name, "--for", "8760h", "--wait", "--timeout", "8760h", "--dsn", dsn()});
        QVERIFY2(cli.wait_stdout(acquired_line).hasMatch(), cli.err().constData());
        QVERIFY2(cli.out().contains("holding for 365d"), cli.out().constData());  // pglock/duration_text.hpp
        QTest::qWait(300);
        QVERIFY2(cli.running(), cli.out().constData());
        cli.terminate();
        QVERIFY(cli.wait_finished());
        QCOMPARE(cli.exit_code(), 0);
    }

    // --metrics HOST:PORT: an address that is not one is refused (exit 2) before anything listens.
    // civetweb read 999.1.1.1 as 231.1.1.1 (each part modulo 256) and the CLI printed "serving
    // http://999.1.1.1...".
    void invalid_metrics_addresses_are_usage_errors() {
        for (const char* bind : {"999.1.1.1:18080", "256.0.0.1:0", "1.2.3:0", "1.2.3.4.5:0", "01.2.3.4:0",
                                 "1.0.0.1x:0", "[::1:0", "[zz::1]:0", "::1:0", "127.0.0.1:99999", "127.0.0.1:-1",
                                 "127.0.0.1:", "host name:0", "bad_host:0", ":"}) {
            for (const char* verb : {"hold", "demo"}) {
                QStringList args{QString::fromLatin1(verb)};
                if (args[0] == "hold") args << "x";
                args << "--metrics" << QString::fromLatin1(bind) << "--dsn" << dsn();
                const Run r = run(args, {}, 10000);
                const QByteArray what = args.join(' ').toUtf8() + " -> " + QByteArray::number(r.code) + ": " + r.out + r.err;
                QVERIFY2(r.code == 2, what.constData());
                QVERIFY2(r.err.startsWith("pglock: usage: --metrics"), what.constData());
                QVERIFY2(!r.out.contains("serving"), what.constData());
            }
        }
    }
};

QTEST_GUILESS_MAIN(TestCliHold)
#include "test_cli_hold.moc"
