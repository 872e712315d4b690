// Signals and closed pipes, whatever a verb is doing: connecting to a server that never answers,
// reading a catalog from a FIFO nobody writes, reading names from an open stdin. Every verb must
// end promptly on SIGINT, SIGTERM, SIGHUP and SIGQUIT, and one interrupted before it could answer
// exits 1 with a `pglock: ... SIGxxx ...` line: never 0 with empty output (a script would read
// "no locks"), never killed by the signal (no message, no cleanup). No server needed.
#include <fcntl.h>
#include <sys/stat.h>

#include <QElapsedTimer>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QtTest>

#include "cli_test_support.hpp"

using namespace clitest;

namespace {

const int kSignals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};

QByteArray signal_text(int sig) {
    switch (sig) {
        case SIGINT: return "SIGINT";
        case SIGTERM: return "SIGTERM";
        case SIGHUP: return "SIGHUP";
        case SIGQUIT: return "SIGQUIT";
        default: return "?";
    }
}

// Sends sig and checks the process ends within 3 s, by itself, with exit 1 and stderr naming the
// signal, and with nothing on stdout that could pass for an answer.
void expect_interrupted(Cli& cli, int sig, const QByteArray& what) {
    QVERIFY2(cli.running(), (what + " ended before the signal: " + cli.err()).constData());
    QElapsedTimer t;
    t.start();
    QVERIFY(cli.signal(sig));
    const bool ended = cli.wait_finished(3000);
    const QByteArray said = what + " after " + signal_text(sig) + ": exit " + QByteArray::number(cli.exit_code()) +
                            (cli.crashed() ? " (killed by a signal)" : "") + ", stdout [" + cli.out() +
                            "], stderr [" + cli.err() + "]";
    QVERIFY2(ended, (what + ": still running 3 s after " + signal_text(sig)).constData());
    QVERIFY2(!cli.crashed(), said.constData());
    QVERIFY2(cli.exit_code() == 1, said.constData());
    QVERIFY2(cli.err().startsWith("pglock: ") && cli.err().contains(signal_text(sig)), said.constData());
    QVERIFY2(!cli.err().contains("terminate called") && !cli.err().contains("Aborted"), said.constData());
    QVERIFY2(t.elapsed() < 3000, said.constData());
}

// A FIFO in its own directory; the test keeps the write end once the CLI has opened the read end,
// and writes nothing: the CLI waits in read() until the signal.
class Fifo {
public:
    Fifo() {
        path_ = dir_.filePath(QStringLiteral("catalog.fifo"));
        if (::mkfifo(path_.toUtf8().constData(), 0600) != 0) throw std::runtime_error("mkfifo failed");
    }
    ~Fifo() {
        if (writer_ >= 0) ::close(writer_);
    }
    QString path() const { return path_; }
    // True once a reader has the FIFO open (O_NONBLOCK writers fail with ENXIO until then).
    bool wait_for_reader(int timeout_ms = 15000) {
        return eventually([&] {
            writer_ = ::open(path_.toUtf8().constData(), O_WRONLY | O_NONBLOCK | O_CLOEXEC);
            return writer_ >= 0;
        }, timeout_ms);
    }

private:
    QTemporaryDir dir_;
    QString path_;
    int writer_ = -1;
};

}  // namespace

class TestCliInterrupt : public QObject {
    Q_OBJECT
private slots:
    // Each verb that connects, stopped while libpq waits for a server that never answers.
    void every_verb_ends_on_every_signal_while_connecting_data() {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<int>("sig");
        const QList<QStringList> verbs = {
            {"status"},           {"status", "--json"}, {"status", "--watch", "1s"},
            {"try", "x"},         {"hold", "x"},        {"hold", "x", "--wait"},
            {"fence", "init"},    {"fence", "show", "x"},
            {"bench", "--seconds", "1", "--clients", "1"},
            {"demo", "--metrics", "127.0.0.1:0"},
        };
        for (const QStringList& verb : verbs)
            for (int sig : kSignals)
                QTest::newRow(qPrintable(verb.join(' ') + " " + QString::fromLatin1(signal_text(sig)))) << verb << sig;
    }
    void every_verb_ends_on_every_signal_while_connecting() {
        QFETCH(QStringList, args);
        QFETCH(int, sig);
        try {
            SilentServer server;
            Cli cli(args + QStringList{"--dsn", server.dsn()});
            QVERIFY2(server.wait_for_client(), cli.err().constData());
            expect_interrupted(cli, sig, args.join(' ').toUtf8());
            if (args.first() == "status") QVERIFY2(cli.err().contains("before the first poll"), cli.err().constData());
        } catch (const std::exception& e) {
            QFAIL(e.what());
        }
    }

    // A catalog that is a FIFO: opening and reading it block until a writer comes, and no stop
    // token reaches into read(). The signal must end the verb anyway.
    void catalog_from_a_fifo_ends_on_every_signal_data() {
        QTest::addColumn<QString>("verb");
        QTest::addColumn<int>("sig");
        for (const char* verb : {"status", "demo"})
            for (int sig : kSignals)
                QTest::newRow(qPrintable(QString::fromLatin1(verb) + " " + QString::fromLatin1(signal_text(sig))))
                    << QString::fromLatin1(verb) << sig;
    }
    void catalog_from_a_fifo_ends_on_every_signal() {
        QFETCH(QString, verb);
        QFETCH(int, sig);
        Fifo fifo;
        SilentServer server;
        Cli cli({verb, "--catalog", fifo.path(), "--dsn", server.dsn()});
        QVERIFY2(fifo.wait_for_reader(), cli.err().constData());
        QTest::qWait(100);  // from open() into read()
        expect_interrupted(cli, sig, verb.toUtf8() + " --catalog FIFO");
        QVERIFY2(cli.err().contains("catalog"), cli.err().constData());
    }

    // `catalog audit` reads its catalog the same way, with no server at all.
    void catalog_audit_from_a_fifo_ends_on_every_signal_data() {
        QTest::addColumn<int>("sig");
        for (int sig : kSignals) QTest::newRow(signal_text(sig)) << sig;
    }
    void catalog_audit_from_a_fifo_ends_on_every_signal() {
        QFETCH(int, sig);
        Fifo fifo;
        Cli cli({"catalog", "audit", fifo.path()});
        QVERIFY2(fifo.wait_for_reader(), cli.err().constData());
        QTest::qWait(100);  // from open() into read()
        expect_interrupted(cli, sig, "catalog audit FIFO");
    }

    // `key -` answers each line as it arrives, with stdin still open: `yes | pglock key -` must
    // print at once, not read everything first.
    void key_answers_stdin_line_by_line() {
        Cli cli({"key", "-"}, {}, QProcessEnvironment::systemEnvironment(), Cli::Stdin::keep_open);
        cli.write_stdin("orders.daily-rollup\n");
        QVERIFY2(cli.wait_stdout(QRegularExpression("^orders\\.daily-rollup\\t-7132652647757890940\\t"), 5000)
                     .hasMatch(),
                 ("no answer to the first line within 5 s while stdin stays open; stdout [" + cli.out() +
                  "], stderr [" + cli.err() + "]")
                     .constData());
        cli.write_stdin("second\n");
        QVERIFY(cli.wait_stdout(QRegularExpression("\\nsecond\\t"), 5000).hasMatch());
        QVERIFY(cli.running());
        cli.close_stdin();
        QVERIFY(cli.wait_finished(5000));
        QCOMPARE(cli.exit_code(), 0);
        QCOMPARE(cli.out().count('\n'), 2);
    }

    // --json streams too: the array opens at once, each object follows its line.
    void key_json_streams_and_stays_valid() {
        Cli cli({"key", "--json", "a", "-", "z"}, {}, QProcessEnvironment::systemEnvironment(), Cli::Stdin::keep_open);
        cli.write_stdin("m\n");
        QVERIFY2(cli.wait_stdout(QRegularExpression("\"name\":\"m\""), 5000).hasMatch(), cli.out().constData());
        cli.close_stdin();
        QVERIFY(cli.wait_finished(5000));
        QCOMPARE(cli.exit_code(), 0);
        QJsonParseError perr;
        const auto doc = QJsonDocument::fromJson(cli.out(), &perr);
        QVERIFY2(perr.error == QJsonParseError::NoError, cli.out().constData());
        QCOMPARE(doc.array().size(), 3);
        QCOMPARE(doc.array().at(2).toObject().value("name").toString(), QStringLiteral("z"));
    }

    void key_reading_stdin_ends_on_every_signal_data() {
        QTest::addColumn<int>("sig");
        for (int sig : kSignals) QTest::newRow(signal_text(sig).constData()) << sig;
    }
    void key_reading_stdin_ends_on_every_signal() {
        QFETCH(int, sig);
        Cli cli({"key", "-"}, {}, QProcessEnvironment::systemEnvironment(), Cli::Stdin::keep_open);
        cli.write_stdin("first\n");
        QVERIFY(cli.wait_stdout(QRegularExpression("^first\\t"), 5000).hasMatch());
        expect_interrupted(cli, sig, "key -");
    }

    // The shell pipeline from the report: `head -1` takes one line and leaves; pglock must stop at
    // the closed pipe, quietly, and so must `yes`. Run in a process group of its own, killed
    // whole if it is not over within the deadline.
    void yes_into_key_into_head_ends() {
        QProcess sh;
        sh.setProgram(QStringLiteral("/bin/bash"));
        sh.setArguments({"-c", "yes | \"$0\" key - | head -1; echo \"status ${PIPESTATUS[*]}\" >&2", cli_path()});
        sh.setChildProcessModifier([] { ::setpgid(0, 0); });
        sh.start();
        QVERIFY(sh.waitForStarted(5000));
        const qint64 group = sh.processId();
        const bool ended = sh.waitForFinished(10000);
        if (!ended) {
            ::kill(-pid_t(group), SIGKILL);
            sh.waitForFinished(5000);
        }
        const QByteArray out = sh.readAllStandardOutput(), err = sh.readAllStandardError();
        QVERIFY2(ended, ("the pipeline ran 10 s; stdout [" + out.left(200) + "], stderr [" + err + "]").constData());
        QCOMPARE(out, QByteArray("y\t") + QByteArray::number(qint64(pglock::key_of("y"))) + '\t' +
                          QByteArray::number(pglock::tag_of(pglock::key_of("y")).classid) + '\t' +
                          QByteArray::number(pglock::tag_of(pglock::key_of("y")).objid) + '\n');
        // yes: killed by SIGPIPE (141); pglock: exit 1 without a word (its reader left); head: 0.
        QCOMPARE(err, QByteArray("status 141 1 0\n"));
    }
};

QTEST_GUILESS_MAIN(TestCliInterrupt)
#include "test_cli_interrupt.moc"
