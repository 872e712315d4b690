// lockscope_bench_merge: what the app does with each poll, timed without a server.
//
// Builds realistic snapshots (ui/bench/snapshot_generator.hpp: 10,000 locks by default, holders
// and waiters, 1% of the locks changing and 1% replaced between polls) and times, per poll:
//   diff      the hold and wait trackers and the PollResult (on the poll thread in the app)
//   model     LocksModel::applySnapshot under the window's sort/filter proxy (sorted by name)
//   diff+model the two per poll, added (the client-side budget)
//   timeline  TimelineModel::addPoll
//   stats     HoldStatsModel::addPoll
//   history   HistoryRecorder::record (the GUI-thread part; the write is on its own thread)
//   gui       model + timeline + stats + history: the per-poll GUI-thread work, standalone
//   chart     TimelineChart::refreshNow on a shown timeline over that timeline model: what a
//             visible timeline does at most every 250 ms (sort lanes by name, lay out the axis)
//   window    the whole MainWindow path (Poller::resultReady -> every slot connected to it)
//   events    processing the events that poll left behind (layout and paint of the views), in
//             as many event-loop turns as the window needs to catch up (staged first poll)
//   turn      the longest single event-loop turn of the window's poll: its resultReady slots or
//             one processEvents() call (a staged step of the locks model, the charts' turn, ...)
// and prints median, p95 and max of each over the polls, plus the first poll (the initial load
// of every row) on its own. A benchmark, not a test: it prints numbers and asserts nothing.
//
//   lockscope_bench_merge [--polls 200] [--locks 10000] [--sessions 100] [--waiters 200]
//                         [--catalogued 0.5] [--no-window] [--tab timeline]
//                         [--stage-rows 2000] (0: the window applies every snapshot at once) [--print-turns]
#include <QApplication>
#include <QCommandLineParser>
#include <QElapsedTimer>
#include <QFile>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTreeView>

#include <algorithm>
#include <ctime>
#include <limits>
#include <cstdio>
#include <memory>
#include <map>
#include <string>
#include <vector>

#include "charts/charts_panel.hpp"
#include "charts/hold_stats_model.hpp"
#include "charts/timeline_chart.hpp"
#include "charts/timeline_model.hpp"
#include "history/history_recorder.hpp"
#include "models/locks_filter_proxy.hpp"
#include "models/lock_summary.hpp"
#include "models/locks_model.hpp"
#include "models/staged_snapshot_feeder.hpp"
#include "snapshot_generator.hpp"
#include "stores/catalog_name_cache.hpp"
#include "stores/catalog_store.hpp"
#include "widgets/main_window.hpp"

using namespace lockscope;
namespace monitor = pglock::monitor;

namespace {

// CPU time of this thread: on a loaded machine wall time also counts the time other processes
// had the CPU, which says nothing about the app. Both are printed.
double threadCpuMs() {
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) / 1e6;
}

struct Stopwatch {
    QElapsedTimer wall;
    double cpu0 = 0;
    void start() {
        cpu0 = threadCpuMs();
        wall.start();
    }
    std::pair<double, double> elapsed() const { return {static_cast<double>(wall.nsecsElapsed()) / 1e6, threadCpuMs() - cpu0}; }
};

struct Series {
    std::vector<double> wall, cpu;
    double firstWall = 0, firstCpu = 0;
    void add(std::pair<double, double> v, bool isFirst) {
        if (isFirst) {
            firstWall = v.first;
            firstCpu = v.second;
        } else {
            wall.push_back(v.first);
            cpu.push_back(v.second);
        }
    }
};

double quantile(std::vector<double> v, double q) {
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    const auto i = static_cast<std::size_t>(q * static_cast<double>(v.size() - 1) + 0.5);
    return v[std::min(i, v.size() - 1)];
}

long rssKiB() {
    QFile f(QStringLiteral("/proc/self/status"));
    if (!f.open(QIODevice::ReadOnly)) return -1;
    for (const QByteArray& line : f.readAll().split('\n'))
        if (line.startsWith("VmRSS:")) return line.mid(6).trimmed().split(' ').first().toLong();
    return -1;
}

// What PollWorker::tick() does with a snapshot before it is handed to the GUI thread.
PollResultPtr diff(monitor::HoldTracker& holds, monitor::WaitTracker& waits, monitor::Snapshot snap, quint64 generation) {
    auto snapshot = std::make_shared<monitor::Snapshot>(std::move(snap));
    holds.update(*snapshot);
    waits.update(*snapshot);
    auto out = std::make_shared<PollResult>();
    for (const auto& [key, hold] : holds.open()) out->held_since.emplace(key, hold.start);
    out->finished = holds.take_finished();
    out->finished_waits = waits.take_finished();
    out->snapshot = std::move(snapshot);
    out->generation = generation;
    // The window's default thresholds (AppSettings' defaults are SummaryThresholds'), as the
    // window hands them to its poller.
    storeSummary(*out, SummaryThresholds{});
    return out;
}

}  // namespace

int main(int argc, char** argv) {
    // Settings, the catalog and history files go to a scratch directory, never the user's.
    QTemporaryDir scratch;
    qputenv("XDG_DATA_HOME", (scratch.path() + QStringLiteral("/data")).toUtf8());
    qputenv("XDG_CONFIG_HOME", (scratch.path() + QStringLiteral("/config")).toUtf8());
    if (!qEnvironmentVariableIsSet("QT_QPA_PLATFORM")) qputenv("QT_QPA_PLATFORM", "offscreen");
    QApplication app(argc, argv);
    QApplication::setApplicationName(QStringLiteral("lockscope_bench_merge"));

    QCommandLineParser cli;
    cli.setApplicationDescription(QStringLiteral("Times the GUI-thread work of each poll at N locks (no server)."));
    cli.addHelpOption();
    const QCommandLineOption pollsOpt(QStringLiteral("polls"), QStringLiteral("Polls to time (default 200)."), QStringLiteral("N"), QStringLiteral("200"));
    const QCommandLineOption locksOpt(QStringLiteral("locks"), QStringLiteral("Locks per snapshot (default 10000)."), QStringLiteral("N"), QStringLiteral("10000"));
    const QCommandLineOption sessionsOpt(QStringLiteral("sessions"), QStringLiteral("Holder sessions (default 100)."), QStringLiteral("N"), QStringLiteral("100"));
    const QCommandLineOption waitersOpt(QStringLiteral("waiters"), QStringLiteral("Waiting sessions (default 200)."), QStringLiteral("N"), QStringLiteral("200"));
    const QCommandLineOption catOpt(QStringLiteral("catalogued"), QStringLiteral("Fraction of lock names in the catalog (default 0.5)."),
                                    QStringLiteral("F"), QStringLiteral("0.5"));
    const QCommandLineOption noWindowOpt(QStringLiteral("no-window"), QStringLiteral("Time the standalone models only."));
    const QCommandLineOption noProxyOpt(QStringLiteral("no-proxy"),
                                        QStringLiteral("Time the standalone locks model without the sort/filter proxy."));
    const QCommandLineOption changeOpt(QStringLiteral("change"), QStringLiteral("Fraction of locks changing holder or mode per poll (default 0.01)."),
                                       QStringLiteral("F"), QStringLiteral("0.01"));
    const QCommandLineOption churnOpt(QStringLiteral("churn"), QStringLiteral("Fraction of locks released and replaced per poll (default 0.01)."),
                                      QStringLiteral("F"), QStringLiteral("0.01"));
    const QCommandLineOption tabOpt(QStringLiteral("tab"),
                                    QStringLiteral("The window's tab during the polls, as lockscope --tab (default locks)."),
                                    QStringLiteral("TAB"), QStringLiteral("locks"));
    const QCommandLineOption stageOpt(QStringLiteral("stage-rows"),
                                      QStringLiteral("The window's StagedSnapshotFeeder: most lock rows added per turn (0: no staging)."),
                                      QStringLiteral("N"), QString::number(StagedSnapshotFeeder::defaultMaxAddedPerTurn));
    const QCommandLineOption turnsOpt(QStringLiteral("print-turns"), QStringLiteral("Print each event-loop turn of the first poll."));
    cli.addOptions({pollsOpt, locksOpt, sessionsOpt, waitersOpt, catOpt, changeOpt, churnOpt, noWindowOpt, noProxyOpt, tabOpt, stageOpt, turnsOpt});
    cli.process(app);

    bench::GeneratorConfig config;
    config.locks = cli.value(locksOpt).toInt();
    config.sessions = std::max(1, cli.value(sessionsOpt).toInt());
    config.waiters = cli.value(waitersOpt).toInt();
    config.changeFraction = cli.value(changeOpt).toDouble();
    config.churnFraction = cli.value(churnOpt).toDouble();
    const int polls = std::max(1, cli.value(pollsOpt).toInt());
    const bool withWindow = !cli.isSet(noWindowOpt);
    const bool printTurns = cli.isSet(turnsOpt);

    // The catalog knows a fraction of the names (the rest show as "unknown", as in real life).
    CatalogStore catalog(scratch.path() + QStringLiteral("/catalog.sqlite"));
    {
        const QString list = scratch.path() + QStringLiteral("/names.txt");
        QFile f(list);
        if (!f.open(QIODevice::WriteOnly)) return 1;
        const auto known = static_cast<std::int64_t>(cli.value(catOpt).toDouble() * config.locks * 1.2);
        for (std::int64_t i = 0; i < known; i += 1) {
            if (i % 2 == 0 || known >= config.locks) f.write(QByteArray::fromStdString(bench::SnapshotGenerator::nameOf(i)) + '\n');
        }
        f.close();
        const auto report = catalog.importText(list);
        if (!report.ok()) {
            std::fprintf(stderr, "catalog import failed\n");
            return 1;
        }
    }
    CatalogNameCache names;
    names.setSnapshot(CatalogSnapshot::load(catalog));  // what the window gets from CatalogService

    monitor::HoldTracker holds;
    monitor::WaitTracker waits;
    PollResultPtr latest;
    LocksModel model;
    // The window's naming rule (MainWindow::nameOf), minus the locks taken by hand in the app and
    // the names remembered from holders.
    const LockNamer namer = [&names](const monitor::LockId& id, std::int64_t key, const std::optional<monitor::HolderName>& current) {
        NameFacts facts;
        if (id.form == monitor::KeyForm::bigint) facts.catalog = names.names(key);
        facts.holder = current;
        return decideLockName(id, key, facts);
    };
    model.setNamer(namer);
    model.setHeldSinceProvider([&latest](const monitor::LockId& lock, int pid) -> std::optional<double> {
        return latest ? latest->heldSince(lock, pid) : std::nullopt;
    });
    LocksFilterProxy proxy;
    if (!cli.isSet(noProxyOpt)) proxy.setSourceModel(&model);
    proxy.sort(LocksModel::Name, Qt::AscendingOrder);  // the window's default order
    charts::TimelineModel timeline;
    timeline.setNamer(namer);
    charts::HoldStatsModel stats;
    stats.setNamer(namer);
    history::HistoryRecorder recorder;
    recorder.setNamer(namer);
    recorder.open(scratch.path() + QStringLiteral("/history.sqlite"));

    // A shown timeline over the standalone model, refreshed after every poll (the "chart" step).
    charts::TimelineChart chart(&timeline);
    chart.resize(1400, 800);
    chart.show();

    std::unique_ptr<MainWindow> window;
    if (withWindow) {
        window = std::make_unique<MainWindow>(catalog);
        window->show();
        window->showTab(cli.value(tabOpt));
        window->historyRecorder().open(scratch.path() + QStringLiteral("/history-window.sqlite"));
        const int stageRows = cli.value(stageOpt).toInt();
        window->locksFeeder().setMaxAddedPerTurn(stageRows > 0 ? stageRows : std::numeric_limits<int>::max());
        QApplication::processEvents();
    }

    bench::SnapshotGenerator gen(config);
    std::map<std::string, Series> series;
    const char* order[] = {"diff", "model", "diff+model", "timeline", "stats", "history", "gui", "chart", "window", "events", "turn"};
    const long rssBefore = rssKiB();
    Stopwatch t;
    std::size_t rows = 0, waiting = 0;
    for (int i = 0; i <= polls; ++i) {
        const bool first = i == 0;
        monitor::Snapshot snap = gen.next();
        t.start();
        const PollResultPtr result = diff(holds, waits, std::move(snap), 1);
        series["diff"].add(t.elapsed(), first);
        latest = result;

        std::pair<double, double> gui{0, 0};
        const auto step = [&](const char* name, auto&& work) {
            t.start();
            work();
            const auto ms = t.elapsed();
            gui.first += ms.first;
            gui.second += ms.second;
            series[name].add(ms, first);
        };
        step("model", [&] { model.applySnapshot(result->snapshot); });
        // The client-side budget of a poll (16 ms at 10k rows) is for these two together; the p95
        // of the sum is not the sum of the p95s.
        const Series& d = series["diff"];
        const Series& m = series["model"];
        series["diff+model"].add(first ? std::pair{d.firstWall + m.firstWall, d.firstCpu + m.firstCpu}
                                       : std::pair{d.wall.back() + m.wall.back(), d.cpu.back() + m.cpu.back()},
                                 first);
        step("timeline", [&] { timeline.addPoll(*result); });
        step("stats", [&] { stats.addPoll(*result); });
        step("history", [&] { recorder.record(result); });
        series["gui"].add(gui, first);
        t.start();
        chart.refreshNow();
        series["chart"].add(t.elapsed(), first);
        if (window) {
            t.start();
            emit window->poller().resultReady(result);
            auto turn = t.elapsed();
            series["window"].add(turn, first);
            std::pair<double, double> events{0, 0};
            // Until the locks view has the whole snapshot; then one more turn for the charts' feed
            // and the views' layout and paint.
            int extra = 0;
            for (int guard = 0; guard < 1000 && extra >= 0; ++guard) {
                if (!window->locksFeeder().staging()) --extra;
                t.start();
                QApplication::processEvents();
                const auto ms = t.elapsed();
                events.first += ms.first;
                events.second += ms.second;
                turn.first = std::max(turn.first, ms.first);
                turn.second = std::max(turn.second, ms.second);
                if (first && printTurns) std::printf("turn %d: %.2f ms CPU, %d rows\n", guard, ms.second, window->locksModel().rowCount());
            }
            series["events"].add(events, first);
            series["turn"].add(turn, first);
        } else {
            QApplication::processEvents();
        }
        rows = static_cast<std::size_t>(model.rowCount());
        waiting = 0;
        for (const auto& e : result->snapshot->locks) waiting += e.waiters.size();
    }

    std::printf("lockscope_bench_merge: %d polls of %zu locks (%zu waiting sessions), %d%% changed and %d%% replaced per poll\n",
                polls, rows, waiting, static_cast<int>(config.changeFraction * 100), static_cast<int>(config.churnFraction * 100));
    std::printf("proxy rows %d, timeline lanes %d (%zu finished bars), hold-stats rows %d\n", proxy.rowCount(), timeline.laneCount(),
                timeline.finishedBarCount(), stats.rowCount());
    const auto maxOf = [](const std::vector<double>& v) { return v.empty() ? 0.0 : *std::max_element(v.begin(), v.end()); };
    std::printf("%-10s | %-37s | %-37s\n", "ms", "wall: first, median, p95, max", "thread CPU: first, median, p95, max");
    for (const char* name : order) {
        const auto it = series.find(name);
        if (it == series.end()) continue;
        const Series& s = it->second;
        std::printf("%-10s | %8.2f %8.2f %8.2f %8.2f  | %8.2f %8.2f %8.2f %8.2f\n", name, s.firstWall, quantile(s.wall, 0.5),
                    quantile(s.wall, 0.95), maxOf(s.wall), s.firstCpu, quantile(s.cpu, 0.5), quantile(s.cpu, 0.95), maxOf(s.cpu));
    }
    std::printf("RSS %ld KiB before the polls, %ld KiB after\n", rssBefore, rssKiB());
    return 0;
}
