// The charts: bucket and quantile maths, the two chart models fed with hand-built poll results
// (watched by QAbstractItemModelTester), the timeline's lane order by name through polls that add
// and drop lanes, the main window feeding the charts after the locks model, and the charts panel
// rendered offscreen with a large workload, timed and exported to PNG.
#include <QAbstractItemModelTester>
#include <QAbstractAxis>
#include <QApplication>
#include <QChart>
#include <QChartView>
#include <QLabel>
#include <QElapsedTimer>
#include <QImage>
#include <QTabWidget>
#include <QTemporaryDir>
#include <QtTest>

#include <cmath>
#include <limits>
#include <random>

#include "charts/charts_panel.hpp"
#include "charts/hold_histogram_math.hpp"
#include "charts/hold_stats_model.hpp"
#include "charts/timeline_bars_item.hpp"
#include "charts/timeline_model.hpp"
#include "models/locks_model.hpp"
#include "stores/catalog_store.hpp"
#include "theme/app_palette.hpp"
#include "widgets/main_window.hpp"

using namespace lockscope;
using namespace lockscope::charts;
using namespace pglock::monitor;

namespace {

constexpr double kT0 = 1'700'000'000.0;
constexpr double kInf = std::numeric_limits<double>::infinity();

Hold finishedHold(std::int64_t key, int pid, double start, double end, std::string app = "svc") {
    Hold h;
    h.lock = bigintLockId(key);
    h.key = key;
    h.pid = pid;
    h.start = start;
    h.end = end;
    h.application_name = std::move(app);
    h.usename = "alice";
    return h;
}

// A poll result as the poller builds it: the snapshot (holders and waiters), held_since for every
// holder, and the holds that ended.
struct PollBuilder {
    Snapshot snap;
    std::map<std::pair<LockId, int>, double> since;
    std::vector<Hold> finished;

    explicit PollBuilder(double now) {
        snap.server_version = 150000;
        snap.server_now = now;
    }
    PollBuilder& hold(std::int64_t key, int pid, double start, int waiters = 0, bool shared = false) {
        auto it = std::find_if(snap.locks.begin(), snap.locks.end(), [key](const LockEntry& e) { return e.key == key; });
        if (it == snap.locks.end()) {
            LockEntry e;
            e.key = key;
            e.tag = pglock::tag_of(key);
            snap.locks.push_back(e);
            it = snap.locks.end() - 1;
        }
        it->holders.push_back({pid, shared});
        for (int w = 0; w < waiters; ++w) it->waiters.push_back({pid + 1000 + w, false, snap.server_now, {pid}});
        since[{bigintLockId(key), pid}] = start;
        Backend b;
        b.pid = pid;
        b.application_name = "svc-" + std::to_string(pid % 7);
        b.usename = "alice";
        snap.backends[pid] = b;
        return *this;
    }
    PollBuilder& ended(Hold h) {
        finished.push_back(std::move(h));
        return *this;
    }
    PollResultPtr make(quint64 generation = 1) const {
        auto r = std::make_shared<PollResult>();
        r->snapshot = std::make_shared<const Snapshot>(snap);
        r->held_since = since;
        r->finished = finished;
        r->generation = generation;
        return r;
    }
};

BucketCounts counts(std::initializer_list<std::pair<std::size_t, double>> nonZero) {
    BucketCounts c{};
    for (auto [i, v] : nonZero) c[i] = v;
    return c;
}

// Every lane's rows agree with its bars, and the totals with the caps.
void verifyTimeline(const TimelineModel& m) {
    std::size_t finished = 0;
    for (int r = 0; r < m.laneCount(); ++r) {
        const auto& lane = m.laneAt(r);
        QCOMPARE(m.rowCount(m.index(r, 0)), static_cast<int>(lane.barCount()));
        QVERIFY(lane.barCount() > 0);  // empty lanes go away
        QVERIFY(lane.finished.size() <= m.limits().maxBarsPerLane);
        finished += lane.finished.size();
        if (r > 0) QVERIFY(m.laneAt(r - 1).id < lane.id);
    }
    QCOMPARE(finished, m.finishedBarCount());
    QVERIFY(finished <= m.limits().maxBars);
}

// lanesByLabel() is every lane, in the order a full sort by QString::localeAwareCompare (then
// LockId) gives: what the chart used to compute at every refresh.
void verifyLabelOrder(TimelineModel& m) {
    const std::vector<const TimelineModel::Lane*> order = m.lanesByLabel();
    QCOMPARE(m.unlabelledCount(), std::size_t{0});
    QCOMPARE(order.size(), static_cast<std::size_t>(m.laneCount()));
    std::vector<const TimelineModel::Lane*> expected;
    for (int r = 0; r < m.laneCount(); ++r) expected.push_back(&m.laneAt(r));
    std::sort(expected.begin(), expected.end(), [](const TimelineModel::Lane* a, const TimelineModel::Lane* b) {
        const int c = QString::localeAwareCompare(a->label, b->label);
        return c != 0 ? c < 0 : a->id < b->id;
    });
    for (std::size_t i = 0; i < order.size(); ++i) {
        if (order[i] != expected[i])
            QFAIL(qPrintable(QStringLiteral("lane %1: \"%2\", expected \"%3\"").arg(i).arg(order[i]->label, expected[i]->label)));
    }
}

// Names that sort differently by locale than by code point: case, accents, digits, punctuation.
std::optional<QByteArray> mixedName(std::int64_t key, int variant) {
    static const char* const words[] = {"alpha", "Alpha", "beta", "Beta", "\xc3\xa9" "clair", "eclair", "Zulu", "zulu",
                                        "delta-10", "delta-9", "_under", "10", "9", "\xc3\x84rger", "arg"};
    // Unsigned: a negative key would make a negative index (UBSan: index -5 out of bounds).
    const auto k = static_cast<std::uint64_t>(key) + static_cast<std::uint64_t>(variant);
    if (k % 6 == 0) return std::nullopt;  // unknown: the label is the decimal key
    return QByteArray(words[(static_cast<std::uint64_t>(key) * 7 + static_cast<std::uint64_t>(variant)) % 15]) +
           (key % 3 == 0 ? "" : "." + QByteArray::number(key % 97));
}

}  // namespace

class TestCharts : public QObject {
    Q_OBJECT

private slots:
    void initTestCase() {
        // A locale whose collation is not code point order, before any collator is made.
        QLocale::setDefault(QLocale(QLocale::English, QLocale::UnitedStates));
        QStandardPaths::setTestModeEnabled(true);  // the main window's settings go to a scratch place
    }

    void bucketsUseLeSemantics() {
        QCOMPARE(bucketOf(0.001), std::size_t{0});  // exactly on the bound: that bucket
        QCOMPARE(bucketOf(0.0010001), std::size_t{1});
        QCOMPARE(bucketOf(0), std::size_t{0});
        QCOMPARE(bucketOf(-2), std::size_t{0});
        QCOMPARE(bucketOf(1), std::size_t{5});
        QCOMPARE(bucketOf(600), std::size_t{9});
        QCOMPARE(bucketOf(600.5), kOverflowBucket);
        QCOMPARE(bucketOf(std::nan("")), kOverflowBucket);
        QCOMPARE(kBucketCount, std::size_t{11});
        QCOMPARE(bucketLabel(0), QStringLiteral("≤1ms"));
        QCOMPARE(bucketLabel(3), QStringLiteral("≤100ms"));
        QCOMPARE(bucketLabel(5), QStringLiteral("≤1s"));
        QCOMPARE(bucketLabel(9), QStringLiteral("≤600s"));
        QCOMPARE(bucketLabel(kOverflowBucket), QStringLiteral(">600s"));
    }

    void scrapedCumulativeBecomesPerBucket() {
        // The library's own bounds, shuffled as a scraper might hand them over, with +Inf.
        const std::vector<double> le{0.005, 0.001, kInf, 0.025, 0.1, 0.5, 1, 5, 30, 120, 600};
        const std::vector<double> cum{3, 1, 20, 3, 7, 7, 10, 10, 10, 10, 18};
        QCOMPARE(perBucketFromCumulative(le, cum, 20), counts({{0, 1}, {1, 2}, {3, 4}, {5, 3}, {9, 8}, {10, 2}}));
        // No +Inf bucket: _count supplies it.
        const std::vector<double> le2{0.001, 1};
        const std::vector<double> cum2{2, 5};
        QCOMPARE(perBucketFromCumulative(le2, cum2, 9), counts({{0, 2}, {5, 3}, {10, 4}}));
        // Bounds written differently ("1e-3") still land on ours; foreign bounds go to the bucket
        // holding their upper bound; a dip (an endpoint restarted) counts as zero, not negative.
        const std::vector<double> le3{1e-3, 0.002, 0.004, 0.5, kInf};
        const std::vector<double> cum3{4, 6, 5, 9, 9};
        QCOMPARE(perBucketFromCumulative(le3, cum3, 9), counts({{0, 4}, {1, 2}, {4, 3}}));
        QCOMPARE(perBucketFromCumulative({}, {}, 0), BucketCounts{});
    }

    void quantilesInterpolateInsideBuckets() {
        QVERIFY(!estimateQuantile(BucketCounts{}, 0.5));
        // 100 holds in (0.5, 1]: the median is in the middle of that bucket.
        QCOMPARE(*estimateQuantile(counts({{5, 100}}), 0.5), 0.75);
        // The first bucket starts at 0.
        QCOMPARE(*estimateQuantile(counts({{0, 10}}), 0.5), 0.0005);
        // 90 fast, 10 slow: p50 among the fast, p99 among the slow.
        const auto mixed = counts({{1, 90}, {7, 10}});
        QCOMPARE(*estimateQuantile(mixed, 0.5), 0.001 + 0.004 * (50.0 / 90.0));
        QCOMPARE(*estimateQuantile(mixed, 0.9), 0.005);
        QCOMPARE(*estimateQuantile(mixed, 0.99), 5 + 25 * 0.9);
        // In the overflow bucket all we know is "more than 600 s".
        QCOMPARE(*estimateQuantile(counts({{10, 3}}), 0.5), 600.0);
        QCOMPARE(*estimateQuantile(counts({{2, 1}, {4, 1}}), 0.0), 0.005);
    }

    void holdStatsModelCountsFinishedHolds() {
        HoldStatsModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        QSignalSpy resets(&model, &QAbstractItemModel::modelReset);
        const QByteArray odd("bad\0name\xff\n", 10);
        model.setNamer(lockscope::catalogNamer([&](std::int64_t key) -> std::optional<QByteArray> {
            if (key == 7) return QByteArray("orders.daily-rollup");
            if (key == 9) return odd;
            return std::nullopt;
        }));
        // Small epoch values keep the subtraction exact enough for the boundary (a 1 ms hold at
        // 1.7e9 s would differ from 0.001 in the last bits).
        PollBuilder p1(1000);
        p1.ended(finishedHold(7, 10, 1000.0, 1000.001)).ended(finishedHold(7, 11, 1000.0, 1000.5)).ended(finishedHold(5, 12, 0, 700));
        model.addPoll(*p1.make());
        QCOMPARE(model.rowCount(), 2);
        const int row7 = model.rowOfLock(bigintLockId(7));
        QCOMPARE(model.index(row7, HoldStatsModel::Name).data().toString(), QStringLiteral("orders.daily-rollup"));
        QCOMPARE(model.index(row7, HoldStatsModel::Count).data().toULongLong(), 2ull);
        QCOMPARE(model.index(row7, HoldStatsModel::FirstBucket + 0).data().toULongLong(), 1ull);
        QCOMPARE(model.index(row7, HoldStatsModel::FirstBucket + 4).data().toULongLong(), 1ull);
        QCOMPARE(model.statsAt(row7).max, 0.5);
        const int row5 = model.rowOfLock(bigintLockId(5));
        QCOMPARE(model.index(row5, HoldStatsModel::Name).data().toString(), QStringLiteral("(unknown) 5"));
        QCOMPARE(model.statsAt(row5).observed[kOverflowBucket], 1.0);

        // A name with NUL, a non-UTF-8 byte and a newline is shown escaped, never raw.
        PollBuilder p2(1001);
        p2.ended(finishedHold(9, 13, 1000, 1001));
        model.addPoll(*p2.make());
        const QString shown = model.index(model.rowOfLock(bigintLockId(9)), HoldStatsModel::Name).data().toString();
        QCOMPARE(shown, QStringLiteral("bad\\x00name\\xff\\n"));

        // Scraped data arrives for a name the monitor never saw end: a new row with both sources.
        const QByteArray name("payments.settle");
        const std::int64_t key = pglock::key_of("payments.settle");
        model.setScrapedHistogram(name, {0.001, 0.005, kInf}, {4, 6, 7}, 0.02, 7);
        const int rowP = model.rowOfLock(bigintLockId(key));
        QVERIFY(rowP >= 0);
        QCOMPARE(model.index(rowP, HoldStatsModel::Name).data().toString(), QStringLiteral("payments.settle"));
        QCOMPARE(model.index(rowP, HoldStatsModel::FirstBucket + 1).data(HoldStatsModel::ScrapedBucketRole).toDouble(), 2.0);
        QCOMPARE(model.index(rowP, HoldStatsModel::ScrapedCount).data().toDouble(), 7.0);
        QVERIFY(model.hasScraped());
        QCOMPARE(model.scrapedTotal()[kOverflowBucket], 1.0);
        model.clearScrapedHistograms();
        QCOMPARE(model.rowOfLock(bigintLockId(key)), -1);  // it had nothing else
        QCOMPARE(model.rowCount(), 3);
        QCOMPARE(resets.count(), 0);  // incremental throughout
        QCOMPARE(model.observedTotal()[0], 1.0);
    }

    // A server taking locks on ever new keys: the rows stay under the cap, the oldest go first,
    // the "all locks" totals keep every hold, and it is all incremental (no reset).
    void holdStatsModelIsBounded() {
        HoldStatsModel model(100);
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        QSignalSpy resets(&model, &QAbstractItemModel::modelReset);
        model.setScrapedHistogram("payments.settle", {0.001, kInf}, {1, 1}, 0.0005, 1);  // scraped rows stay
        for (int i = 0; i < 500; ++i) {
            const double now = 1000 + i;
            model.addPoll(*PollBuilder(now).ended(finishedHold(10 + i, 100 + i, now - 0.5, now)).make());
            QVERIFY(static_cast<std::size_t>(model.rowCount()) <= model.maxRows());
        }
        QVERIFY(model.rowCount() >= 90);
        QVERIFY(model.rowOfLock(bigintLockId(10 + 499)) >= 0);  // the newest stays
        QCOMPARE(model.rowOfLock(bigintLockId(10)), -1);        // the oldest went
        QVERIFY(model.rowOfLock(bigintLockId(pglock::key_of("payments.settle"))) >= 0);
        double total = 0;
        for (double c : model.observedTotal()) total += c;
        QCOMPARE(total, 500.0);
        QCOMPARE(resets.count(), 0);
        for (int r = 1; r < model.rowCount(); ++r) QVERIFY(model.statsAt(r - 1).id < model.statsAt(r).id);
    }

    void timelineFollowsHolds() {
        TimelineModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        QSignalSpy resets(&model, &QAbstractItemModel::modelReset);
        model.addPoll(*PollBuilder(kT0).hold(1, 10, kT0 - 5, 2).hold(2, 20, kT0, 0, true).make());
        QCOMPARE(model.laneCount(), 2);
        const int lane1 = model.rowOfLane(bigintLockId(1));
        QCOMPARE(model.laneAt(lane1).open.size(), std::size_t{1});
        QCOMPARE(model.index(0, TimelineModel::End, model.index(lane1, 0)).data().toString(), QStringLiteral("open"));
        QCOMPARE(model.index(0, TimelineModel::Pid, model.index(lane1, 0)).data().toInt(), 10);
        QCOMPARE(model.index(0, TimelineModel::Application, model.index(lane1, 0)).data().toString(), QStringLiteral("svc-3"));
        QCOMPARE(model.endOf(model.laneAt(lane1).open[0]), kT0);

        // pid 10 lets go (the tracker reports the finished hold), pid 11 takes it; lock 2 goes on.
        PollBuilder p2(kT0 + 1);
        p2.hold(1, 11, kT0 + 1).hold(2, 20, kT0, 0, true).ended(finishedHold(1, 10, kT0 - 5, kT0 + 1));
        QSignalSpy inserted(&model, &QAbstractItemModel::rowsInserted);
        model.addPoll(*p2.make());
        const auto& lane = model.laneAt(model.rowOfLane(bigintLockId(1)));
        QCOMPARE(lane.finished.size(), std::size_t{1});
        QCOMPARE(lane.finished[0].end, kT0 + 1);
        QCOMPARE(lane.open.size(), std::size_t{1});
        QCOMPARE(lane.open[0].pid, 11);
        QCOMPARE(inserted.count(), 2);  // the finished bar and pid 11's bar; nothing rebuilt
        verifyTimeline(model);

        // A hold that vanished without a finished record (tracker trimmed it) still ends.
        model.addPoll(*PollBuilder(kT0 + 2).hold(1, 11, kT0 + 1).make());
        QCOMPARE(model.laneAt(model.rowOfLane(bigintLockId(2))).open.size(), std::size_t{0});
        QCOMPARE(model.laneAt(model.rowOfLane(bigintLockId(2))).finished.back().end, kT0 + 2);

        // Waiters over time: one sample per poll, the total of waiting sessions.
        const auto& w = model.waiterSeries();
        QCOMPARE(w.size(), std::size_t{3});
        QCOMPARE(w[0].waiters, 2);
        QCOMPARE(w[1].waiters, 0);
        QCOMPARE(w[2].time, kT0 + 2);
        QCOMPARE(resets.count(), 0);
        verifyTimeline(model);
    }

    void timelineTrimsByAgeAndCaps() {
        TimelineModel::Limits limits;
        limits.maxAgeSeconds = 100;
        limits.maxBarsPerLane = 4;
        limits.maxBars = 10;
        limits.maxWaiterSamples = 5;
        TimelineModel model(limits);
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        double now = kT0;
        // 30 short holds on lane 1: the lane keeps its newest 4.
        for (int i = 0; i < 30; ++i) {
            now += 1;
            model.addPoll(*PollBuilder(now).ended(finishedHold(1, 100 + i, now - 0.5, now)).make());
        }
        QCOMPARE(model.laneAt(0).finished.size(), std::size_t{4});
        QCOMPARE(model.laneAt(0).finished.front().pid, 126);
        QCOMPARE(model.waiterSeries().size(), std::size_t{5});
        verifyTimeline(model);
        // Holds on 5 more lanes: the total cap (10) drops the oldest-ended first, across lanes.
        for (int i = 0; i < 10; ++i) {
            now += 1;
            model.addPoll(*PollBuilder(now).ended(finishedHold(2 + i % 5, 200 + i, now - 0.5, now)).make());
        }
        QCOMPARE(model.finishedBarCount(), std::size_t{10});
        QCOMPARE(model.rowOfLane(bigintLockId(1)), -1);  // its bars were the oldest: lane gone
        verifyTimeline(model);
        // An open hold survives the age limit; finished bars older than 100 s go.
        model.addPoll(*PollBuilder(now + 1).hold(9, 900, now + 1).make());
        model.addPoll(*PollBuilder(now + 500).hold(9, 900, now + 1).make());
        QCOMPARE(model.laneCount(), 1);
        QCOMPARE(model.laneAt(0).open.size(), std::size_t{1});
        QCOMPARE(model.finishedBarCount(), std::size_t{0});
        QCOMPARE(model.waiterSeries().size(), std::size_t{1});  // the older samples aged out
        // A finished hold that is already too old is not drawn at all.
        model.addPoll(*PollBuilder(now + 501).hold(9, 900, now + 1).ended(finishedHold(3, 5, now, now + 2)).make());
        QCOMPARE(model.rowOfLane(bigintLockId(3)), -1);
        verifyTimeline(model);
        model.clear();
        QCOMPARE(model.laneCount(), 0);
        QCOMPARE(model.latestTime(), 0.0);
    }

    void histogramShowsBothSources() {
        ChartsPanel panel;
        panel.resize(1000, 600);
        PollBuilder p(1000);
        for (int i = 0; i < 10; ++i) p.ended(finishedHold(7, 10 + i, 1000, 1000.3));
        panel.addPoll(p.make());
        auto* chart = panel.histogramChart();
        chart->refreshNow();
        QCOMPARE(chart->barSetLabels().size(), 1);
        QVERIFY(chart->barSetLabels().at(0).startsWith(QStringLiteral("monitor")));
        QCOMPARE(chart->barValues(0).at(4), 10.0);  // 0.3 s is in ≤500ms
        QVERIFY(chart->quantileText().contains(QStringLiteral("p50 300 ms")));
        panel.setScrapedHistograms({{QByteArray("jobs.nightly"), {0.1, 1, kInf}, {50, 90, 100}, 30, 100}});
        chart->refreshNow();
        QCOMPARE(chart->barSetLabels().size(), 2);
        QCOMPARE(chart->barValues(1).at(3), 50.0);
        QCOMPARE(chart->lockChoices().size(), 3);  // all, 7, jobs.nightly
        chart->selectLock(bigintLockId(pglock::key_of("jobs.nightly")));
        QCOMPARE(chart->barValues(0).at(4), 0.0);
        QCOMPARE(chart->barValues(1).at(5), 40.0);
        chart->setShowPercent(true);
        QCOMPARE(chart->barValues(1).at(3), 50.0);
        // A result from another connection starts over.
        panel.addPoll(PollBuilder(2000).make(2));
        QCOMPARE(panel.holdStatsModel()->rowCount(), 0);
    }

    // A name learned from a holder after a lane was drawn relabels that lane and its histogram
    // row in place (the label order kept), and only them; the memory keeps a verified name over a
    // cut one, outlives the holder, and is bounded.
    void namesLearnedFromHoldersRelabelOnlyTheirLanes() {
        HolderNames memory(2);
        const LockNamer namer = [&memory](const LockId& id, std::int64_t key, const std::optional<HolderName>& current) {
            NameFacts facts;
            facts.holder = current ? current : memory.find(key);
            return decideLockName(id, key, facts);
        };
        TimelineModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        HoldStatsModel stats;
        model.setNamer(namer);
        stats.setNamer(namer);
        const std::string name = "zz.learned";
        const std::int64_t key = pglock::key_of(name);
        const LockId id = bigintLockId(key);
        PollBuilder first(kT0);
        first.hold(key, 101, kT0 - 5).hold(5, 102, kT0 - 5).hold(6, 103, kT0 - 5).ended(finishedHold(key, 100, kT0 - 9, kT0 - 8));
        model.addPoll(*first.make());
        stats.addPoll(*first.make());
        const auto label = [&] { return model.index(model.rowOfLane(id), TimelineModel::Label).data().toString(); };
        QCOMPARE(label(), QStringLiteral("(unknown) %1").arg(key));
        verifyLabelOrder(model);

        QVERIFY(memory.learn(key, HolderName{"zz.lea", false, 101}));  // a cut name first
        QSignalSpy changed(&model, &QAbstractItemModel::dataChanged);
        model.relabel({key, 424242});  // a key without a lane changes nothing
        QCOMPARE(changed.count(), 1);
        QCOMPARE(label(), QChar(0x2068) + QStringLiteral("zz.lea") + QChar(0x2026) + QChar(0x2069) + QStringLiteral(" (from holder, cut)"));
        QVERIFY(memory.learn(key, HolderName{name, true, 101}));
        QVERIFY(!memory.learn(key, HolderName{"zz.lea", false, 102}));  // never back to a prefix
        model.relabel({key});
        stats.relabel({key});
        const QString expected = QChar(0x2068) + QString::fromStdString(name) + QChar(0x2069) + QStringLiteral(" (from holder)");
        QCOMPARE(label(), expected);
        QCOMPARE(stats.index(stats.rowOfLock(id), HoldStatsModel::Name).data().toString(), expected);
        QCOMPARE(model.index(model.rowOfLane(bigintLockId(5)), TimelineModel::Label).data().toString(), QStringLiteral("(unknown) 5"));
        verifyLabelOrder(model);

        // Bounded: two more keys push out the least recently learned one.
        QVERIFY(memory.learn(7, HolderName{"a", false, 1}));
        QVERIFY(memory.learn(8, HolderName{"b", false, 1}));
        QCOMPARE(memory.size(), std::size_t(2));
        QVERIFY(!memory.find(key));
    }

    void timelineKeepsLanesInLabelOrder() {
        TimelineModel::Limits limits;
        limits.maxAgeSeconds = 100;
        TimelineModel model(limits);
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        int variant = 0;
        model.setNamer(lockscope::catalogNamer([&variant](std::int64_t key) { return mixedName(key, variant); }));

        // A first poll of 600 locks (even keys): labelled in later event-loop turns, not in addPoll().
        const auto holdsFrom = [](PollBuilder& poll, int firstEven) {
            for (int k = firstEven; k <= 1200; k += 2) poll.hold(k, 100 + k % 40, kT0 - 10);
        };
        PollBuilder first(kT0);
        holdsFrom(first, 2);
        first.hold(-5, 99, kT0 - 10);  // a negative key: its label starts with a minus
        QVERIFY(600 > static_cast<int>(TimelineModel::kLabelChunk / 4));
        model.addPoll(*first.make());
        QCOMPARE(model.laneCount(), 601);
        QVERIFY(model.unlabelledCount() > 0);
        // Meanwhile the item model still names every lane.
        const int row8 = model.rowOfLane(bigintLockId(8));
        QCOMPARE(model.index(row8, TimelineModel::Label).data().toString(),
                 lockLabel(bigintLockId(8), 8, lockscope::catalogNamer([&variant](std::int64_t key) { return mixedName(key, variant); })));
        QTRY_COMPARE(model.unlabelledCount(), std::size_t{0});
        verifyLabelOrder(model);

        // Polls that add lanes between the existing ones (odd keys: many runs of new rows, merged
        // into the order at once) and end holds (their lanes stay, with a finished bar).
        for (int p = 1; p <= 5; ++p) {
            const double now = kT0 + p;
            PollBuilder poll(now);
            holdsFrom(poll, 2 + 80 * p);
            poll.hold(-5, 99, kT0 - 10);
            for (int k = 1; k <= 30; ++k) poll.hold(40 * k + 2 * p - 1, 500 + k, now);  // new, scattered
            for (int k = 2 + 80 * (p - 1); k < 2 + 80 * p; k += 2) poll.ended(finishedHold(k, 100 + k % 40, kT0 - 10, now));
            model.addPoll(*poll.make());
            QCOMPARE(model.unlabelledCount(), std::size_t{0});  // a few new lanes: labelled right away
            verifyLabelOrder(model);
            verifyTimeline(model);
        }
        QCOMPARE(model.laneCount(), 601 + 5 * 30);

        // The finished bars age out: their lanes go, from the middle of the order. Left: the 400
        // locks still held, and the 31 whose holds this poll ends (the last poll's new ones, -5).
        PollBuilder late(kT0 + 200);
        holdsFrom(late, 402);
        model.addPoll(*late.make());
        QCOMPARE(model.laneCount(), 400 + 31);
        verifyLabelOrder(model);

        // The catalog changed: every lane relabelled, the order rebuilt.
        variant = 1;
        model.refreshNames();
        verifyLabelOrder(model);
        verifyTimeline(model);
    }

    void windowFeedsChartsAfterTheModel() {
        QTemporaryDir dir;
        CatalogStore catalog(dir.filePath(QStringLiteral("catalog.sqlite")));
        QVERIFY(catalog.isOpen());
        MainWindow window(catalog);
        window.resize(1400, 800);
        window.show();
        window.showTab(QStringLiteral("timeline"));
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        TimelineModel* timeline = window.charts().timelineModel();

        PollBuilder p1(kT0);
        for (int k = 1; k <= 2000; ++k) p1.hold(k, 100 + k % 50, kT0 - 1);
        PollBuilder p2(kT0 + 1);
        for (int k = 2; k <= 2001; ++k) p2.hold(k, 100 + k % 50, kT0 - 1);
        p2.ended(finishedHold(1, 101, kT0 - 1, kT0 + 1));
        // Both arrive before the event loop runs: the locks model takes each at once, the charts
        // take them in later turns, both and in order (the hold that ended is in the second only).
        emit window.poller().resultReady(p1.make());
        QCOMPARE(window.locksModel().rowCount(), 2000);
        QCOMPARE(timeline->laneCount(), 0);
        emit window.poller().resultReady(p2.make());
        QCOMPARE(timeline->laneCount(), 0);
        QTRY_COMPARE(timeline->laneCount(), 2001);
        const auto& lane1 = timeline->laneAt(timeline->rowOfLane(bigintLockId(1)));
        QCOMPARE(lane1.open.size(), std::size_t{0});
        QCOMPARE(lane1.finished.size(), std::size_t{1});
        QCOMPARE(lane1.finished[0].end, kT0 + 1);
        QCOMPARE(window.charts().holdStatsModel()->rowCount(), 1);
        QCOMPARE(window.charts().holdStatsModel()->statsAt(0).count, 1.0);

        // The shown timeline lists the lanes by name: the first ones of the model's order.
        TimelineChart* chart = window.charts().timelineChart();
        chart->refreshNow();
        QCOMPARE(chart->laneTotal(), 2001);
        const QStringList shown = chart->visibleLaneLabels();
        QVERIFY(shown.size() >= 10);
        const auto& order = timeline->lanesByLabel();
        for (int i = 0; i < shown.size(); ++i) QCOMPARE(shown[i], order[static_cast<std::size_t>(i)]->label);
        verifyLabelOrder(*timeline);
    }

    // Twenty seconds watched: the axis covers them (and a little more), not 15 empty minutes.
    void timelineOpensOnWhatItHasSeen() {
        ChartsPanel panel;
        panel.resize(1400, 820);
        panel.show();
        panel.timelineChart()->setWindowSeconds(900);
        panel.addPoll(PollBuilder(kT0).hold(1, 100, kT0).make());
        panel.addPoll(PollBuilder(kT0 + 20).hold(1, 100, kT0).make());
        panel.timelineChart()->refreshNow();
        QCOMPARE(panel.timelineChart()->shownTo(), kT0 + 20);
        QVERIFY2(panel.timelineChart()->shownFrom() >= kT0 - 20,
                 qPrintable(QStringLiteral("shows from %1 s before the first poll").arg(kT0 - panel.timelineChart()->shownFrom())));
        QVERIFY(panel.timelineChart()->shownFrom() <= kT0);
        // Watched longer than the window: the window, as before.
        panel.addPoll(PollBuilder(kT0 + 1000).hold(1, 100, kT0).make());
        panel.timelineChart()->refreshNow();
        QCOMPARE(panel.timelineChart()->shownTo() - panel.timelineChart()->shownFrom(), 900.0);
    }

    void timelineRendersThousandsOfHolds() {
        ChartsPanel panel;
        panel.resize(1400, 820);
        panel.setNamer(lockscope::catalogNamer([](std::int64_t key) -> std::optional<QByteArray> {
            static const char* const kinds[] = {"orders", "payments", "search", "billing", "mail", "reports", "inventory", "auth"};
            static const char* const jobs[] = {"daily-rollup", "settle", "reindex", "sync", "export", "cleanup", "compact"};
            if (key % 10 == 3) return std::nullopt;  // some keys the catalog does not know
            return QByteArray(kinds[key % 8]) + '.' + jobs[(key / 8) % 7] + '-' + QByteArray::number(key);
        }));
        panel.show();
        QVERIFY(QTest::qWaitForWindowExposed(&panel));
        panel.timelineChart()->setWindowSeconds(900);

        // 5,000 finished holds over 200 lanes in the last 14 minutes, and a handful held now.
        const double now = kT0 + 3600;
        std::mt19937 rng(42);
        std::exponential_distribution<double> holdLength(0.25);
        std::uniform_real_distribution<double> when(now - 840, now - 1);
        PollBuilder big(now);
        for (int i = 0; i < 5000; ++i) {
            const double start = when(rng);
            const double end = std::min(now, start + 0.2 + holdLength(rng));
            big.ended(finishedHold(1000 + i % 200, 20000 + i, start, end, "svc-" + std::to_string(i % 9)));
        }
        for (int k = 0; k < 12; ++k) big.hold(1007 + k * 8, 40000 + k, now - 30 - 20 * k, k % 4, k % 5 == 0);
        // Some history for the waiters chart.
        for (int s = 0; s < 900; s += 5) {
            PollBuilder w(now - 900 + s);
            if ((s / 60) % 3 == 0) w.hold(1000, 30000 + s, now - 900 + s, 1 + (s / 5) % 4);
            panel.addPoll(w.make());
        }

        QElapsedTimer timer;
        timer.start();
        panel.addPoll(big.make());
        const qint64 addMs = timer.restart();
        panel.timelineChart()->refreshNow();
        const QPixmap frame = panel.grab();  // a full repaint of the panel with the timeline tab
        const qint64 paintMs = timer.elapsed();
        qInfo("addPoll of 5,000 holds over 200 lanes: %lld ms; refresh + repaint: %lld ms (%d merged rects)", addMs, paintMs,
              panel.timelineChart()->barsItem()->lastRectCount());
        QVERIFY(!frame.isNull());
        QVERIFY2(addMs + paintMs < 5000, "far slower than a poll interval");
        QCOMPARE(panel.timelineModel()->laneCount(), 200);
        QCOMPARE(panel.timelineChart()->laneTotal(), 200);
        QVERIFY(panel.timelineChart()->visibleLaneLabels().size() >= 10);
        QVERIFY(panel.timelineChart()->barsItem()->lastRectCount() > 100);

        // Hovering the middle of a drawn lane names a holder.
        const auto* bars = panel.timelineChart()->barsItem();
        const QRectF plot = panel.timelineChart()->chart()->plotArea();
        const double bandHeight = plot.height() / bars->layout().bandCount;
        QString tip;
        for (double x = plot.left() + 1; x < plot.right() && tip.isEmpty(); x += 2)
            tip = bars->toolTipAt(QPointF(x, plot.top() + bandHeight / 2));
        QVERIFY2(tip.contains(QStringLiteral("pid ")), qPrintable(tip));
        QVERIFY(tip.contains(QStringLiteral("held")));

        // A burst of polls costs one repaint.
        const int refreshes = panel.timelineChart()->refreshCount();
        for (int i = 1; i <= 5; ++i) {
            PollBuilder same(now + i * 0.01);  // the same sessions still hold their locks
            for (int k = 0; k < 12; ++k) same.hold(1007 + k * 8, 40000 + k, now - 30 - 20 * k, k % 4, k % 5 == 0);
            panel.addPoll(same.make());
        }
        QTRY_VERIFY(panel.timelineChart()->refreshCount() > refreshes);
        QTest::qWait(2 * TimelineChart::kRefreshMs);
        QCOMPARE(panel.timelineChart()->refreshCount(), refreshes + 1);

        QTemporaryDir dir;
        const QString png = dir.filePath(QStringLiteral("timeline.png"));
        QVERIFY(panel.timelineChart()->exportPng(png));
        QImage image(png);
        QVERIFY(!image.isNull());
        QCOMPARE(image.size(), panel.timelineChart()->exportedWidget()->size() * panel.devicePixelRatio());
        QVERIFY(QFileInfo(png).size() > 1000);
        const QString histogramPng = dir.filePath(QStringLiteral("histogram.png"));
        QVERIFY(panel.histogramChart()->exportPng(histogramPng));
        QVERIFY(!QImage(histogramPng).isNull());

        if (const QByteArray shot = qgetenv("LOCKSCOPE_CHART_SCREENSHOT"); !shot.isEmpty()) {
            const QString path = QString::fromLocal8Bit(shot);
            QVERIFY(panel.grab().save(path));
            panel.setScrapedHistograms({{QByteArray("payments.settle-1001"), {0.001, 0.005, 0.025, 0.1, 0.5, 1, 5, 30, 120, 600, kInf},
                                         {40, 300, 2200, 4100, 4700, 4800, 4830, 4840, 4840, 4840, 4840}, 900, 4840}});
            panel.tabs()->setCurrentIndex(1);
            panel.histogramChart()->refreshNow();
            QTest::qWait(50);  // let the new legend and text lay out
            QString second = path;
            second.replace(QStringLiteral(".png"), QStringLiteral("-histogram.png"));
            QVERIFY(panel.grab().save(second));
            qInfo("screenshots: %s %s", qPrintable(path), qPrintable(second));
        }
    }

    // In the dark theme the timeline draws with the palette: chart backgrounds, titles and axis
    // labels take its colours, the plot reads dark, and the legend shows the bars' own colours.
    // A theme switched while the chart is open applies too.
    void timelineDrawsWithThePalette() {
        theme::apply(theme::Mode::light);
        const auto restore = qScopeGuard([] { theme::apply(theme::Mode::system); });
        ChartsPanel panel;
        panel.resize(1400, 820);
        panel.show();
        QVERIFY(QTest::qWaitForWindowExposed(&panel));
        panel.addPoll(PollBuilder(kT0).hold(1, 100, kT0, 2).make());
        panel.addPoll(PollBuilder(kT0 + 30).hold(1, 100, kT0, 1).hold(2, 200, kT0 + 10, 0, true).make());
        theme::apply(theme::Mode::dark);
        QVERIFY(theme::isDark());
        panel.timelineChart()->refreshNow();
        QApplication::processEvents();

        const QPalette palette = QApplication::palette();
        TimelineChart* timeline = panel.timelineChart();
        for (QChart* chart : {timeline->chart(), timeline->waitersChart()}) {
            QCOMPARE(chart->backgroundBrush().color(), palette.color(QPalette::Base));
            QCOMPARE(chart->titleBrush().color(), palette.color(QPalette::Text));
            for (QAbstractAxis* axis : chart->axes()) {
                QCOMPARE(axis->labelsBrush().color(), palette.color(QPalette::Text));
                QCOMPARE(axis->titleBrush().color(), palette.color(QPalette::Text));
            }
        }
        const QImage image = timeline->exportedWidget()->grab().toImage();
        const QRectF plot = timeline->chart()->plotArea();
        const QColor inside = image.pixelColor(QPoint(static_cast<int>(plot.left()) + 3, static_cast<int>(plot.bottom()) - 3));
        QVERIFY2(inside.lightness() < 100, qPrintable(QStringLiteral("the plot area is %1 in the dark theme").arg(inside.name())));

        const auto* legend = timeline->findChild<QLabel*>(QStringLiteral("timelineLegend"));
        QVERIFY(legend);
        for (const auto ink : {theme::ChartInk::exclusive, theme::ChartInk::shared, theme::ChartInk::heldExclusive,
                               theme::ChartInk::heldShared})
            QVERIFY2(legend->text().contains(theme::chartInk(ink).name()), qPrintable(legend->text()));
    }

    // The waiting chart's plot area spans exactly the lanes' x range, so a time is at the same
    // pixel column in both: also with long lane names, and after a resize.
    void timelineWaitersShareTheLanesX() {
        ChartsPanel panel;
        panel.resize(1400, 820);
        panel.setNamer(lockscope::catalogNamer([](std::int64_t key) -> std::optional<QByteArray> {
            return QByteArray("orders.a-rather-long-lock-name-that-the-lane-axis-elides-") + QByteArray::number(key);
        }));
        panel.show();
        QVERIFY(QTest::qWaitForWindowExposed(&panel));
        for (int s = 0; s <= 60; s += 5) panel.addPoll(PollBuilder(kT0 + s).hold(1, 100, kT0, s % 3).hold(2, 200, kT0).make());
        TimelineChart* timeline = panel.timelineChart();
        // Both views start at one column of the exported area; their charts at the views' origin.
        const auto viewX = [timeline](QChart* chart) {
            const auto* view = qobject_cast<QChartView*>(chart->scene()->views().first());
            return view->viewport()->mapTo(timeline->exportedWidget(), QPoint(0, 0)).x() - view->mapFromScene(QPointF(0, 0)).x();
        };
        // Margins are whole pixels and label widths are not: the same column means within half a pixel.
        const auto sameColumns = [timeline] {
            const QRectF lanes = timeline->chart()->plotArea(), waiters = timeline->waitersChart()->plotArea();
            return std::abs(lanes.left() - waiters.left()) <= 0.5 && std::abs(lanes.right() - waiters.right()) <= 0.5;
        };
        const auto columns = [timeline] {
            const QRectF lanes = timeline->chart()->plotArea(), waiters = timeline->waitersChart()->plotArea();
            return QStringLiteral("lanes %1..%2, waiting %3..%4").arg(lanes.left()).arg(lanes.right()).arg(waiters.left()).arg(waiters.right());
        };
        for (const int width : {1400, 900}) {
            panel.resize(width, 820);
            timeline->refreshNow();
            QCOMPARE(viewX(timeline->waitersChart()), viewX(timeline->chart()));
            QTRY_VERIFY2(sameColumns(), qPrintable(columns()));
            QVERIFY(timeline->chart()->plotArea().width() > width / 2);
        }
    }
};

QTEST_MAIN(TestCharts)
#include "test_charts.moc"
