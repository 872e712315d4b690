// lockscope: who holds which named advisory lock, and who waits on whom.
#include <QApplication>
#include <QCommandLineParser>
#include <QDir>
#include <QElapsedTimer>
#include <QRegularExpression>
#include <QTimer>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>
#include <string_view>
#include <vector>

#include "actions/lock_controller.hpp"
#include "actions/read_only_switch.hpp"
#include "bench/bench_mode.hpp"
#include "bench/catalog_bench.hpp"
#include "metrics/metrics_scraper.hpp"
#include "pglock/conninfo.hpp"
#include "pglock/conninfo_secrets.hpp"
#include "screenshot.hpp"
#include "stores/catalog_store.hpp"
#include "stores/profile_store.hpp"
#include "theme/app_palette.hpp"
#include "widgets/main_window.hpp"
#include "widgets/resolver_panel.hpp"

namespace {

void nameTheApplication() {
    QCoreApplication::setOrganizationName(QStringLiteral("pglock"));
    QCoreApplication::setApplicationName(QStringLiteral("lockscope"));
    QCoreApplication::setApplicationVersion(QStringLiteral(PGLOCK_VERSION));
}

// --help and --version answer without a display (QApplication aborts when it finds none, as on a
// server over ssh): they are looked for before QApplication exists and answered by the same parser,
// which prints and exits.
bool asksOnlyForHelpOrVersion(int argc, char** argv) {
    static constexpr std::string_view kWords[] = {"-h", "--help", "-?", "--help-all", "-v", "--version"};
    return std::any_of(argv + 1, argv + argc,
                       [](const char* arg) { return std::find(std::begin(kWords), std::end(kWords), arg) != std::end(kWords); });
}

}  // namespace

int main(int argc, char** argv) {
    QElapsedTimer sinceStart;  // --bench-catalog times the first paint from here
    sinceStart.start();
    std::unique_ptr<QCoreApplication> app;
    if (asksOnlyForHelpOrVersion(argc, argv)) {
        app = std::make_unique<QCoreApplication>(argc, argv);
    } else {
        app = std::make_unique<QApplication>(argc, argv);
    }
    nameTheApplication();
    // Wayland's app_id: the installed lockscope.desktop, whose icon and name the shell then shows.
    QGuiApplication::setDesktopFileName(QStringLiteral("lockscope"));
    // The platform's light or dark palette, unless LOCKSCOPE_THEME=light|dark forces one (screenshots).
    if (const auto mode = lockscope::theme::modeFromEnvironment()) lockscope::theme::apply(*mode);

    QCommandLineParser cli;
    cli.setApplicationDescription(QStringLiteral("Named PostgreSQL advisory locks: holders, waiters, names."));
    cli.addHelpOption();
    cli.addVersionOption();
    QCommandLineOption dsn(QStringLiteral("dsn"), QStringLiteral("Connect at once (conninfo, URI or service=); repeatable: one server each, "
                                                                   "all in the Fleet tab."), QStringLiteral("DSN"));
    QCommandLineOption profile(QStringLiteral("profile"),
                               QStringLiteral("Connect at once to this saved connection profile (repeatable; a production "
                                              "profile opens read-only)."),
                               QStringLiteral("NAME"));
    QCommandLineOption catalog(QStringLiteral("catalog"), QStringLiteral("The name catalog (SQLite) to use."), QStringLiteral("FILE"));
    QCommandLineOption importNames(QStringLiteral("import-names"),
                                   QStringLiteral("Import a text list of lock names into the catalog first."), QStringLiteral("FILE"));
    QCommandLineOption screenshot(QStringLiteral("screenshot"),
                                  QStringLiteral("Save a PNG of the window after --screenshot-delay and quit."), QStringLiteral("FILE"));
    QCommandLineOption delay(QStringLiteral("screenshot-delay"), QStringLiteral("Milliseconds before the screenshot (default 4000)."),
                             QStringLiteral("MS"), QStringLiteral("4000"));
    QCommandLineOption select(QStringLiteral("screenshot-select"),
                              QStringLiteral("With --screenshot: select the first lock whose name contains TEXT (waiting up to 15 s "
                                             "for it to appear, and to have waiters; without it, the first lock with waiters)."),
                              QStringLiteral("TEXT"));
    QCommandLineOption windowSize(QStringLiteral("window-size"), QStringLiteral("Open the window at this size (default 1440x780)."),
                                  QStringLiteral("WxH"));
    QCommandLineOption takeDialog(QStringLiteral("take-dialog"),
                                  QStringLiteral("Open the Take lock dialog for NAME once the window is up, as Take lock… does."),
                                  QStringLiteral("NAME"));
    QCommandLineOption tab(QStringLiteral("tab"),
                           QStringLiteral("Open on this tab: locks, tree, timeline, histogram, history, metrics or fleet, or the side tab session, "
                                          "mylocks, resolver or catalog."),
                           QStringLiteral("TAB"));
    QCommandLineOption metrics(QStringLiteral("metrics"),
                               QStringLiteral("Scrape this /metrics endpoint of an application using the library (repeatable; "
                                              "HOST:PORT or a URL)."),
                               QStringLiteral("URL"));
    QCommandLineOption readOnly(QStringLiteral("read-only"), QStringLiteral("Start in read-only mode: no action changes the server."));
    QCommandLineOption take(QStringLiteral("take"),
                            QStringLiteral("Take a lock by hand once connected (repeatable). MODE is try (default), blocking, "
                                           "xact or shared (a shared try)."),
                            QStringLiteral("[MODE:]NAME"));
    QCommandLineOption resolve(QStringLiteral("resolve"), QStringLiteral("Put this text into the resolver."), QStringLiteral("TEXT"));
    QCommandLineOption benchSeconds(QStringLiteral("bench-seconds"),
                                    QStringLiteral("Benchmark mode: with --dsn, poll every --bench-interval ms for S seconds while a "
                                                   "probe timer measures event-loop stalls, print the results and quit."),
                                    QStringLiteral("S"));
    QCommandLineOption benchInterval(QStringLiteral("bench-interval"),
                                     QStringLiteral("Poll interval of the benchmark mode in ms (default 5; the GUI allows 250 and up)."),
                                     QStringLiteral("MS"), QStringLiteral("5"));
    QCommandLineOption benchPolls(QStringLiteral("bench-polls"),
                                  QStringLiteral("Benchmark mode: also stop after N polls (RSS is printed every 10,000)."),
                                  QStringLiteral("N"));
    QCommandLineOption benchCatalog(QStringLiteral("bench-catalog"),
                                    QStringLiteral("Benchmark the catalog panel at N names (no server needed): prepare an N-name "
                                                   "catalog (a copy of --catalog, or of a cached one in the temp directory), type a "
                                                   "filter and delete it, import N/10 names, print event-loop stalls and quit."),
                                    QStringLiteral("N"));
    cli.addOptions({dsn, profile, catalog, importNames, screenshot, delay, select, windowSize, takeDialog, tab, resolve, readOnly, take, metrics, benchSeconds, benchInterval,
                    benchPolls, benchCatalog});
    cli.process(*app);
    if (qobject_cast<QApplication*>(app.get()) == nullptr) {
        // One of those words was an option's value (--resolve -v): this run wants the window after all.
        app.reset();
        app = std::make_unique<QApplication>(argc, argv);
        nameTheApplication();
        cli.process(*app);
    }

    // Usage errors first, before any file is opened or anything shown: each is said once, exit 2.
    if (cli.isSet(tab) && !lockscope::MainWindow::tabNames().contains(cli.value(tab))) {
        std::fprintf(stderr, "lockscope: --tab %s: no such tab (%s)\n", qPrintable(cli.value(tab)),
                     qPrintable(lockscope::MainWindow::tabNames().join(QStringLiteral(", "))));
        return 2;
    }
    QSize size;
    if (cli.isSet(windowSize)) {
        const auto match = QRegularExpression(QStringLiteral("^(\\d{3,5})x(\\d{3,5})$")).match(cli.value(windowSize));
        if (!match.hasMatch()) {
            std::fprintf(stderr, "lockscope: --window-size %s: expected WIDTHxHEIGHT, e.g. 1440x780\n", qPrintable(cli.value(windowSize)));
            return 2;
        }
        size = QSize(match.captured(1).toInt(), match.captured(2).toInt());
    }
    for (const QString& each : cli.values(dsn)) {
        // A string libpq refuses to parse never connects: retrying it would repeat the error forever.
        const std::string conninfo = each.toStdString();
        if (const auto why = pglock::conninfo_error(conninfo)) {
            std::fprintf(stderr, "lockscope: invalid --dsn: %s\n", pglock::redact_secrets(*why, conninfo).c_str());
            return 2;
        }
    }
    std::vector<lockscope::ConnectionProfile> profiles;
    {
        const lockscope::ProfileStore saved;
        for (const QString& name : cli.values(profile)) {
            if (!saved.names().contains(name)) {
                std::fprintf(stderr, "lockscope: --profile %s: no such profile (%s)\n", qPrintable(name),
                             qPrintable(saved.names().join(QStringLiteral(", "))));
                return 2;
            }
            profiles.push_back(saved.load(name));
        }
    }

    QString catalogPath = cli.isSet(catalog) ? cli.value(catalog) : lockscope::CatalogStore::defaultPath();
    lockscope::CatalogBench::Options catalogBench;
    if (cli.isSet(benchCatalog)) {
        bool ok = false;
        const qint64 n = cli.value(benchCatalog).toLongLong(&ok);
        if (!ok || n < 1) {
            std::fprintf(stderr, "lockscope: --bench-catalog %s: not a number of names\n", qPrintable(cli.value(benchCatalog)));
            return 2;
        }
        // Setup, before the window exists and before the clock starts: every run starts from the
        // same N names (a copy), so an import of the last run never counts.
        const QString tmp = QDir::tempPath();
        const QString cached = cli.isSet(catalog) ? cli.value(catalog) : tmp + QStringLiteral("/lockscope-bench-catalog-%1.sqlite").arg(n);
        catalogPath = tmp + QStringLiteral("/lockscope-bench-catalog-run.sqlite");
        catalogBench.importFile = tmp + QStringLiteral("/lockscope-bench-import.txt");
        QString why;
        if (!lockscope::CatalogBench::prepare(n, cached, catalogPath, catalogBench.importFile, &why)) {
            std::fprintf(stderr, "lockscope: --bench-catalog: %s\n", qPrintable(why));
            return 1;
        }
        sinceStart.restart();
    }
    lockscope::CatalogStore store(catalogPath);
    if (!store.isOpen()) {
        std::fprintf(stderr, "lockscope: cannot open the catalog %s: %s\n", qPrintable(catalogPath), qPrintable(store.errorString()));
        return 1;
    }
    if (cli.isSet(importNames)) {
        const QString file = cli.value(importNames);
        const auto report = store.importText(file);
        if (!report.errors.isEmpty()) {
            std::fprintf(stderr, "lockscope: import of %s failed: %s\n", qPrintable(file),
                         qPrintable(report.errors.join(QStringLiteral("; "))));
            return 1;
        }
        // Each skipped line with its number and why (the warnings say "FILE: line N: ...").
        for (const QString& warning : report.warnings) std::fprintf(stderr, "lockscope: %s\n", qPrintable(warning));
        if (report.skipped > 0) {
            std::fprintf(stderr,
                         "lockscope: --import-names %s: %d line(s) skipped, %d name(s) added; fix the file and import it again\n",
                         qPrintable(file), report.skipped, report.added);
            return 1;
        }
    }

    lockscope::MainWindow window(store);
    if (size.isValid()) window.resize(size);
    window.show();
    QList<QUrl> endpoints;
    for (const QString& text : cli.values(metrics)) {
        QString why;
        const QUrl url = lockscope::MetricsScraper::endpointFromUserInput(text, &why);
        if (!url.isValid()) {
            std::fprintf(stderr, "lockscope: --metrics %s: %s\n", qPrintable(text), qPrintable(why));
            return 2;
        }
        endpoints << url;
    }
    // Each --dsn and --profile is a server of its own; the first one is the one the views show.
    // --metrics and --read-only go with the --dsn servers (a profile has its own).
    for (const QString& each : cli.values(dsn)) window.openServer(each, {}, {}, cli.isSet(readOnly), endpoints);
    for (const lockscope::ConnectionProfile& p : profiles) {
        QList<QUrl> urls;
        for (const QString& url : p.metricsUrls) urls << QUrl(url);
        window.openServer(p.toConninfo(), {}, p.name, p.readOnly || cli.isSet(readOnly), urls);
    }
    if (!cli.isSet(dsn) && profiles.empty()) window.readOnlySwitch().set(cli.isSet(readOnly));
    for (const QString& spec : cli.values(take)) {
        const qsizetype colon = spec.indexOf(QLatin1Char(':'));
        const QString mode = colon > 0 ? spec.left(colon) : QStringLiteral("try");
        const QByteArray name = (colon > 0 ? spec.mid(colon + 1) : spec).toUtf8();
        const auto takeMode = mode == QLatin1String("blocking") ? lockscope::TakeMode::Blocking
                              : mode == QLatin1String("xact")   ? lockscope::TakeMode::Transaction
                                                                : lockscope::TakeMode::Try;
        if (mode != QLatin1String("try") && mode != QLatin1String("blocking") && mode != QLatin1String("xact") &&
            mode != QLatin1String("shared")) {
            std::fprintf(stderr, "lockscope: --take: unknown mode \"%s\" (try, blocking, xact or shared)\n", qPrintable(mode));
            return 2;
        }
        const auto outcome = window.lockController().take(name, takeMode, mode == QLatin1String("shared"));
        if (!outcome) {
            std::fprintf(stderr, "lockscope: --take %s: %s\n", qPrintable(spec), qPrintable(outcome.refusal));
            return 2;
        }
    }
    if (cli.isSet(resolve)) window.resolver().setText(cli.value(resolve));
    if (cli.isSet(tab)) window.showTab(cli.value(tab));  // checked above
    // Once the event loop runs: the dialog is modal, and its exec() runs the loop from then on.
    if (cli.isSet(takeDialog))
        QTimer::singleShot(0, &window, [&window, name = cli.value(takeDialog).toUtf8()] { window.takeLock(name); });

    std::unique_ptr<lockscope::CatalogBench> catalogBenchRun;
    if (cli.isSet(benchCatalog)) {
        catalogBenchRun = std::make_unique<lockscope::CatalogBench>(window, catalogBench, sinceStart);
        catalogBenchRun->start();
    }

    std::unique_ptr<lockscope::BenchMode> bench;
    if (cli.isSet(benchSeconds)) {
        lockscope::BenchMode::Options options;
        options.duration = std::chrono::milliseconds(static_cast<long long>(cli.value(benchSeconds).toDouble() * 1000.0));
        options.pollInterval = std::chrono::milliseconds(std::max(1, cli.value(benchInterval).toInt()));
        if (cli.isSet(benchPolls)) options.maxPolls = cli.value(benchPolls).toULongLong();
        // With several servers (--dsn repeated) every one polls at the benchmark's interval; the
        // poll counts printed are the current server's.
        for (lockscope::ServerSession* session : window.sessions()) session->poller().setBenchmarkInterval(options.pollInterval);
        bench = std::make_unique<lockscope::BenchMode>(window.currentSession(), options);
        bench->start();
    }

    if (cli.isSet(screenshot))
        lockscope::armScreenshot(window, {cli.value(screenshot), cli.value(delay).toInt(), cli.value(select)});
    return QApplication::exec();
}
