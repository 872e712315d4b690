// Every cell of the locks model, every role a view asks, for one fixed snapshot that reaches each
// branch of the cell data (every name source, int4 pairs, shared and mixed holders, several
// holders, idle in transaction past the threshold, own locks and waiters, long holds and waits,
// waiters that pin the xmin, a waiter without a session), fresh and stale, compared line by line
// with tests/ui/golden/lock_cells.txt. A column whose text, tooltip, colour, icon or sort value
// moves fails here, so a change to the cell data is a change to that file, reviewed as such.
//
// A new column (or a deliberate change of a cell): LOCKSCOPE_GOLDEN_UPDATE=1 test_lock_cells
// writes the file from the model; read the diff before committing it.
#include <QFile>
#include <QFont>
#include <QIcon>
#include <QtTest>

#include <cmath>
#include <map>

#include "locks_test_world.hpp"
#include "models/locks_model.hpp"
#include "theme/app_palette.hpp"

using lockscope::LocksModel;
using namespace pglock::monitor;
using locks_test::World;

namespace {

const char* const kColumnNames[] = {"Name", "Key", "Mode", "Holders", "State", "Application", "User", "Client", "HeldFor", "Waiters"};
static_assert(std::size(kColumnNames) == LocksModel::ColumnCount);

// The roles a view asks per cell, and the roles that describe a whole row (the same in every
// column of the row: checked, and written once).
const std::pair<int, const char*> kCellRoles[] = {
    {Qt::DisplayRole, "display"},     {Qt::ToolTipRole, "tooltip"},         {Qt::DecorationRole, "decoration"},
    {Qt::BackgroundRole, "background"}, {Qt::ForegroundRole, "foreground"}, {Qt::FontRole, "font"},
    {Qt::TextAlignmentRole, "align"}, {LocksModel::SortRole, "sort"},
};
const std::pair<int, const char*> kRowRoles[] = {
    {LocksModel::KeyRole, "key"},           {LocksModel::PidsRole, "pids"},
    {LocksModel::IsUnknownRole, "unknown"}, {LocksModel::IdleInTxSecondsRole, "idleInTx"},
    {LocksModel::IsOwnRole, "own"},         {LocksModel::IsWaiterRole, "waiter"},
    {LocksModel::FilterRole, "filter"},     {LocksModel::NameSourceRole, "nameSource"},
    {LocksModel::HolderNameRole, "holderName"}, {LocksModel::PinsXminSecondsRole, "pinsXmin"},
    {LocksModel::LockIdRole, "lockId"},
};

QString quoted(QString s) {
    s.replace(QLatin1Char('\\'), QLatin1String("\\\\")).replace(QLatin1Char('\n'), QLatin1String("\\n"));
    return QLatin1Char('"') + s + QLatin1Char('"');
}

// A value as one line of text. Times that move with the clock since the poll (live rows) are cut
// to whole seconds; the snapshot puts them half a second past a whole one, so the cut is stable.
QString text(const QVariant& v, bool live) {
    switch (v.typeId()) {
    case QMetaType::QString: return quoted(v.toString());
    case QMetaType::QByteArray: return QStringLiteral("bytes ") + quoted(QString::fromUtf8(v.toByteArray()));
    case QMetaType::Bool: return v.toBool() ? QStringLiteral("true") : QStringLiteral("false");
    case QMetaType::Int: return QStringLiteral("int ") + QString::number(v.toInt());
    case QMetaType::LongLong: return QStringLiteral("int64 ") + QString::number(v.toLongLong());
    case QMetaType::Double:
        return QStringLiteral("double ") + (live ? QString::number(std::floor(v.toDouble()), 'f', 0) : QString::number(v.toDouble(), 'f', 3));
    case QMetaType::QColor: return QStringLiteral("color ") + v.value<QColor>().name(QColor::HexArgb);
    case QMetaType::QFont: return v.value<QFont>().italic() ? QStringLiteral("font italic") : QStringLiteral("font plain");
    case QMetaType::QIcon: {
        const QIcon icon = v.value<QIcon>();
        return icon.isNull() ? QStringLiteral("icon null") : QStringLiteral("icon %1").arg(icon.availableSizes().size());
    }
    default: break;
    }
    if (v.canConvert<QList<int>>() && v.typeId() == qMetaTypeId<QList<int>>()) {
        QStringList pids;
        for (int p : v.value<QList<int>>()) pids << QString::number(p);
        return QStringLiteral("pids [") + pids.join(QLatin1Char(',')) + QLatin1Char(']');
    }
    if (v.typeId() == qMetaTypeId<LockId>()) {
        const LockId id = v.value<LockId>();
        return QStringLiteral("lockId %1/%2/%3").arg(id.form == KeyForm::int_pair ? 2 : 1).arg(id.tag.classid).arg(id.tag.objid);
    }
    return QStringLiteral("?%1").arg(QString::fromLatin1(v.typeName()));
}

QString rowLabel(const QModelIndex& idx) {
    QString name = QStringLiteral("K%1").arg(idx.data(LocksModel::KeyRole).toLongLong());
    if (idx.parent().isValid()) name += QStringLiteral("/w%1").arg(idx.data(LocksModel::PidsRole).value<QList<int>>().value(0));
    return name;
}

// Every cell of every row (in the model's order), one line per valid role.
QStringList dump(const LocksModel& model, bool live) {
    QStringList out;
    const auto add = [&](const QModelIndex& row) {
        const QString label = rowLabel(row);
        for (const auto& [role, name] : kRowRoles) {
            const QVariant v = row.data(role);
            for (int c = 1; c < LocksModel::ColumnCount; ++c)
                if (row.siblingAtColumn(c).data(role) != v)
                    out << QStringLiteral("%1 %2: %3 differs from column 0").arg(label, QString::fromLatin1(name), QString::fromLatin1(kColumnNames[c]));
            if (v.isValid()) out << QStringLiteral("%1 %2 %3").arg(label, QString::fromLatin1(name), text(v, live));
        }
        for (int c = 0; c < LocksModel::ColumnCount; ++c) {
            const QModelIndex idx = row.siblingAtColumn(c);
            for (const auto& [role, name] : kCellRoles) {
                const QVariant v = idx.data(role);
                if (v.isValid())
                    out << QStringLiteral("%1 %2 %3 %4").arg(label, QString::fromLatin1(kColumnNames[c]), QString::fromLatin1(name), text(v, live));
            }
        }
    };
    for (int r = 0; r < model.rowCount(); ++r) {
        const QModelIndex lock = model.index(r, 0);
        add(lock);
        for (int k = 0; k < model.rowCount(lock); ++k) add(model.index(k, 0, lock));
    }
    return out;
}

QStringList headers(const LocksModel& model) {
    QStringList out;
    for (int c = 0; c < LocksModel::ColumnCount; ++c)
        for (int role : {int(Qt::DisplayRole), int(Qt::ToolTipRole), int(Qt::TextAlignmentRole)})
            if (const QVariant v = model.headerData(c, Qt::Horizontal, role); v.isValid())
                out << QStringLiteral("header %1 %2 %3").arg(QString::fromLatin1(kColumnNames[c])).arg(role).arg(text(v, false));
    return out;
}

constexpr std::int64_t kCatalogued = 1001, kCollision = 1002, kTakenHere = 1003, kFromHolder = 1004, kEarlierHolder = 1005,
                       kPrefix = 1006, kUnknown = 1007, kMixed = 1008, kIdle = 1009, kOwn = 1010, kLongHold = 1011;

// The app's name sources, per key, through the one rule (decideLockName).
lockscope::LockName nameOf(const LockId& id, std::int64_t key, const std::optional<HolderName>& current) {
    lockscope::NameFacts facts;
    facts.holder = current;
    if (key == kCatalogued) facts.catalog = {QByteArrayLiteral("orders.daily-rollup")};
    if (key == kCollision) facts.catalog = {QByteArrayLiteral("a.one"), QByteArrayLiteral("b.two")};
    if (key == kTakenHere) facts.takenHere = QByteArrayLiteral("jobs.by-hand");
    if (key == kEarlierHolder && !current) facts.holder = HolderName{"billing.nightly", true, 777};
    return lockscope::decideLockName(id, key, facts);
}

// The fixed world: times are half a second past whole seconds (see text()).
void build(World& w) {
    w.add(kCatalogued, {101});
    w.add(kCollision, {102, 103});
    w.lock(kCollision).holders[1].shared = true;  // mixed
    w.add(kTakenHere, {104});
    w.add(kFromHolder, {105}).holder_name = HolderName{"svc.from-holder", true, 105};
    w.add(kEarlierHolder, {106});
    w.add(kPrefix, {107}).holder_name = HolderName{"a.very.long.name.cut.to.fit", false, 107};
    w.add(kUnknown, {108}, {201, 202, 203});
    w.add(kMixed, {109, 110});
    for (auto& h : w.lock(kMixed).holders) h.shared = true;
    w.add(kIdle, {111});
    w.add(kOwn, {112}, {204});
    w.add(kLongHold, {113, 114});
    w.addPair(7, -3, 115);

    Backend& idle = w.backend(111);
    idle.state = "idle in transaction";
    idle.state_change = w.now - 95;
    w.backend(109).state = "active";
    w.backend(110).state = "idle in transaction (aborted)";
    w.backend(110).state_change = w.now - 12;
    w.backend(102).client_addr = "192.0.2.7";
    w.backend(102).client_hostname = "app-7.example";
    w.backend(103).application_name = "batch";
    w.backend(103).usename = "bob";
    w.backend(103).query = "SELECT <b>not bold</b>\n  FROM   t";
    w.backend(113).application_name = "";
    w.backend(114).client_addr = "198.51.100.4";

    auto& waiters = w.lock(kUnknown).waiters;
    waiters[0].wait_start = w.now - 125.5;  // long wait, pins the xmin past the threshold
    waiters[0].xmin_age = 42;
    waiters[0].xmin_since = w.now - 90.5;
    waiters[1].wait_start.reset();  // PostgreSQL before 14
    waiters[1].shared = true;
    waiters[1].xmin_age = 3;  // pins it, under the threshold
    waiters[1].xmin_since = w.now - 2.5;
    waiters[2].blocked_by = {108, 300};
    waiters[2].wait_start = w.now - 70.5;
    w.lock(kOwn).waiters[0].wait_start = w.now - 60.5;
    w.backend(201).application_name = "worker";
    w.backend(201).state = "active";
    w.backend(201).client_addr = "192.0.2.1";
    w.backend(202).query.clear();
}

}  // namespace

class TestLockCells : public QObject {
    Q_OBJECT

private slots:
    void every_cell_of_a_fixed_snapshot_is_as_recorded() {
        lockscope::theme::apply(lockscope::theme::Mode::light);
        LocksModel model;
        World world;
        build(world);
        const auto snap = world.make();
        // The waiter 203 has no pg_stat_activity row (it left between the two queries).
        auto copy = std::make_shared<Snapshot>(*snap);
        copy->backends.erase(203);
        model.setNamer(nameOf);
        model.setHeldSinceProvider([&world](const LockId& id, int pid) -> std::optional<double> {
            if (id.tag.objid == static_cast<std::uint32_t>(kLongHold)) return world.now - 3725.5;
            if (pid == 108) return world.now - 65.5;
            if (pid == 101) return world.now - 0.5;  // shown only stale: under a second moves too fast
            return std::nullopt;
        });
        model.setOwnPids({112, 204, 102});
        model.applySnapshot(copy);

        QStringList lines = headers(model);
        lines << QStringLiteral("-- live");
        for (QString line : dump(model, true)) {
            if (line.startsWith(QLatin1String("K1001 HeldFor "))) continue;  // 0.5 s and counting
            lines << line;
        }
        model.setStale(true);
        lines << QStringLiteral("-- stale");
        lines << dump(model, false);
        lockscope::theme::apply(lockscope::theme::Mode::system);

        // Every column shows something in some lock row: a column with no cell data is a gap.
        for (int c = 0; c < LocksModel::ColumnCount; ++c) {
            const QString prefix = QStringLiteral(" %1 display \"").arg(QString::fromLatin1(kColumnNames[c]));
            QVERIFY2(std::any_of(lines.begin(), lines.end(), [&](const QString& l) { return l.contains(prefix) && !l.endsWith(prefix); }),
                     kColumnNames[c]);
        }

        const QString path = QStringLiteral(PGLOCK_TEST_SOURCE_DIR "/tests/ui/golden/lock_cells.txt");
        const QByteArray actual = lines.join(QLatin1Char('\n')).toUtf8() + '\n';
        if (qEnvironmentVariableIsSet("LOCKSCOPE_GOLDEN_UPDATE")) {
            QFile out(path);
            QVERIFY2(out.open(QIODevice::WriteOnly | QIODevice::Truncate), qPrintable(out.errorString()));
            out.write(actual);
        }
        QFile in(path);
        QVERIFY2(in.open(QIODevice::ReadOnly), qPrintable(path + QStringLiteral(": ") + in.errorString()));
        const QStringList expected = QString::fromUtf8(in.readAll()).split(QLatin1Char('\n'));
        const QStringList got = QString::fromUtf8(actual).split(QLatin1Char('\n'));
        for (qsizetype i = 0; i < std::min(expected.size(), got.size()); ++i)
            QVERIFY2(expected[i] == got[i], qPrintable(QStringLiteral("line %1:\n  expected: %2\n  actual:   %3").arg(i + 1).arg(expected[i], got[i])));
        QCOMPARE(got.size(), expected.size());
    }
};

QTEST_MAIN(TestLockCells)
#include "test_lock_cells.moc"
