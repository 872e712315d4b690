// Passwords, against a cluster of this test's own that asks for scram-sha-256 over TCP. The app
// (MainWindow, with its catalog, history and profiles in a temp HOME) connects with the password
// from each allowed source in turn: PGPASSWORD, a ~/.pgpass file, the connection dialog's
// password field (PoolOptions::overrides underneath) and a password inside a --dsn string. Each
// time it takes and releases a lock by hand and lets the history record it. Then every file under
// the temp HOME is searched byte-wise for the password: it must be in the .pgpass the test wrote
// (the scan can find it) and in nothing the app wrote. Also: ProfileStore strips passwords, and a
// wrong password gives a clear message that does not repeat it.
#include <QAbstractItemView>
#include <QApplication>
#include <QDialogButtonBox>
#include <QDirIterator>
#include <QLabel>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSettings>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>
#include <QTimer>
#include <QUrl>
#include <QUuid>

#include <cstdlib>
#include <memory>

#include "actions/lock_controller.hpp"
#include "history/history_recorder.hpp"
#include "own_cluster.hpp"
#include "pg_conn.hpp"
#include "pglock/error.hpp"
#include "pglock/lock.hpp"
#include "pglock/pool.hpp"
#include "poller/poller.hpp"
#include "stores/catalog_store.hpp"
#include "stores/profile_store.hpp"
#include "widgets/connection_dialog.hpp"
#include "widgets/main_window.hpp"

using namespace lockscope;
using pglock::test::OwnCluster;
using pglock::test::PgConn;

namespace {

constexpr int kWaitMs = 15000;
const char* const kRole = "lockscope_operator";

// Set by main() before QApplication exists, so every path Qt computes lies inside it.
QString g_home;

// Files under dir whose bytes contain the password, in UTF-8 or UTF-16 (QString's own form).
QStringList filesContaining(const QString& dir, const QByteArray& password, QStringList* scanned = nullptr) {
    const QByteArray utf16(reinterpret_cast<const char*>(QString::fromUtf8(password).utf16()), password.size() * 2);
    QStringList hits;
    QDirIterator it(dir, QDir::Files | QDir::Hidden | QDir::System, QDirIterator::Subdirectories);
    while (it.hasNext()) {
        const QString path = it.next();
        QFile f(path);
        if (!f.open(QIODevice::ReadOnly)) {
            hits << path + QStringLiteral(" (unreadable)");  // a file we cannot check fails the test
            continue;
        }
        const QByteArray bytes = f.readAll();
        if (scanned) *scanned << path;
        if (bytes.contains(password) || bytes.contains(utf16)) hits << path;
        else if (path.contains(QString::fromUtf8(password))) hits << path + QStringLiteral(" (its name)");
    }
    return hits;
}

QByteArray uniqueName(const char* what) {
    return QByteArray("password-test.") + what + "." + QUuid::createUuid().toByteArray(QUuid::WithoutBraces);
}

}  // namespace

class TestPasswords : public QObject {
    Q_OBJECT

    std::unique_ptr<OwnCluster> cluster_;
    std::unique_ptr<PgConn> admin_;
    // Distinctive and new each run: no other file on the machine holds it by chance.
    const QByteArray password_ = "pw-" + QUuid::createUuid().toByteArray(QUuid::Id128) + "-lockscope";

    std::string tcpDsn() const {
        return "host=127.0.0.1 port=" + std::to_string(cluster_->port()) + " user=" + kRole +
               " dbname=postgres connect_timeout=5";
    }
    QString pgpassPath() const { return g_home + QStringLiteral("/.pgpass"); }

    // Connects the window, takes a lock by hand, sees it in the poll, releases it and waits
    // until the history has written the finished hold.
    void takeReleaseAndRecord(MainWindow& window, const char* what) {
        QSignalSpy written(&window.historyRecorder(), &history::HistoryRecorder::written);
        QTRY_VERIFY_WITH_TIMEOUT(window.poller().state() == PollState::connected && window.latest(), kWaitMs);
        const QByteArray name = uniqueName(what);
        const auto taken = window.lockController().take(name, TakeMode::Try, false);
        QVERIFY2(taken.accepted(), qPrintable(taken.refusal));
        QTRY_VERIFY_WITH_TIMEOUT(window.lockController().find(taken.id)->state == OwnLockState::Held, kWaitMs);
        const std::string pid = std::to_string(window.lockController().find(taken.id)->pid);
        QCOMPARE(admin_->one("SELECT usename FROM pg_stat_activity WHERE pid = " + pid), std::string(kRole));
        const auto seenInPoll = [&] {
            const auto r = window.latest();
            if (!r) return false;
            for (const auto& lock : r->snapshot->locks) {
                for (const auto& h : lock.holders) {
                    if (std::to_string(h.pid) == pid) return true;
                }
            }
            return false;
        };
        QTRY_VERIFY_WITH_TIMEOUT(seenInPoll(), kWaitMs);
        QVERIFY(window.lockController().release(taken.id).accepted());
        QTRY_VERIFY_WITH_TIMEOUT(window.lockController().find(taken.id)->state == OwnLockState::Released, kWaitMs);
        QTRY_VERIFY_WITH_TIMEOUT(
            [&] {
                for (const auto& args : written) {
                    if (args.at(0).toInt() > 0) return true;
                }
                return false;
            }(),
            kWaitMs);
    }

private slots:
    void initTestCase() {
        QVERIFY(!g_home.isEmpty());
        try {
            cluster_ = std::make_unique<OwnCluster>();
            cluster_->set_hba("local all postgres trust\n"
                              "host all all 127.0.0.1/32 scram-sha-256\n");
            cluster_->append_conf("password_encryption = 'scram-sha-256'");
            cluster_->restart();
        } catch (const std::exception& e) {
            QFAIL(e.what());
        }
        admin_ = std::make_unique<PgConn>(cluster_->admin_dsn());
        QVERIFY(admin_->ok());
        const std::string create = std::string("CREATE ROLE ") + kRole + " LOGIN PASSWORD '" + password_.toStdString() + "'";
        admin_->one(create);
        QCOMPARE(admin_->one(std::string("SELECT left(rolpassword, 14) FROM pg_authid WHERE rolname = '") + kRole + "'"),
                 std::string("SCRAM-SHA-256$"));
        qunsetenv("PGPASSWORD");
        qunsetenv("PGPASSFILE");
    }

    void cleanupTestCase() {
        admin_.reset();
        cluster_.reset();
    }

    // Without any source of the password the server refuses: the sources below are what lets
    // each connection in.
    void noPasswordIsRefused() {
        pglock::Pool pool(tcpDsn());
        try {
            pool.acquire();
            QFAIL("connected without a password");
        } catch (const pglock::Error& e) {
            QCOMPARE(e.code(), pglock::Errc::connection_failed);
            QVERIFY2(std::string(e.what()).find("no password supplied") != std::string::npos, e.what());
        }
    }

    // The library with PoolOptions::overrides, and a wrong one: refused, clearly, not repeated.
    void libraryOverridesAndWrongPassword() {
        pglock::PoolOptions options;
        options.overrides = {{"password", password_.toStdString()}};
        pglock::Pool pool(tcpDsn(), options);
        pglock::Lock lock(pool, uniqueName("library").toStdString());
        auto guard = lock.try_acquire();
        QVERIFY(guard.has_value());
        QVERIFY(!guard->release());

        const std::string wrong = "wrong-" + password_.toStdString();
        pglock::PoolOptions bad;
        bad.overrides = {{"password", wrong}};
        pglock::Pool refused(tcpDsn(), bad);
        try {
            refused.acquire();
            QFAIL("a wrong password was accepted");
        } catch (const pglock::Error& e) {
            QCOMPARE(e.code(), pglock::Errc::connection_failed);
            QVERIFY2(std::string(e.what()).find("password authentication failed for user \"" + std::string(kRole) + "\"") !=
                         std::string::npos,
                     e.what());
            QVERIFY(std::string(e.what()).find(wrong) == std::string::npos);
        }
        // The same through the app's poller: the status line names the problem.
        Poller poller;
        QSignalSpy states(&poller, &Poller::stateChanged);
        poller.start(QString::fromStdString(tcpDsn()), QString::fromStdString(wrong));
        QTRY_VERIFY_WITH_TIMEOUT(poller.state() == PollState::disconnected, kWaitMs);
        const QString shown = states.last().at(1).toString();
        QVERIFY2(shown.contains(QStringLiteral("password authentication failed")), qPrintable(shown));
        QVERIFY(!shown.contains(QString::fromStdString(wrong)));
    }

    void storeStripsPasswords() {
        QTemporaryDir dir;
        ProfileStore store(dir.filePath(QStringLiteral("profiles.ini")));
        const QString secret = QString::fromUtf8(password_);
        const struct {
            const char* name;
            QString conninfo;
            QString kept;  // what must remain of it (libpq's keyword order)
        } cases[] = {
            {"keyword", "host=db1 password=" + secret + " dbname=app", "dbname='app' host='db1'"},
            {"quoted", "host=db1 password='" + secret + " x' user=op", "user='op' host='db1'"},
            {"uri", "postgresql://op:" + secret + "@db1:5433/app?sslmode=require",
             "user='op' dbname='app' host='db1' port='5433' sslmode='require'"},
            {"uri-query", "postgresql://db1/app?password=" + secret, "dbname='app' host='db1'"},
            // Does not parse, but holds a password: nothing of it is kept.
            {"unparsable", "host='db1 password=" + secret, QString()},
            // Every keyword libpq marks as secret, not only password.
            {"sslpassword", "host=db1 sslpassword=" + secret + " dbname=app", "dbname='app' host='db1'"},
            {"uri-query-sslpassword", "postgresql://db1/app?sslpassword=" + secret, "dbname='app' host='db1'"},
            {"unparsable-sslpassword", "host='db1 sslpassword=" + secret, QString()},
            // An unencoded '@' in a URI password: libpq would keep its tail as the host name.
            {"uri-at-in-password", "postgresql://op:wrong@" + secret + "@db1/app", QString()},
            {"no-password", "host=db1 dbname=app", "host=db1 dbname=app"},  // untouched
        };
        for (const auto& c : cases) {
            ConnectionProfile p;
            p.name = QString::fromLatin1(c.name);
            p.conninfo = c.conninfo;
            store.save(p);
            QCOMPARE(store.load(p.name).conninfo, c.kept);
        }
        // A metrics URL keeps its endpoint, never its user:password@ (HTTP basic auth).
        ConnectionProfile withMetrics;
        withMetrics.name = QStringLiteral("metrics");
        withMetrics.conninfo = QStringLiteral("host=db1");
        withMetrics.metricsUrls = {"http://op:" + secret + "@app1:9187/metrics", QStringLiteral("http://app2:9187/metrics")};
        store.save(withMetrics);
        QCOMPARE(store.load(withMetrics.name).metricsUrls,
                 (QStringList{QStringLiteral("http://app1:9187/metrics"), QStringLiteral("http://app2:9187/metrics")}));
        QStringList hits = filesContaining(dir.path(), password_);
        QVERIFY2(hits.isEmpty(), qPrintable(hits.join(QStringLiteral(", "))));
    }

    // The Connect dialog refuses, with a message, what a profile would have to store a secret for.
    void dialogRefusesSecrets() {
        QTemporaryDir dir;
        ProfileStore store(dir.filePath(QStringLiteral("dialog.ini")));
        const QString secret = QString::fromUtf8(password_);
        const struct {
            const char* what;
            QString conninfo, metrics, says;
        } cases[] = {
            {"password", "host=db1 password=" + secret, {}, QStringLiteral("contains a password")},
            {"sslpassword", "host=db1 sslpassword=" + secret, {}, QStringLiteral("sslpassword")},
            {"uri sslpassword", "postgresql://db1/app?sslpassword=" + secret, {}, QStringLiteral("sslpassword")},
            {"metrics userinfo", QStringLiteral("host=db1"), "http://op:" + secret + "@app1:9187/metrics",
             QStringLiteral("carries a user name or password")},
        };
        for (const auto& c : cases) {
            ConnectionDialog dialog(store);
            const auto edits = dialog.findChildren<QLineEdit*>();
            edits.first()->setText(QStringLiteral("refused ") + QString::fromLatin1(c.what));
            for (QLineEdit* edit : edits) {
                if (edit->placeholderText().startsWith(QStringLiteral("host=db1"))) edit->setText(c.conninfo);
            }
            if (!c.metrics.isEmpty()) dialog.findChild<QPlainTextEdit*>()->setPlainText(c.metrics);
            dialog.findChild<QDialogButtonBox*>()->button(QDialogButtonBox::Ok)->click();
            QVERIFY2(dialog.result() != QDialog::Accepted, c.what);
            QLabel* error = nullptr;
            for (QLabel* label : dialog.findChildren<QLabel*>()) {
                if (label->text().contains(c.says)) error = label;
            }
            QVERIFY2(error, c.what);
            QVERIFY2(!error->text().contains(secret), qPrintable(error->text()));
            QVERIFY2(store.names().isEmpty(), c.what);
        }
        QVERIFY(filesContaining(dir.path(), password_).isEmpty());
    }

    // The whole app, once per password source; then no file it wrote holds the password.
    void passwordsNeverReachTheAppsFiles() {
        const QString dataDir = QStandardPaths::writableLocation(QStandardPaths::AppDataLocation);
        const QString configDir = QStandardPaths::writableLocation(QStandardPaths::AppConfigLocation);
        QVERIFY2(dataDir.startsWith(g_home) && configDir.startsWith(g_home), qPrintable(dataDir + " " + configDir));
        CatalogStore catalog(CatalogStore::defaultPath());
        QVERIFY2(catalog.isOpen(), qPrintable(catalog.errorString()));
        catalog.add(uniqueName("catalogued"));
        QStringList appFilesWhileOpen;
        {
            MainWindow window(catalog);
            window.show();

            // 1. PGPASSWORD.
            qputenv("PGPASSWORD", password_);
            window.connectTo(QString::fromStdString(tcpDsn()), {}, QStringLiteral("from-env"));
            takeReleaseAndRecord(window, "env");
            qunsetenv("PGPASSWORD");

            // 2. ~/.pgpass in the temp HOME (libpq ignores it unless only its owner can read it).
            {
                QFile pgpass(pgpassPath());
                QVERIFY(pgpass.open(QIODevice::WriteOnly));
                pgpass.write("127.0.0.1:" + QByteArray::number(cluster_->port()) + ":postgres:" + kRole + ":" + password_ + "\n");
                pgpass.close();
                QVERIFY(pgpass.setPermissions(QFileDevice::ReadOwner | QFileDevice::WriteOwner));
            }
            window.connectTo(QString::fromStdString(tcpDsn()), {}, QStringLiteral("from-pgpass"));
            takeReleaseAndRecord(window, "pgpass");
            QVERIFY(QFile::remove(pgpassPath()));

            // 3. The connection dialog: a profile saved with its password typed in the field.
            QTimer::singleShot(0, &window, [this] {
                auto* dialog = qobject_cast<ConnectionDialog*>(QApplication::activeModalWidget());
                if (!dialog) return;
                const auto edits = dialog->findChildren<QLineEdit*>();
                for (QLineEdit* edit : edits) {
                    if (edit->echoMode() == QLineEdit::Password) edit->setText(QString::fromUtf8(password_));
                    else if (edit->placeholderText().startsWith(QStringLiteral("host=db1")))
                        edit->setText(QString::fromStdString(tcpDsn()));
                }
                edits.first()->setText(QStringLiteral("scram profile"));  // the Name field comes first
                dialog->findChild<QDialogButtonBox*>()->button(QDialogButtonBox::Ok)->click();
            });
            window.openConnectionDialog();
            QCOMPARE(window.windowTitle(), QStringLiteral("lockscope — scram profile"));
            takeReleaseAndRecord(window, "dialog");

            // 4. A password inside the connection string given on the command line (--dsn).
            window.connectTo(QString::fromStdString(tcpDsn() + " password=" + password_.toStdString()));
            takeReleaseAndRecord(window, "dsn");
            QVERIFY(!window.windowTitle().contains(QString::fromUtf8(password_)));

            // 5. A URI whose password has an unencoded '@': libpq reads the tail as the host, so
            // the connection fails; neither the title, the status line nor a history file name
            // may show any part of the password.
            const QString uri = QStringLiteral("postgresql://%1:wrong@%2@127.0.0.1:%3/postgres?connect_timeout=5")
                                    .arg(QLatin1String(kRole), QString::fromUtf8(password_))
                                    .arg(cluster_->port());
            window.connectTo(uri);
            auto* state = window.findChild<QLabel*>(QStringLiteral("stateLabel"));
            QVERIFY(state);
            QTRY_VERIFY_WITH_TIMEOUT(state->text().startsWith(QStringLiteral("disconnected")), kWaitMs);
            QVERIFY2(!state->text().contains(QString::fromUtf8(password_)), qPrintable(state->text()));
            QVERIFY2(!window.windowTitle().contains(QString::fromUtf8(password_)), qPrintable(window.windowTitle()));

            // 6. A metrics endpoint with basic-auth credentials (nothing listens there): its
            // failure is shown without the password, and the profile that lists it is saved
            // without it, like one with sslpassword in its connection string.
            qputenv("PGPASSWORD", password_);
            const QUrl metricsUrl(QStringLiteral("http://op:%1@127.0.0.1:1/metrics").arg(QString::fromUtf8(password_)));
            window.connectTo(QString::fromStdString(tcpDsn() + " sslpassword=" + password_.toStdString()), {},
                             QStringLiteral("with-metrics"), false, {metricsUrl});
            takeReleaseAndRecord(window, "metrics");
            qunsetenv("PGPASSWORD");
            {
                ConnectionProfile p;
                p.name = QStringLiteral("secret-bearing profile");
                p.conninfo = QString::fromStdString(tcpDsn() + " sslpassword=" + password_.toStdString());
                p.metricsUrls = {metricsUrl.toString()};
                ProfileStore().save(p);
            }
            QStringList shownAnywhere;
            for (QAbstractItemView* view : window.findChildren<QAbstractItemView*>()) {
                QAbstractItemModel* m = view->model();
                if (!m) continue;
                for (int row = 0; row < m->rowCount(); ++row) {
                    for (int column = 0; column < m->columnCount(); ++column) {
                        for (int role : {int(Qt::DisplayRole), int(Qt::ToolTipRole)}) {
                            const QString text = m->index(row, column).data(role).toString();
                            if (text.contains(QString::fromUtf8(password_))) shownAnywhere << text;
                        }
                    }
                }
            }
            QVERIFY2(shownAnywhere.isEmpty(), qPrintable(shownAnywhere.join(QStringLiteral(" | "))));

            // While the stores are open, with their -wal and -journal files.
            QStringList hits = filesContaining(g_home, password_, &appFilesWhileOpen);
            QVERIFY2(hits.isEmpty(), qPrintable(hits.join(QStringLiteral(", "))));
            QVERIFY(window.close());
        }
        QStringList appFiles;
        QStringList hits = filesContaining(g_home, password_, &appFiles);
        QVERIFY2(hits.isEmpty(), qPrintable(hits.join(QStringLiteral(", "))));
        qInfo("scanned %lld files while open, %lld after closing: %s", static_cast<long long>(appFilesWhileOpen.size()),
              static_cast<long long>(appFiles.size()), qPrintable(appFiles.join(QStringLiteral(", "))));
        // The scan covered what the app writes: its settings, the catalog and the history files.
        const QString conf = QSettings().fileName();
        QVERIFY2(appFiles.contains(conf), qPrintable(conf));
        QVERIFY(QSettings().childGroups().contains(QStringLiteral("profiles")));
        QVERIFY(appFiles.contains(CatalogStore::defaultPath()));
        QVERIFY(QSettings().childGroups().contains(QStringLiteral("profiles")));
        for (const char* profile : {"from-env", "from-pgpass", "scram profile", "with-metrics"}) {
            const QString history = history::HistoryStore::pathForProfile(QString::fromLatin1(profile));
            QVERIFY2(appFiles.contains(history), qPrintable(history));
        }

        // And the scan finds a password where there is one: the .pgpass a user would write.
        QFile pgpass(pgpassPath());
        QVERIFY(pgpass.open(QIODevice::WriteOnly));
        pgpass.write("*:*:*:*:" + password_ + "\n");
        pgpass.close();
        QCOMPARE(filesContaining(g_home, password_), QStringList{pgpassPath()});
        QVERIFY(QFile::remove(pgpassPath()));
    }
};

int main(int argc, char** argv) {
    // A temp HOME with every XDG dir inside it, before Qt computes any path: the app's QSettings,
    // catalog and history all land here, and libpq looks for ~/.pgpass here.
    QTemporaryDir home(QDir::tempPath() + QStringLiteral("/lockscope-home.XXXXXX"));
    if (!home.isValid()) return 2;
    g_home = home.path();
    qputenv("HOME", g_home.toUtf8());
    for (const char* var : {"XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME", "XDG_STATE_HOME"}) {
        const QString dir = g_home + QLatin1Char('/') + QString::fromLatin1(var).toLower();
        QDir().mkpath(dir);
        qputenv(var, dir.toUtf8());
    }
    QApplication app(argc, argv);
    QApplication::setOrganizationName(QStringLiteral("pglock"));
    QApplication::setApplicationName(QStringLiteral("lockscope"));
    TestPasswords test;
    return QTest::qExec(&test, argc, argv);
}

#include "test_passwords.moc"
