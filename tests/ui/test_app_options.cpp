// lockscope's command line, run as a process (offscreen, temp HOME, no server): usage errors are
// said once on stderr with a non-zero exit before any window shows, instead of being ignored
// (--tab bogus), retried forever (--dsn sslmode=bogus) or half-done silently (--import-names
// with lines it cannot use). Every run has a deadline and is killed at it.
#include <QProcess>
#include <QSettings>
#include <QTemporaryDir>
#include <QtTest>

namespace {

struct Run {
    bool finished = false;
    int code = -1;
    QString err;
    QString out;
};

enum class Display { offscreen, none };

Run runApp(const QStringList& args, const QString& home, Display display = Display::offscreen) {
    QProcess p;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert(QStringLiteral("HOME"), home);
    env.insert(QStringLiteral("XDG_DATA_HOME"), home + QStringLiteral("/data"));
    env.insert(QStringLiteral("XDG_CONFIG_HOME"), home + QStringLiteral("/config"));
    if (display == Display::offscreen) {
        env.insert(QStringLiteral("QT_QPA_PLATFORM"), QStringLiteral("offscreen"));
    } else {
        for (const char* name : {"QT_QPA_PLATFORM", "DISPLAY", "WAYLAND_DISPLAY"}) env.remove(QString::fromLatin1(name));
    }
    p.setProcessEnvironment(env);
    p.start(QStringLiteral(LOCKSCOPE_APP_PATH), args);
    Run r;
    r.finished = p.waitForFinished(15000);
    if (!r.finished) {
        p.kill();
        p.waitForFinished(5000);
    }
    r.code = p.exitCode();
    r.err = QString::fromUtf8(p.readAllStandardError());
    r.out = QString::fromUtf8(p.readAllStandardOutput());
    return r;
}

}  // namespace

class TestAppOptions : public QObject {
    Q_OBJECT
    QTemporaryDir home_;

    QString catalog() const { return home_.filePath(QStringLiteral("catalog.sqlite")); }

private slots:
    void initTestCase() { QVERIFY(home_.isValid()); }

    // On a server over ssh there is no display: asking what the options are must still work.
    void helpAndVersionNeedNoDisplay() {
        const Run help = runApp({QStringLiteral("--help")}, home_.path(), Display::none);
        QVERIFY2(help.finished, "lockscope --help did not exit");
        QVERIFY2(help.code == 0, qPrintable(QStringLiteral("exit %1: %2").arg(help.code).arg(help.err)));
        QVERIFY2(help.out.contains(QStringLiteral("--dsn")), qPrintable(help.out + help.err));
        const Run version = runApp({QStringLiteral("--version")}, home_.path(), Display::none);
        QVERIFY2(version.finished && version.code == 0, qPrintable(version.err));
        QVERIFY2(version.out.contains(QStringLiteral("lockscope")), qPrintable(version.out + version.err));
    }

    void unknownTabIsAnError() {
        const Run r = runApp({QStringLiteral("--catalog"), catalog(), QStringLiteral("--tab"), QStringLiteral("bogus")}, home_.path());
        QVERIFY2(r.finished, "lockscope --tab bogus did not exit: the option was ignored");
        QCOMPARE(r.code, 2);
        QVERIFY2(r.err.contains(QStringLiteral("--tab bogus: no such tab")), qPrintable(r.err));
        QVERIFY2(r.err.contains(QStringLiteral("histogram")), qPrintable(r.err));  // the valid ones are listed
    }

    void unparsableDsnIsShownOnceNotRetried() {
        const Run r = runApp({QStringLiteral("--catalog"), catalog(), QStringLiteral("--dsn"),
                              QStringLiteral("host=127.0.0.1 sslmode=bogus password=Sekr3t-never-shown")},
                             home_.path());
        QVERIFY2(r.finished, "lockscope --dsn sslmode=bogus did not exit: it retries a string that can never connect");
        QCOMPARE(r.code, 2);
        QVERIFY2(r.err.contains(QStringLiteral("invalid --dsn: invalid sslmode value: \"bogus\"")), qPrintable(r.err));
        QCOMPARE(r.err.count(QStringLiteral("lockscope: ")), 1);  // said once
        QVERIFY2(!r.err.contains(QStringLiteral("Sekr3t")), qPrintable(r.err));
    }

    // --profile NAME opens a saved profile (repeatable); a name that is not saved is a usage error
    // that lists the saved ones, not an empty window.
    void profileByNameOrAnError() {
        {
            QSettings saved(home_.filePath(QStringLiteral("config/pglock/lockscope.conf")), QSettings::IniFormat);
            saved.setValue(QStringLiteral("profiles/%1/conninfo").arg(QString::fromLatin1(QByteArray("orders-eu").toHex())),
                           QStringLiteral("host=127.0.0.1 port=1 dbname=orders connect_timeout=1"));
            saved.setValue(QStringLiteral("profiles/%1/production").arg(QString::fromLatin1(QByteArray("orders-eu").toHex())), true);
        }
        const Run bad = runApp({QStringLiteral("--catalog"), catalog(), QStringLiteral("--profile"), QStringLiteral("nosuch")},
                               home_.path());
        QVERIFY2(bad.finished, "lockscope --profile nosuch did not exit");
        QCOMPARE(bad.code, 2);
        QVERIFY2(bad.err.contains(QStringLiteral("--profile nosuch: no such profile (orders-eu)")), qPrintable(bad.err));
        const Run good = runApp({QStringLiteral("--catalog"), catalog(), QStringLiteral("--profile"), QStringLiteral("orders-eu"),
                                 QStringLiteral("--tab"), QStringLiteral("fleet"), QStringLiteral("--screenshot"),
                                 home_.filePath(QStringLiteral("fleet.png")), QStringLiteral("--screenshot-delay"), QStringLiteral("300")},
                                home_.path());
        QVERIFY2(good.finished && good.code == 0, qPrintable(QStringLiteral("exit %1: %2").arg(good.code).arg(good.err)));
    }

    void skippedImportLinesAreReported() {
        const QString list = home_.filePath(QStringLiteral("names.txt"));
        {
            QFile f(list);
            QVERIFY(f.open(QIODevice::WriteOnly));
            f.write("good.one\n"
                    "bad\xff\xfe.utf8\n"
                    "# a comment\n"
                    "bad\\q.escape\n"
                    "good.two\n");
        }
        const Run r = runApp({QStringLiteral("--catalog"), catalog(), QStringLiteral("--import-names"), list}, home_.path());
        QVERIFY2(r.finished, "lockscope --import-names with bad lines did not exit");
        QCOMPARE(r.code, 1);
        QVERIFY2(r.err.contains(QStringLiteral("line 2: not valid UTF-8")), qPrintable(r.err));
        QVERIFY2(r.err.contains(QStringLiteral("line 4:")), qPrintable(r.err));
        QVERIFY2(r.err.contains(QStringLiteral("2 line(s) skipped, 2 name(s) added")), qPrintable(r.err));
    }
};

QTEST_GUILESS_MAIN(TestAppOptions)
#include "test_app_options.moc"
