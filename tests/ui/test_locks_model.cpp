// LocksModel and LocksFilterProxy, fed with hand-built monitor snapshots (no server: this is the
// model's own logic). QAbstractItemModelTester watches the model and the proxy throughout; a
// recorder writes every signal as text ("+ K5", "- K2/w201", "~ K3 State") so that each test can
// say exactly which rows and cells a poll should touch, and nothing else.
#include <QAbstractItemModelTester>
#include <QElapsedTimer>
#include <QFont>
#include <QPersistentModelIndex>
#include <QSignalSpy>
#include <QIcon>
#include <QtTest>

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <vector>

#include "models/locks_filter_proxy.hpp"
#include "models/locks_model.hpp"
#include "theme/app_palette.hpp"
#include "locks_test_world.hpp"
#include "shown_text.hpp"

using lockscope::LocksFilterProxy;
using lockscope::LocksModel;
using namespace pglock::monitor;
using locks_test::World;

namespace {

using shown_text::shownToolTip;

const char* const kColumnNames[] = {"Name", "Key", "Mode", "Holders", "State", "Application", "User", "Client", "HeldFor", "Waiters"};
static_assert(std::size(kColumnNames) == LocksModel::ColumnCount);

QString rowName(const QModelIndex& idx) {
    QString name = QStringLiteral("K%1").arg(idx.data(LocksModel::KeyRole).toLongLong());
    if (idx.parent().isValid()) name += QStringLiteral("/w%1").arg(idx.data(LocksModel::PidsRole).value<QList<int>>().value(0));
    return name;
}

QString rowNames(const QAbstractItemModel* m, const QModelIndex& parent, int first, int last) {
    QStringList names;
    for (int r = first; r <= last; ++r) names << rowName(m->index(r, 0, parent));
    return names.join(QLatin1Char(' '));
}

// Every structural and data signal of a model, described at the moment it is emitted.
class Recorder : public QObject {
public:
    explicit Recorder(QAbstractItemModel* m) {
        connect(m, &QAbstractItemModel::rowsInserted, this, [this, m](const QModelIndex& p, int a, int b) {
            log << QStringLiteral("+ ") + rowNames(m, p, a, b);
        });
        connect(m, &QAbstractItemModel::rowsAboutToBeRemoved, this, [this, m](const QModelIndex& p, int a, int b) {
            log << QStringLiteral("- ") + rowNames(m, p, a, b);
        });
        connect(m, &QAbstractItemModel::dataChanged, this, [this, m](const QModelIndex& tl, const QModelIndex& br) {
            QString cols = QString::fromLatin1(kColumnNames[tl.column()]);
            if (br.column() != tl.column()) cols += QLatin1Char('-') + QString::fromLatin1(kColumnNames[br.column()]);
            log << QStringLiteral("~ ") + rowNames(m, tl.parent(), tl.row(), br.row()) + QLatin1Char(' ') + cols;
        });
        connect(m, &QAbstractItemModel::modelReset, this, [this] { log << QStringLiteral("RESET"); });
        connect(m, &QAbstractItemModel::layoutChanged, this, [this] { log << QStringLiteral("LAYOUT"); });
        connect(m, &QAbstractItemModel::rowsMoved, this, [this] { log << QStringLiteral("MOVED"); });
    }
    QStringList take() { return std::exchange(log, {}); }
    QStringList log;
};

// The model, a sorted filter proxy on it, testers on both, the recorder and signal spies.
struct Fixture {
    LocksModel model;
    LocksFilterProxy proxy;
    QAbstractItemModelTester modelTester{&model, QAbstractItemModelTester::FailureReportingMode::QtTest};
    std::unique_ptr<QAbstractItemModelTester> proxyTester;
    Recorder rec{&model};
    QSignalSpy resets{&model, &QAbstractItemModel::modelReset};
    QSignalSpy layouts{&model, &QAbstractItemModel::layoutChanged};
    QSignalSpy inserted{&model, &QAbstractItemModel::rowsInserted};
    QSignalSpy removed{&model, &QAbstractItemModel::rowsRemoved};
    QSignalSpy changed{&model, &QAbstractItemModel::dataChanged};
    World world;

    Fixture() {
        proxy.setSourceModel(&model);
        proxy.sort(LocksModel::Key, Qt::DescendingOrder);
        proxyTester = std::make_unique<QAbstractItemModelTester>(&proxy, QAbstractItemModelTester::FailureReportingMode::QtTest);
    }
    // One poll: applies the world and returns what the model said.
    QStringList poll(double advance = 1.0) {
        world.now += advance;
        model.applySnapshot(world.make());
        return rec.take();
    }
    QModelIndex lockIndex(std::int64_t key, int column = 0) const {
        return model.indexOfLock({KeyForm::bigint, pglock::tag_of(key)}, column);
    }
    QString cell(std::int64_t key, int column) const { return lockIndex(key, column).data().toString(); }
    QString waiterCell(std::int64_t key, int row, int column) const {
        return model.index(row, column, lockIndex(key)).data().toString();
    }
};

// The model shows exactly what the snapshot says, each lock in one row (rows in arrival order),
// waiters in pid order.
void verifyMatches(const LocksModel& model, const Snapshot& snap) {
    std::vector<const LockEntry*> locks;
    for (const auto& e : snap.locks) locks.push_back(&e);
    std::sort(locks.begin(), locks.end(), [](auto* a, auto* b) { return id_of(*a) < id_of(*b); });
    QCOMPARE(model.rowCount(), static_cast<int>(locks.size()));
    std::vector<bool> seen(locks.size(), false);
    for (int r = 0; r < model.rowCount(); ++r) {
        const QModelIndex idx = model.indexOfLock(id_of(*locks[static_cast<std::size_t>(r)]));
        QVERIFY(idx.isValid());
        QVERIFY(!seen[static_cast<std::size_t>(idx.row())]);
        seen[static_cast<std::size_t>(idx.row())] = true;
        QCOMPARE(idx.data(LocksModel::KeyRole).toLongLong(), locks[static_cast<std::size_t>(r)]->key);
        QList<int> holders;
        for (const auto& h : locks[static_cast<std::size_t>(r)]->holders) holders << h.pid;
        QCOMPARE(idx.data(LocksModel::PidsRole).value<QList<int>>(), holders);
        std::vector<int> waiters;
        for (const auto& w : locks[static_cast<std::size_t>(r)]->waiters) waiters.push_back(w.pid);
        std::sort(waiters.begin(), waiters.end());
        QCOMPARE(model.rowCount(idx), static_cast<int>(waiters.size()));
        for (int k = 0; k < model.rowCount(idx); ++k)
            QCOMPARE(model.index(k, 0, idx).data(LocksModel::PidsRole).value<QList<int>>().value(0), waiters[static_cast<std::size_t>(k)]);
    }
    QVERIFY(model.invariantsHold());
}


// Every cell's shown data (the roles a view draws or sorts by), keyed by "K<key>[/w<pid>] <column>".
using Cells = std::map<QString, QVariantList>;
Cells shownCells(const LocksModel& model) {
    static const int roles[] = {Qt::DisplayRole, Qt::ToolTipRole, Qt::BackgroundRole, Qt::ForegroundRole,
                                Qt::FontRole, Qt::TextAlignmentRole, LocksModel::SortRole};
    Cells out;
    const auto add = [&](const QModelIndex& row) {
        for (int c = 0; c < LocksModel::ColumnCount; ++c) {
            const QModelIndex idx = row.siblingAtColumn(c);
            QVariantList values;
            for (int role : roles) values << idx.data(role);
            out[rowName(idx) + QLatin1Char(' ') + QString::fromLatin1(kColumnNames[c])] = values;
        }
    };
    for (int r = 0; r < model.rowCount(); ++r) {
        const QModelIndex lock = model.index(r, 0);
        add(lock);
        for (int k = 0; k < model.rowCount(lock); ++k) add(model.index(k, 0, lock));
    }
    return out;
}

// WCAG contrast ratio of two colours (1 to 21); 4.5 is the minimum for body text.
double contrast(const QColor& a, const QColor& b) {
    const auto luminance = [](const QColor& c) {
        const auto channel = [](double v) { return v <= 0.03928 ? v / 12.92 : std::pow((v + 0.055) / 1.055, 2.4); };
        return 0.2126 * channel(c.redF()) + 0.7152 * channel(c.greenF()) + 0.0722 * channel(c.blueF());
    };
    const double x = luminance(a), y = luminance(b);
    return (std::max(x, y) + 0.05) / (std::min(x, y) + 0.05);
}

}  // namespace

class TestLocksModel : public QObject {
    Q_OBJECT

private slots:
    void first_poll_inserts_everything_in_one_range() {
        Fixture f;
        f.world.add(3, {103});
        f.world.add(1, {101}, {201});
        f.world.add(2, {102});
        QCOMPARE(f.poll(), QStringList{"+ K1 K2 K3"});
        QCOMPARE(f.model.rowCount(), 3);
        QCOMPARE(f.model.rowCount(f.lockIndex(1)), 1);
        QCOMPARE(f.proxy.rowCount(), 3);
        QCOMPARE(f.proxy.index(0, 0).data(LocksModel::KeyRole).toLongLong(), 3);  // sorted descending
        verifyMatches(f.model, *f.model.snapshot());
    }

    void unchanged_poll_is_silent() {
        Fixture f;
        f.world.add(1, {101}, {201, 202});
        f.world.add(2, {102});
        f.poll();
        QCOMPARE(f.poll(), QStringList{});
        QCOMPARE(f.poll(5), QStringList{});
        QCOMPARE(f.resets.count(), 0);
        QCOMPARE(f.layouts.count(), 0);
    }

    void reordered_input_is_the_same_set() {
        Fixture f;
        for (int k = 1; k <= 6; ++k) f.world.add(k, {100 + k});
        f.world.add(-5, {99});  // classid 0xffffffff: last in LockId order though first by value
        f.poll();
        f.world.reversed = true;
        QCOMPARE(f.poll(), QStringList{});
        QCOMPARE(f.model.index(f.model.rowCount() - 1, 0).data(LocksModel::KeyRole).toLongLong(), -5);
        verifyMatches(f.model, *f.model.snapshot());
    }

    void add_and_remove_in_contiguous_ranges() {
        Fixture f;
        for (int k : {2, 4, 6, 8}) f.world.add(k, {100 + k});
        f.poll();
        f.world.add(1, {101});
        f.world.add(5, {105});
        f.world.add(9, {109});
        f.world.add(10, {110});
        // New locks are appended in one range whatever their keys (rows: K2 K4 K6 K8 K1 K5 K9 K10).
        QCOMPARE(f.poll(), (QStringList{"+ K1 K5 K9 K10"}));
        f.world.remove(4);
        f.world.remove(5);
        f.world.remove(6);
        f.world.remove(10);
        // Gone locks leave as contiguous runs, from the back.
        QCOMPARE(f.poll(), (QStringList{"- K10", "- K5", "- K4 K6"}));
        // Removal and insertion in one poll: removals first, the new lock appended.
        f.world.remove(8);
        f.world.add(7, {107});
        QCOMPARE(f.poll(), (QStringList{"- K8", "+ K7"}));
        QCOMPARE(f.resets.count(), 0);
        QCOMPARE(f.layouts.count(), 0);
        QCOMPARE(f.inserted.count(), 3);  // the first poll, then K1 K5 K9 K10, K7
        QCOMPARE(f.removed.count(), 4);  // K10, K5, K4 K6, K8
        QCOMPARE(f.changed.count(), 0);
        verifyMatches(f.model, *f.model.snapshot());
    }

    void changes_touch_only_changed_cells() {
        Fixture f;
        for (int k = 1; k <= 4; ++k) f.world.add(k, {100 + k});
        f.poll();
        f.world.backend(103).state = "active";
        QCOMPARE(f.poll(), QStringList{"~ K3 State"});
        QCOMPARE(f.cell(3, LocksModel::State), QStringLiteral("active"));

        f.world.backend(102).application_name = "billing";
        f.world.backend(102).usename = "bob";
        // The Holders tooltip names each holder's application (and address) too.
        QCOMPARE(f.poll(), (QStringList{"~ K2 Holders", "~ K2 Application-User"}));

        f.world.backend(104).client_addr = "10.0.0.7";
        QCOMPARE(f.poll(), (QStringList{"~ K4 Holders", "~ K4 Client"}));
        QCOMPARE(f.cell(4, LocksModel::Client), QStringLiteral("10.0.0.7"));
        QCOMPARE(f.cell(1, LocksModel::Client), QStringLiteral("local"));

        // A new holder (same application, user, client): the holder list, its hold time, and
        // the State tooltip (which names each holder).
        f.world.lock(1).holders = {{111, false}};
        QCOMPARE(f.poll(), (QStringList{"~ K1 Holders-State", "~ K1 HeldFor"}));
        QCOMPARE(f.cell(1, LocksModel::Holders), QStringLiteral("111"));

        f.world.lock(1).holders = {{111, true}, {112, true}};
        QCOMPARE(f.poll(), (QStringList{"~ K1 Mode-State", "~ K1 HeldFor"}));
        QCOMPARE(f.cell(1, LocksModel::Mode), QStringLiteral("shared"));
        QCOMPARE(f.cell(1, LocksModel::Holders), QStringLiteral("111, 112"));

        // The same change on two adjacent rows is one signal.
        f.world.backend(102).state = "active";
        f.world.backend(103).state = "idle";
        f.world.backend(104).state = "active";
        QCOMPARE(f.poll(), (QStringList{"~ K2 K3 K4 State"}));

        // A holder's query is in the Holders tooltip.
        f.world.backend(104).query = "SELECT 2";
        QCOMPARE(f.poll(), QStringList{"~ K4 Holders"});
        QVERIFY(shownToolTip(f.lockIndex(4, LocksModel::Holders)).contains("SELECT 2"));
        QCOMPARE(f.resets.count(), 0);
        QCOMPARE(f.layouts.count(), 0);
        QCOMPARE(f.inserted.count(), 1);
        QCOMPARE(f.removed.count(), 0);
    }

    // An active session's state_change moves with every query; it is shown nowhere, so its locks
    // stay silent. An idle-in-transaction holder's is its idle time: that State cell changes.
    void state_change_alone_is_silent_unless_idle_in_transaction() {
        Fixture f;
        f.world.add(1, {101});
        f.world.add(2, {102});
        f.world.backend(101).state = "active";
        f.world.backend(102).state = "idle in transaction";
        f.world.backend(102).state_change = f.world.now;
        f.poll(0);
        f.world.backend(101).state_change = f.world.now;
        QCOMPARE(f.poll(0), QStringList{});
        // A new transaction went idle again: same state, new state_change, new idle time.
        f.world.backend(102).state_change = f.world.now - 3;
        QCOMPARE(f.poll(0), QStringList{"~ K2 State"});
        QVERIFY(shownToolTip(f.lockIndex(2, LocksModel::State)).contains("idle in transaction for 3s"));
        QCOMPARE(f.lockIndex(2).data(LocksModel::IdleInTxSecondsRole).toDouble(), 3.0);
    }

    void worst_state_of_several_holders() {
        Fixture f;
        f.world.add(1, {101, 102, 103});
        f.world.lock(1).holders = {{101, true}, {102, true}, {103, true}};
        f.world.backend(101).state = "active";
        f.world.backend(102).state = "idle in transaction";
        f.world.backend(103).state = "idle";
        f.world.backend(103).application_name = "cron";
        f.poll();
        QCOMPARE(f.cell(1, LocksModel::State), QStringLiteral("idle in transaction"));
        QCOMPARE(f.cell(1, LocksModel::Application), QStringLiteral("svc, cron"));
        QCOMPARE(f.cell(1, LocksModel::Mode), QStringLiteral("shared"));
        QCOMPARE(f.lockIndex(1, LocksModel::Holders).data(LocksModel::PidsRole).value<QList<int>>(), (QList<int>{101, 102, 103}));
        QCOMPARE(shownToolTip(f.lockIndex(1, LocksModel::State)),
                 QStringLiteral("pid 101 (shared): active\npid 102 (shared): idle in transaction for 1m1s\npid 103 (shared): idle"));
        // Two holders swap states: the worst is the same, the per-holder tooltip is not. (No time
        // passes, so lock 1's idle-in-transaction seconds stay put.)
        f.world.add(2, {201, 202});
        f.world.backend(201).state = "active";
        f.poll(0);
        f.world.backend(201).state = "idle";
        f.world.backend(202).state = "active";
        QCOMPARE(f.poll(0), QStringList{"~ K2 State"});
        QCOMPARE(f.cell(2, LocksModel::State), QStringLiteral("idle"));
    }

    // No forgotten diff: after random changes to everything a cell shows (sessions' state,
    // application, user, address, host and query; holders coming, going and changing mode;
    // waiters' mode and blockers; the name a holder gives), every surviving cell that shows
    // something else was announced by dataChanged. Time-driven columns are the exception: tick()
    // refreshes them.
    void every_changed_cell_is_announced() {
        Fixture f;
        std::mt19937 rng(4242);
        const auto pick = [&](int n) { return std::uniform_int_distribution<int>(0, n - 1)(rng); };
        std::vector<std::int64_t> keys;
        for (int k = 1; k <= 40; ++k) {
            keys.push_back(k * 104729LL);
            f.world.add(keys.back(), {100 + k % 12}, k % 3 == 0 ? std::vector<int>{300 + k} : std::vector<int>{});
        }
        f.poll();
        const char* const states[] = {"idle", "active", "idle in transaction", "idle in transaction (aborted)", ""};
        const char* const texts[] = {"svc", "batch", "", "svc"};
        for (int round = 0; round < 200; ++round) {
            const Cells before = shownCells(f.model);
            std::set<QString> announced;
            const auto conn = QObject::connect(&f.model, &QAbstractItemModel::dataChanged, [&](const QModelIndex& tl, const QModelIndex& br) {
                for (int r = tl.row(); r <= br.row(); ++r)
                    for (int c = tl.column(); c <= br.column(); ++c)
                        announced.insert(rowName(f.model.index(r, c, tl.parent())) + QLatin1Char(' ') + QString::fromLatin1(kColumnNames[c]));
            });
            for (int n = 1 + pick(3); n > 0; --n) {
                LockEntry& e = f.world.lock(keys[static_cast<std::size_t>(pick(static_cast<int>(keys.size())))]);
                const int pid = e.holders.empty() ? 100 + pick(12) : e.holders[static_cast<std::size_t>(pick(static_cast<int>(e.holders.size())))].pid;
                Backend& b = f.world.backend(pid);
                switch (pick(11)) {
                case 0: b.state = states[pick(5)]; b.state_change = f.world.now - pick(100); break;
                case 1: b.application_name = texts[pick(4)]; break;
                case 2: b.usename = texts[pick(4)]; break;
                case 3: b.client_addr = pick(2) ? "10.0.0." + std::to_string(pick(3)) : std::string(); break;
                case 4: b.client_hostname = texts[pick(4)]; break;
                case 5: b.query = "SELECT " + std::to_string(pick(3)); break;
                case 6: if (!e.holders.empty()) e.holders.front().shared = !e.holders.front().shared; break;
                case 7: {  // another holder joins or one leaves
                    const int other = 100 + pick(12);
                    auto it = std::find_if(e.holders.begin(), e.holders.end(), [&](const Holder& h) { return h.pid == other; });
                    if (it != e.holders.end()) e.holders.erase(it);
                    else e.holders.insert(std::upper_bound(e.holders.begin(), e.holders.end(), other,
                                                           [](int p, const Holder& h) { return p < h.pid; }), Holder{other, true});
                    break;
                }
                case 8:
                    if (pick(2)) e.holder_name.reset();
                    else e.holder_name = HolderName{texts[pick(2)], pick(2) == 0, pid};
                    break;
                case 9:
                    if (!e.waiters.empty()) {
                        Waiter& w = e.waiters.front();
                        if (pick(2)) w.shared = !w.shared;
                        else w.blocked_by = {100 + pick(12)};
                        f.world.backend(w.pid).application_name = texts[pick(4)];
                    }
                    break;
                case 10: f.model.setOwnPids(pick(2) ? QSet<int>{pid} : QSet<int>{}); break;
                }
            }
            f.world.now += 1;
            f.model.applySnapshot(f.world.make());
            QObject::disconnect(conn);
            f.rec.take();
            for (const auto& [cell, values] : shownCells(f.model)) {
                const auto was = before.find(cell);
                if (was == before.end() || was->second == values || cell.endsWith(QLatin1String(" HeldFor"))) continue;
                if (announced.count(cell)) continue;
                qsizetype role = 0;
                while (was->second[role] == values[role]) ++role;  // which of shownCells()' roles
                QFAIL(qPrintable(QStringLiteral("round %1: %2 changed unannounced (role #%3: %4 -> %5)")
                                     .arg(round).arg(cell).arg(role)
                                     .arg(was->second[role].toString(), values[role].toString())));
            }
        }
    }

    void waiters_come_and_go_under_their_lock() {
        Fixture f;
        f.world.add(1, {101});
        f.world.add(2, {102});
        f.world.add(3, {103});
        f.poll();
        f.world.setWaiters(2, {201, 202, 203});
        QCOMPARE(f.poll(), (QStringList{"+ K2/w201 K2/w202 K2/w203", "~ K2 Waiters"}));
        QCOMPARE(f.cell(2, LocksModel::Waiters), QStringLiteral("3"));

        // 3 waiters -> 1: the two others go, the middle one stays (and is not touched).
        f.world.setWaiters(2, {202});
        QCOMPARE(f.poll(), (QStringList{"- K2/w201", "- K2/w203", "~ K2 Waiters"}));
        QCOMPARE(f.cell(2, LocksModel::Waiters), QStringLiteral("1"));
        QCOMPARE(f.waiterCell(2, 0, LocksModel::Name), QStringLiteral("waiting: pid 202"));

        f.world.setWaiters(2, {200, 202, 204});
        QCOMPARE(f.poll(), (QStringList{"+ K2/w200", "+ K2/w204", "~ K2 Waiters"}));

        // The waiter's own changes.
        f.world.lock(2).waiters[1].blocked_by = {102, 300};
        QCOMPARE(f.poll(), QStringList{"~ K2/w202 Holders"});
        QCOMPARE(f.waiterCell(2, 1, LocksModel::Holders), QStringLiteral("blocked by 102, 300"));
        f.world.backend(204).state = "idle in transaction";
        QCOMPARE(f.poll(), QStringList{"~ K2/w204 State"});

        // All gone, and a lock vanishing together with its waiters.
        f.world.setWaiters(2, {});
        QCOMPARE(f.poll(), (QStringList{"- K2/w200 K2/w202 K2/w204", "~ K2 Waiters"}));
        f.world.setWaiters(3, {301});
        f.poll();
        f.world.remove(3);
        QCOMPARE(f.poll(), QStringList{"- K3"});
        QCOMPARE(f.resets.count(), 0);
        QCOMPARE(f.layouts.count(), 0);
        verifyMatches(f.model, *f.model.snapshot());
    }

    void waiter_cells() {
        Fixture f;
        f.world.add(1, {101}, {201});
        f.world.lock(1).waiters[0].wait_start = f.world.now + 1 - 125;  // poll() advances 1 s
        f.world.backend(201).application_name = "worker";
        f.world.backend(201).client_addr = "192.0.2.1";
        f.world.backend(201).state = "active";
        f.world.backend(201).query = "SELECT pg_advisory_lock(1)";
        f.poll();
        const QModelIndex lock = f.lockIndex(1);
        QCOMPARE(f.model.rowCount(lock), 1);
        QCOMPARE(f.waiterCell(1, 0, LocksModel::Name), QStringLiteral("waiting: pid 201"));
        QCOMPARE(f.waiterCell(1, 0, LocksModel::Holders), QStringLiteral("blocked by 101"));
        QCOMPARE(f.waiterCell(1, 0, LocksModel::State), QStringLiteral("active"));
        QCOMPARE(f.waiterCell(1, 0, LocksModel::Application), QStringLiteral("worker"));
        QCOMPARE(f.waiterCell(1, 0, LocksModel::Client), QStringLiteral("192.0.2.1"));
        QCOMPARE(f.waiterCell(1, 0, LocksModel::Mode), QStringLiteral("exclusive"));
        QCOMPARE(f.waiterCell(1, 0, LocksModel::HeldFor), QStringLiteral("waiting 2m5s"));
        QCOMPARE(shownToolTip(f.model.index(0, LocksModel::State, lock)), QStringLiteral("SELECT pg_advisory_lock(1)"));
        QVERIFY(f.model.index(0, 0, lock).data(LocksModel::IsWaiterRole).toBool());
        QCOMPARE(f.model.index(0, 0, lock).data(LocksModel::KeyRole).toLongLong(), 1);
        QVERIFY(f.model.flags(f.model.index(0, 0, lock)) & Qt::ItemNeverHasChildren);
    }

    // A waiter whose snapshot pins the xmin horizon (a pg_advisory_lock wait) is flagged past the
    // threshold; a waiter without one (AcquireStrategy::poll between tries) is not.
    void waiter_pinning_xmin_is_flagged() {
        Fixture f;
        f.model.setLongWaitThreshold(3600);  // a long wait is highlighted too: not what this test is about
        f.world.add(1, {101}, {201, 202});
        Waiter& queued = f.world.lock(1).waiters[0];
        queued.wait_start = f.world.now + 1 - 45;  // poll() advances 1 s
        queued.xmin_age = 1234;
        queued.xmin_since = f.world.now + 1 - 45;
        f.world.lock(1).waiters[1].wait_start = f.world.now + 1 - 45;
        f.poll();
        const QModelIndex lock = f.lockIndex(1);
        QCOMPARE(f.waiterCell(1, 0, LocksModel::HeldFor), QStringLiteral("waiting 45s, pins xmin for 45s"));
        QCOMPARE(f.waiterCell(1, 1, LocksModel::HeldFor), QStringLiteral("waiting 45s"));
        const QModelIndex pinned = f.model.index(0, LocksModel::HeldFor, lock);
        const QModelIndex clean = f.model.index(1, LocksModel::HeldFor, lock);
        QVERIFY(qAbs(pinned.data(LocksModel::PinsXminSecondsRole).toDouble() - 45.0) < 0.5);
        QVERIFY(!clean.data(LocksModel::PinsXminSecondsRole).isValid());
        QVERIFY(pinned.data(Qt::BackgroundRole).isValid());
        QVERIFY(!clean.data(Qt::BackgroundRole).isValid());
        QVERIFY(shownToolTip(pinned).contains(QStringLiteral("backend_xmin, 1234 transactions old")));

        // Under the threshold the role still tells, the cell does not shout.
        f.rec.take();
        f.model.setXminPinThreshold(60);
        QCOMPARE(f.rec.take(), QStringList{QStringLiteral("~ K1/w201 K1/w202 HeldFor")});
        QCOMPARE(f.waiterCell(1, 0, LocksModel::HeldFor), QStringLiteral("waiting 45s"));
        QVERIFY(!pinned.data(Qt::BackgroundRole).isValid());
        QVERIFY(pinned.data(LocksModel::PinsXminSecondsRole).isValid());

        // The second waiter starts to pin xmin (it began a transaction): its cell changes.
        f.model.setXminPinThreshold(10);
        f.rec.take();
        f.world.lock(1).waiters[1].xmin_age = 3;
        f.world.lock(1).waiters[1].xmin_since = f.world.now + 1 - 20;
        QCOMPARE(f.poll(), QStringList{QStringLiteral("~ K1/w202 HeldFor")});
        QCOMPARE(f.waiterCell(1, 1, LocksModel::HeldFor), QStringLiteral("waiting 46s, pins xmin for 20s"));
    }

    // A wait over the long-wait threshold is highlighted whether or not it pins xmin; a hold over
    // the long-hold threshold likewise, in its Held-for cell; a lock with waiters, in its Waiters
    // cell, with an icon beside the tint.
    void long_waits_holds_and_waiters_stand_out() {
        Fixture f;
        f.model.setHeldSinceProvider([&f](const LockId&, int) -> std::optional<double> { return f.world.now - 100; });
        f.world.add(1, {101}, {201});
        f.world.add(2, {102});
        f.world.lock(1).waiters[0].wait_start = f.world.now + 1 - 20;
        f.poll();
        const QModelIndex wait = f.model.index(0, LocksModel::HeldFor, f.lockIndex(1));
        QVERIFY(wait.data(Qt::BackgroundRole).isValid());  // 20 s, over the default 5 s
        f.model.setLongWaitThreshold(30);
        QVERIFY(!wait.data(Qt::BackgroundRole).isValid());
        QVERIFY(f.lockIndex(1, LocksModel::HeldFor).data(Qt::BackgroundRole).isValid());  // 100 s, over 60 s
        f.model.setLongHoldThreshold(3600);
        QVERIFY(!f.lockIndex(1, LocksModel::HeldFor).data(Qt::BackgroundRole).isValid());
        QVERIFY(f.lockIndex(1, LocksModel::Waiters).data(Qt::BackgroundRole).isValid());
        QVERIFY(!f.lockIndex(1, LocksModel::Waiters).data(Qt::DecorationRole).value<QIcon>().isNull());
        QVERIFY(!f.lockIndex(2, LocksModel::Waiters).data(Qt::BackgroundRole).isValid());
        QVERIFY(f.lockIndex(2, LocksModel::Waiters).data(Qt::DecorationRole).isNull());
    }

    // Every highlight (idle in transaction, waiters, a long hold, a long wait) and the grey of
    // stale rows reads in the light and the dark theme: the text of every cell has a contrast of
    // at least 4.5 against what the cell is drawn on, fresh and stale.
    void highlights_read_in_both_themes() {
        for (const auto mode : {lockscope::theme::Mode::light, lockscope::theme::Mode::dark}) {
            lockscope::theme::apply(mode);
            Fixture f;
            f.model.setHeldSinceProvider([&f](const LockId&, int) -> std::optional<double> { return f.world.now - 100; });
            f.world.add(1, {101}, {201});
            f.world.lock(1).waiters[0].wait_start = f.world.now - 20;
            f.world.add(2, {102});
            f.world.backend(102).state = "idle in transaction";
            f.world.backend(102).state_change = f.world.now - 120;
            f.world.add(3, {103});
            f.model.setOwnPids({103});
            f.poll(0);
            for (const bool stale : {false, true}) {
                f.model.setStale(stale);
                const QPalette palette = QGuiApplication::palette();
                int tinted = 0;
                for (const auto& [cell, values] : shownCells(f.model)) {
                    const QVariant bg = values[2], fg = values[3];
                    tinted += bg.isValid();
                    const QColor back = bg.isValid() ? bg.value<QColor>() : palette.color(QPalette::Base);
                    const QColor text = fg.isValid() ? fg.value<QColor>() : palette.color(QPalette::Text);
                    QVERIFY2(contrast(text, back) >= 4.5,
                             qPrintable(QStringLiteral("%1 theme%2: %3: %4 on %5, contrast %6")
                                            .arg(lockscope::theme::toString(mode), stale ? QStringLiteral(", stale") : QString(), cell,
                                                 text.name(), back.name())
                                            .arg(contrast(text, back), 0, 'f', 2)));
                }
                if (!stale) QVERIFY(tinted >= 3);  // the test sees highlights at all
            }
        }
        lockscope::theme::apply(lockscope::theme::Mode::system);
    }

    void persistent_indexes_survive_polls() {
        Fixture f;
        for (int k : {10, 20, 30}) f.world.add(k, {100 + k});
        f.world.setWaiters(20, {201, 202});
        f.poll();
        QPersistentModelIndex lock(f.lockIndex(20, LocksModel::State));
        QPersistentModelIndex waiter(f.model.index(1, 0, f.lockIndex(20)));
        QPersistentModelIndex proxyLock(f.proxy.mapFromSource(f.lockIndex(20)));
        QCOMPARE(lock.row(), 1);
        QCOMPARE(rowName(waiter), QStringLiteral("K20/w202"));

        // New locks, one gone after it, and a waiter before the watched one.
        f.world.add(5, {105});
        f.world.add(15, {115});
        f.world.remove(30);
        f.world.setWaiters(20, {199, 201, 202});
        // Removals first, then the survivors (waiters, then dataChanged), new locks appended last.
        QCOMPARE(f.poll(), (QStringList{"- K30", "+ K20/w199", "~ K20 Waiters", "+ K5 K15"}));
        QVERIFY(lock.isValid());
        QCOMPARE(lock.row(), 1);
        QCOMPARE(lock.column(), int(LocksModel::State));
        QCOMPARE(lock.data(LocksModel::KeyRole).toLongLong(), 20);
        QVERIFY(waiter.isValid());
        QCOMPARE(rowName(waiter), QStringLiteral("K20/w202"));
        QCOMPARE(waiter.parent(), f.lockIndex(20));
        QVERIFY(proxyLock.isValid());
        QCOMPARE(proxyLock.data(LocksModel::KeyRole).toLongLong(), 20);

        // The watched waiter goes: its index is invalidated, not moved to another waiter.
        f.world.setWaiters(20, {199, 201});
        f.poll();
        QVERIFY(!waiter.isValid());
        // Its lock goes: same.
        f.world.remove(20);
        f.poll();
        QVERIFY(!lock.isValid());
        QVERIFY(!proxyLock.isValid());
        QCOMPARE(f.resets.count(), 0);
    }

    // Random polls over a few hundred locks, checked against the snapshot after each. (The testers
    // walk the whole model on every signal, so this stays small; perf_merge_10k has the 10k.)
    void many_locks_random_churn() {
        Fixture f;
        std::mt19937 rng(12345);
        std::vector<std::int64_t> keys;
        for (int k = 1; k <= 450; ++k) keys.push_back(k * 7919LL - 500000);  // negative and positive
        std::set<std::int64_t> present;
        for (int i = 0; i < 300; ++i) present.insert(keys[static_cast<std::size_t>(i)]);
        for (auto k : present) f.world.add(k, {static_cast<int>(1000 + (k & 0xfff))});
        f.poll();
        verifyMatches(f.model, *f.model.snapshot());
        for (int round = 0; round < 12; ++round) {
            std::set<std::int64_t> next;
            for (auto k : keys) {
                const bool was = present.count(k) != 0;
                const bool flip = std::uniform_int_distribution<int>(0, 99)(rng) < 8;
                if (was != flip) next.insert(k);
            }
            int added = 0, gone = 0;
            for (auto k : next)
                if (!present.count(k)) {
                    f.world.add(k, {static_cast<int>(1000 + (k & 0xfff))});
                    ++added;
                }
            for (auto k : present)
                if (!next.count(k)) {
                    f.world.remove(k);
                    ++gone;
                }
            // Some waiters move around too.
            for (int i = 0; i < 10; ++i) {
                auto it = next.begin();
                std::advance(it, std::uniform_int_distribution<int>(0, static_cast<int>(next.size()) - 1)(rng));
                std::vector<int> w;
                for (int n = std::uniform_int_distribution<int>(0, 3)(rng); n > 0; --n) w.push_back(50000 + std::uniform_int_distribution<int>(0, 40)(rng));
                std::sort(w.begin(), w.end());
                w.erase(std::unique(w.begin(), w.end()), w.end());
                f.world.setWaiters(*it, w);
            }
            present = std::move(next);
            f.inserted.clear();
            f.removed.clear();
            f.poll();
            int rowsIn = 0, rowsOut = 0;
            for (const auto& args : f.inserted)
                if (!args[0].value<QModelIndex>().isValid()) rowsIn += args[2].toInt() - args[1].toInt() + 1;
            for (const auto& args : f.removed)
                if (!args[0].value<QModelIndex>().isValid()) rowsOut += args[2].toInt() - args[1].toInt() + 1;
            QCOMPARE(rowsIn, added);
            QCOMPARE(rowsOut, gone);
            verifyMatches(f.model, *f.model.snapshot());
        }
        QCOMPARE(f.resets.count(), 0);
        QCOMPARE(f.layouts.count(), 0);
    }

    void names_from_the_lookup() {
        Fixture f;
        const std::int64_t known = pglock::key_of("orders.daily-rollup");
        f.world.add(known, {101});
        f.world.add(42, {102});
        f.world.addPair(7, -3, 103);
        f.poll();
        QCOMPARE(f.cell(known, LocksModel::Name), QStringLiteral("(unknown) ") + QString::number(known));
        QMap<qint64, QString> catalog{{known, QStringLiteral("orders.daily-rollup")}};
        f.model.setNamer(lockscope::catalogNamer([&catalog](qint64 key) -> std::optional<QByteArray> {
            if (auto it = catalog.find(key); it != catalog.end()) return it->toUtf8();
            return std::nullopt;
        }));
        QCOMPARE(f.rec.take(), QStringList{"~ K42 K" + QString::number(known) + " K" +
                                           QString::number(pglock::key_of(pglock::LockTag{7, static_cast<std::uint32_t>(-3)})) + " Name"});
        QCOMPARE(f.cell(known, LocksModel::Name), QStringLiteral("orders.daily-rollup"));
        QCOMPARE(f.cell(known, LocksModel::Key), QString::number(known));
        QCOMPARE(f.cell(known, LocksModel::Key), QStringLiteral("-7132652647757890940"));
        QVERIFY(!f.lockIndex(known).data(LocksModel::IsUnknownRole).toBool());
        QCOMPARE(f.cell(42, LocksModel::Name), QStringLiteral("(unknown) 42"));
        QVERIFY(f.lockIndex(42).data(LocksModel::IsUnknownRole).toBool());
        QCOMPARE(shownToolTip(f.lockIndex(42, LocksModel::Key)), QStringLiteral("pg_locks: classid 0, objid 42, objsubid 1"));
        const QModelIndex pair = f.model.index(f.model.rowCount() - 1, LocksModel::Name);  // int pairs sort after bigints
        QCOMPARE(pair.data().toString(), QStringLiteral("(7, -3) int4 pair"));
        QVERIFY(pair.data(LocksModel::IsUnknownRole).toBool());

        catalog.insert(42, QStringLiteral("jobs.answer"));
        f.model.refreshNames();
        QCOMPARE(f.rec.take().size(), 1);
        QCOMPARE(f.cell(42, LocksModel::Name), QStringLiteral("jobs.answer"));
        QCOMPARE(f.poll(), QStringList{});  // names do not change with polls
    }

    void idle_in_transaction_highlight() {
        Fixture f;
        f.world.add(1, {101});
        f.world.add(2, {102});
        f.world.backend(101).state = "idle in transaction";
        f.world.backend(101).state_change = f.world.now;
        f.poll(10);  // idle 10 s
        const QModelIndex idx = f.lockIndex(1, LocksModel::Key);
        QVERIFY(!idx.data(Qt::BackgroundRole).isValid());
        QCOMPARE(idx.data(LocksModel::IdleInTxSecondsRole).toDouble(), 10.0);
        QVERIFY(!f.lockIndex(2).data(LocksModel::IdleInTxSecondsRole).isValid());

        // Still under the threshold: only the State cell (tooltip, role) changes.
        QCOMPARE(f.poll(10), QStringList{"~ K1 State"});
        QVERIFY(!idx.data(Qt::BackgroundRole).isValid());
        // Over it: the whole row.
        QCOMPARE(f.poll(15), QStringList{"~ K1 Name-Waiters"});
        QCOMPARE(idx.data(LocksModel::IdleInTxSecondsRole).toDouble(), 35.0);
        QVERIFY(idx.data(Qt::BackgroundRole).value<QColor>().isValid());
        QVERIFY(idx.data(Qt::ForegroundRole).value<QColor>().isValid());
        QVERIFY(shownToolTip(f.lockIndex(1, LocksModel::State)).contains("idle in transaction for 35s"));
        QVERIFY(!f.lockIndex(2, LocksModel::Key).data(Qt::BackgroundRole).isValid());

        f.model.setIdleInTransactionThreshold(60);
        QCOMPARE(f.rec.take(), QStringList{"~ K1 Name-Waiters"});
        QVERIFY(!idx.data(Qt::BackgroundRole).isValid());
        f.model.setIdleInTransactionThreshold(30);
        QCOMPARE(f.rec.take(), QStringList{"~ K1 Name-Waiters"});

        // It commits: highlight off, state shown.
        f.world.backend(101).state = "idle";
        QCOMPARE(f.poll(), (QStringList{"~ K1 Name-Waiters"}));
        QVERIFY(!idx.data(Qt::BackgroundRole).isValid());
        QCOMPARE(f.cell(1, LocksModel::State), QStringLiteral("idle"));
    }

    void own_pids_are_marked() {
        Fixture f;
        f.world.add(1, {101}, {102});
        f.world.add(2, {102});
        f.poll();
        f.model.setOwnPids({102});
        QCOMPARE(f.rec.take(), (QStringList{"~ K1/w102 Name-Waiters", "~ K2 Name-Waiters"}));
        QVERIFY(f.lockIndex(2, LocksModel::State).data(Qt::FontRole).value<QFont>().italic());
        QVERIFY(f.lockIndex(2).data(LocksModel::IsOwnRole).toBool());
        QVERIFY(!f.lockIndex(1).data(LocksModel::IsOwnRole).toBool());
        QVERIFY(shownToolTip(f.lockIndex(2)).contains("this application"));
        QCOMPARE(f.cell(2, LocksModel::Holders), QStringLiteral("102 (this app)"));
        QCOMPARE(f.cell(1, LocksModel::Holders), QStringLiteral("101"));
        // Our session takes over lock 1: its row becomes ours.
        f.world.lock(1).holders = {{102, false}};
        f.world.setWaiters(1, {});
        QCOMPARE(f.poll(), (QStringList{"- K1/w102", "~ K1 Name-Waiters"}));
        QVERIFY(f.lockIndex(1).data(LocksModel::IsOwnRole).toBool());
    }

    void held_for_and_tick() {
        Fixture f;
        f.world.add(1, {101});
        f.world.add(2, {102}, {201});
        f.world.add(3, {103});
        f.model.setHeldSinceProvider([&f](const LockId&, int pid) -> std::optional<double> {
            if (pid == 101) return f.world.now - 4.2;
            if (pid == 102) return f.world.now - 185.5;
            if (pid == 103) return f.world.now - 3725;
            return std::nullopt;
        });
        f.poll(0);
        // The display follows the local clock since the poll, so allow for a slow machine.
        QVERIFY2(f.cell(1, LocksModel::HeldFor).startsWith("4."), qPrintable(f.cell(1, LocksModel::HeldFor)));
        QCOMPARE(f.cell(2, LocksModel::HeldFor), QStringLiteral("3m5s"));
        QCOMPARE(f.cell(3, LocksModel::HeldFor), QStringLiteral("1h2m"));
        QVERIFY(qAbs(f.lockIndex(2, LocksModel::HeldFor).data(LocksModel::SortRole).toDouble() - 185.5) < 0.5);

        f.rec.take();
        f.model.tick();
        QCOMPARE(f.rec.take(), (QStringList{"~ K1 K2 K3 HeldFor", "~ K2/w201 HeldFor"}));
    }

    void format_duration() {
        QCOMPARE(LocksModel::formatDuration(0), QStringLiteral("0ms"));
        QCOMPARE(LocksModel::formatDuration(0.25), QStringLiteral("250ms"));
        QCOMPARE(LocksModel::formatDuration(4.2), QStringLiteral("4.2s"));
        QCOMPARE(LocksModel::formatDuration(59.94), QStringLiteral("59.9s"));
        QCOMPARE(LocksModel::formatDuration(59.96), QStringLiteral("1m"));
        QCOMPARE(LocksModel::formatDuration(185), QStringLiteral("3m5s"));
        QCOMPARE(LocksModel::formatDuration(3720), QStringLiteral("1h2m"));
        QCOMPARE(LocksModel::formatDuration(2 * 86400 + 3 * 3600 + 5), QStringLiteral("2d3h"));
        QCOMPARE(LocksModel::formatDuration(-3), QStringLiteral("0ms"));
    }

    void clear_resets_and_polls_resume() {
        Fixture f;
        f.world.add(1, {101}, {201});
        f.poll();
        f.model.clear();
        QCOMPARE(f.rec.take(), QStringList{"RESET"});
        QCOMPARE(f.model.rowCount(), 0);
        QCOMPARE(f.poll(), QStringList{"+ K1"});
        QCOMPARE(f.model.rowCount(f.lockIndex(1)), 1);
        QVERIFY(f.model.invariantsHold());
        f.model.applySnapshot(nullptr);  // a null snapshot is an empty one
        QCOMPARE(f.rec.take(), QStringList{"- K1"});
    }

    void proxy_filter_and_sort() {
        Fixture f;
        f.world.add(1, {101}, {201, 202});
        f.world.add(2, {102});
        f.world.add(3, {103});
        f.world.backend(103).application_name = "Billing-Export";
        f.world.lock(3).holders = {{103, false}};
        f.world.add(4, {104});
        f.model.setNamer(lockscope::catalogNamer([](qint64 key) -> std::optional<QByteArray> {
            if (key == 2) return QByteArray("orders.daily-rollup");
            return std::nullopt;
        }));
        f.model.setHeldSinceProvider([&f](const LockId& id, int) -> std::optional<double> {
            return f.world.now - 9.0 * static_cast<double>(key_of(id.tag)) + (key_of(id.tag) == 4 ? 30 : 0);  // 9, 18, 27, 6
        });
        f.poll(0);
        LocksFilterProxy& p = f.proxy;
        QCOMPARE(p.rowCount(), 4);

        // A waiter's pid keeps its lock, with only that waiter.
        p.setFilterText(QStringLiteral(" 202 "));
        QCOMPARE(p.rowCount(), 1);
        QCOMPARE(p.index(0, 0).data(LocksModel::KeyRole).toLongLong(), 1);
        QCOMPARE(p.rowCount(p.index(0, 0)), 1);
        QCOMPARE(p.index(0, 0, p.index(0, 0)).data().toString(), QStringLiteral("waiting: pid 202"));
        // The waiter goes: so does the lock, from the proxy.
        f.world.setWaiters(1, {201});
        f.poll();
        QCOMPARE(p.rowCount(), 0);
        f.world.setWaiters(1, {201, 202});
        f.poll();
        QCOMPARE(p.rowCount(), 1);

        // A holder pid matches its lock, which shows all its waiters.
        p.setFilterText(QStringLiteral("101"));
        QCOMPARE(p.rowCount(), 1);
        QCOMPARE(p.rowCount(p.index(0, 0)), 2);
        // No substring matches for pids: "10" is no pid here.
        p.setFilterText(QStringLiteral("10"));
        QCOMPARE(p.rowCount(), 0);

        p.setFilterText(QStringLiteral("billing"));  // application, case-insensitive
        QCOMPARE(p.rowCount(), 1);
        QCOMPARE(p.index(0, 0).data(LocksModel::KeyRole).toLongLong(), 3);
        p.setFilterText(QStringLiteral("DAILY"));  // name
        QCOMPARE(p.rowCount(), 1);
        QCOMPARE(p.index(0, 0).data(LocksModel::KeyRole).toLongLong(), 2);
        p.setFilterText(QStringLiteral("unknown"));  // the shown name of keys without one
        QCOMPARE(p.rowCount(), 3);
        p.setFilterText(QString());
        QCOMPARE(p.rowCount(), 4);

        // Sorting is numeric where it should be: held 6 s sorts before 18 s ("6s" > "18s" as text).
        p.sort(LocksModel::HeldFor, Qt::AscendingOrder);
        QList<qint64> order;
        for (int r = 0; r < p.rowCount(); ++r) order << p.index(r, 0).data(LocksModel::KeyRole).toLongLong();
        QCOMPARE(order, (QList<qint64>{4, 1, 2, 3}));
        p.sort(LocksModel::Key, Qt::DescendingOrder);
        order.clear();
        for (int r = 0; r < p.rowCount(); ++r) order << p.index(r, 0).data(LocksModel::KeyRole).toLongLong();
        QCOMPARE(order, (QList<qint64>{4, 3, 2, 1}));
        QCOMPARE(f.resets.count(), 0);
    }

    // Not a timed assertion: prints how long merging 10,000 locks takes when little changed.
    void perf_merge_10k() {
        constexpr int n = 10'000;
        World a;
        for (int i = 0; i < n; ++i) {
            a.add(static_cast<std::int64_t>(i) * 1'000'003 - 5'000'000'000LL, {10000 + i});
            if (i % 100 == 0) a.setWaiters(a.locks.back().key, {40000 + i});
        }
        World b = a;
        for (int i = 0; i < 5; ++i) {
            b.remove(a.locks[static_cast<std::size_t>(i * 1999)].key);
            b.add(static_cast<std::int64_t>(i) * 1'000'003 - 5'000'000'000LL + 17, {60000 + i});
            b.backend(10000 + i * 333 + 1).state = "active";
        }
        const auto snapA = a.make();
        a.now += 1;
        const auto snapA2 = a.make();  // the same locks and sessions, one second later
        const auto snapB = b.make();
        const auto ms = [](const QElapsedTimer& t) { return static_cast<double>(t.nsecsElapsed()) / 1e6; };

        const auto measure = [&](LocksModel& model, const char* what) {
            QElapsedTimer t;
            t.start();
            model.applySnapshot(snapA);
            const double first = ms(t);
            std::vector<double> unchanged, little;
            for (int round = 0; round < 11; ++round) {
                t.restart();
                model.applySnapshot(snapA2);
                unchanged.push_back(ms(t));
                t.restart();
                model.applySnapshot(snapB);
                little.push_back(ms(t));
                model.applySnapshot(snapA);
            }
            std::sort(unchanged.begin(), unchanged.end());
            std::sort(little.begin(), little.end());
            qInfo("merge of %d locks, %s: first poll (all inserted) %.2f ms; unchanged poll median %.3f ms (max %.3f); "
                  "5 added + 5 removed + 5 changed median %.3f ms (max %.3f)",
                  n, what, first, unchanged[unchanged.size() / 2], unchanged.back(), little[little.size() / 2], little.back());
            QVERIFY(model.invariantsHold());
            QCOMPARE(model.rowCount(), n);
        };
        {
            LocksModel model;
            measure(model, "bare model");
        }
        {
            LocksModel model;
            LocksFilterProxy proxy;
            proxy.setSourceModel(&model);
            proxy.sort(LocksModel::Name);
            measure(model, "with a sorting proxy");
        }
    }
};

QTEST_MAIN(TestLocksModel)
#include "test_locks_model.moc"
