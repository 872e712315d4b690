#include "models/lock_columns.hpp"

#include "models/lock_facts.hpp"
#include "models/server_text.hpp"
#include "stores/name_import.hpp"
#include "theme/app_palette.hpp"

#include <QStringList>
#include <QtGlobal>

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <string_view>

namespace lockscope::columns {

namespace {

using namespace facts;
using pglock::monitor::Backend;
using pglock::monitor::Waiter;
using L = LocksModel;

// Each column below has its four functions together: what changes a lock row's cell and a waiter
// row's (old snapshot against new: does any role of the cell show something else?), and what
// each cell shows (see ColumnSpec). The one table, kColumns, is at the end.

QString tr(const char* text) { return L::tr(text); }

// A cell's own tint, as BackgroundRole and ForegroundRole give it (colours: app_palette.hpp).
QVariant tinted(int role, theme::Tint tint) {
    return role == Qt::BackgroundRole ? theme::background(tint) : theme::foreground(tint);
}
bool isTintRole(int role) { return role == Qt::BackgroundRole || role == Qt::ForegroundRole; }

bool never(const LockChange&) { return false; }
bool waiterNever(const WaiterChange&) { return false; }

std::string_view fieldOf(const Backend* b, std::string Backend::*member) { return b ? std::string_view(b->*member) : std::string_view(); }

// A cell that shows one text: `text` for DisplayRole (and so for sorting), nothing else.
QVariant textCell(int role, const QString& text) { return role == Qt::DisplayRole ? QVariant(text) : QVariant(); }

// ---- Name: the lock's name (lock_naming.hpp); waiters: "waiting: pid N" ----------------------

// The name follows what the holders' application_name says (the rule in lock_naming.hpp); its
// tooltip also names the holder it came from.
bool nameChanged(const LockChange& c) {
    const auto& a = c.before.holder_name;
    const auto& b = c.after.holder_name;
    if (a.has_value() != b.has_value()) return true;
    return a && (a->name != b->name || a->verified != b->verified || a->pid != b->pid);
}

QString nameTip(const LockRowView& row, const CellContext& ctx) {
    const auto& e = row.entry;
    QString tip;
    if (row.pair())
        tip = tr("pg_advisory_lock(int4, int4) with keys %1 and %2: not a named lock").arg(e.pair_first).arg(e.pair_second);
    else if (const LockName name = ctx.name(row); name.source == LockNameSource::catalog ||
                                                  name.source == LockNameSource::collision ||
                                                  name.source == LockNameSource::takenHere)
        tip = tr("%1\nkey %2").arg(name.text).arg(e.key);
    else if (name.source == LockNameSource::context)
        tip = tr("%1\nkey %2\nNot in the catalog: the key that library derives from this database's name and "
                 "schemas, computed here")
                  .arg(name.text)
                  .arg(e.key);
    else if (name.source == LockNameSource::holder && !(e.holder_name && e.holder_name->verified))
        tip = tr("%1\nkey %2\nNot in the catalog: read from the application_name of an earlier holder, and "
                 "verified (the name hashes to the key)")
                  .arg(name.text)
                  .arg(e.key);
    else if (e.holder_name && e.holder_name->verified)
        tip = tr("%1\nkey %2\nNot in the catalog: read from the application_name of its holder, pid %3, and "
                 "verified (the name hashes to the key)")
                  .arg(names::printable(QByteArray::fromStdString(e.holder_name->name)))
                  .arg(e.key)
                  .arg(e.holder_name->pid);
    else if (e.holder_name)
        tip = tr("No name known for key %1\nIts holder, pid %2, shows a name cut to fit application_name "
                 "(63 bytes) that starts with \"%3\": a prefix cannot be verified against the key")
                  .arg(e.key)
                  .arg(e.holder_name->pid)
                  .arg(names::printable(QByteArray::fromStdString(e.holder_name->name)));
    else
        tip = tr("No name known for key %1").arg(e.key);
    if (std::any_of(e.holders.begin(), e.holders.end(), [&](const auto& h) { return ctx.isOwnPid(h.pid); }))
        tip += tr("\nHeld by this application");
    return tip;
}

QVariant nameCell(const LockRowView& row, int role, const CellContext& ctx) {
    switch (role) {
    case Qt::DisplayRole: return row.pair() ? int4PairText(row.entry) : ctx.name(row).text;
    case Qt::ToolTipRole: return nameTip(row, ctx);
    default: return {};
    }
}
QVariant waiterNameCell(const WaiterRowView& w, int role, const CellContext&) {
    return textCell(role, tr("waiting: pid %1").arg(w.pid));
}

// ---- Key: the bigint key (tooltip: the pg_locks tag) -----------------------------------------

QVariant keyCell(const LockRowView& row, int role, const CellContext&) {
    switch (role) {
    // What the resolver reads back: "a, b" alone would be a classid/objid pair (another lock).
    case Qt::DisplayRole: return row.pair() ? int4PairText(row.entry) : QString::number(row.entry.key);
    case Qt::ToolTipRole:
        return tr("pg_locks: classid %1, objid %2, objsubid %3").arg(row.id.tag.classid).arg(row.id.tag.objid).arg(row.pair() ? 2 : 1);
    case L::SortRole: return QVariant::fromValue(static_cast<qint64>(row.entry.key));
    default: return {};
    }
}
QVariant waiterKeyCell(const WaiterRowView& w, int role, const CellContext&) {
    if (role == L::SortRole) return QVariant::fromValue(static_cast<qint64>(w.lock.entry.key));
    return textCell(role, QString());
}

// ---- Mode: exclusive / shared / mixed; waiters: the mode they asked for ----------------------

bool modeChanged(const LockChange& c) { return modeOf(c.before) != modeOf(c.after); }
bool waiterModeChanged(const WaiterChange& c) { return c.before.shared != c.after.shared; }

QString modeText(LockMode m) {
    switch (m) {
    case LockMode::exclusive: return QStringLiteral("exclusive");
    case LockMode::shared: return QStringLiteral("shared");
    case LockMode::mixed: return QStringLiteral("mixed");
    case LockMode::none: break;
    }
    return {};
}

QVariant modeCell(const LockRowView& row, int role, const CellContext&) { return textCell(role, modeText(modeOf(row.entry))); }
QVariant waiterModeCell(const WaiterRowView& w, int role, const CellContext&) {
    return textCell(role, w.waiter.shared ? QStringLiteral("shared") : QStringLiteral("exclusive"));
}

// ---- Holders: "123, 456" (tooltip: who each is and its query); waiters: "blocked by 123" -----

// Text: the pids. Tooltip: per holder its mode, application, address, host and query.
bool holdersChanged(const LockChange& c) {
    if (!sameHolders(c.before, c.after)) return true;
    for (auto member : {&Backend::query, &Backend::application_name, &Backend::client_hostname})
        if (!sameHolderField(c.before, c.then, c.after, c.now, member)) return true;
    for (const auto& h : c.after.holders)
        if (clientOf(backendOf(c.then, h.pid)) != clientOf(backendOf(c.now, h.pid))) return true;
    return false;
}
bool waiterHoldersChanged(const WaiterChange& c) { return c.before.blocked_by != c.after.blocked_by; }

// One line per holder, "pid N (shared):" and what `describe` says of its session; invalid without holders.
template <typename Describe>
QVariant perHolder(const LockRowView& row, Describe describe) {
    QStringList lines;
    for (const auto& h : row.entry.holders) {
        QString line = tr("pid %1%2:").arg(h.pid).arg(h.shared ? tr(" (shared)") : QString());
        describe(line, backendOf(row.snap, h.pid));
        lines << line;
    }
    return lines.isEmpty() ? QVariant() : QVariant(lines.join(QLatin1Char('\n')));
}

QVariant holdersCell(const LockRowView& row, int role, const CellContext& ctx) {
    switch (role) {
    case Qt::DisplayRole: {
        QString out;
        for (const auto& h : row.entry.holders) {
            if (!out.isEmpty()) out += QLatin1String(", ");
            out += QString::number(h.pid);
            // Taken by hand in this app: say so where the operator looks for who holds it.
            if (ctx.isOwnPid(h.pid)) out += tr(" (this app)");
        }
        return out;
    }
    case Qt::ToolTipRole:
        return perHolder(row, [](QString& line, const Backend* b) {
            // Who the holder is, as the server knows it: application, address, host.
            if (b) {
                QStringList who;
                if (!b->application_name.empty()) who << serverText(b->application_name);
                const QString host = b->client_hostname.empty() ? QString() : QStringLiteral(" (%1)").arg(serverText(b->client_hostname));
                if (!clientOf(b).empty()) who << serverText(clientOf(b)) + host;
                if (!who.isEmpty()) line += QLatin1Char(' ') + who.join(QStringLiteral(" \u2014 ")) + QLatin1Char('\n') + QStringLiteral("    ");
            }
            line += QLatin1Char(' ') + (b ? elidedQuery(b->query) : QString());
        });
    case L::SortRole:
        return QVariant::fromValue(static_cast<qint64>(row.entry.holders.empty() ? -1 : row.entry.holders.front().pid));
    default: return {};
    }
}

QString pidList(const std::vector<int>& pids) {
    QString out;
    for (int pid : pids) {
        if (!out.isEmpty()) out += QLatin1String(", ");
        out += QString::number(pid);
    }
    return out;
}

QVariant waiterHoldersCell(const WaiterRowView& w, int role, const CellContext&) {
    const auto& blockers = w.waiter.blocked_by;
    if (role == L::SortRole) return QVariant::fromValue(static_cast<qint64>(blockers.empty() ? -1 : blockers.front()));
    return textCell(role, blockers.empty() ? QString() : tr("blocked by %1").arg(pidList(blockers)));
}

// ---- State: the holders' worst session state (tooltip: each one's); waiters: their own -------

// How long `b` has been idle in transaction by `s`'s clock; < 0 when it is not.
double idleFor(const Snapshot& s, const Backend* b) {
    if (!b || !isIdleInTx(b->state) || !b->state_change) return -1;
    return s.server_now - *b->state_change;
}

// Text: the worst state. Tooltip: per holder its mode, state and time idle in transaction.
bool stateChanged(const LockChange& c) {
    if (!sameHolders(c.before, c.after) || worstState(c.before, c.then) != worstState(c.after, c.now) ||
        !sameHolderField(c.before, c.then, c.after, c.now, &Backend::state))
        return true;
    for (const auto& h : c.after.holders)
        if (idleFor(c.then, backendOf(c.then, h.pid)) != idleFor(c.now, backendOf(c.now, h.pid))) return true;
    return false;
}
bool waiterStateChanged(const WaiterChange& c) {
    return fieldOf(c.beforeSession, &Backend::state) != fieldOf(c.afterSession, &Backend::state);
}

// A holder that is probably orphaned (pglock/orphan.hpp) marks the cell; the tooltip gives the
// evidence under the holder's line.
// Only the evidence that speaks of this row's lock: an unclaimed key marks its own row, not the
// locks its application claims on the same backend (pglock::monitor::about_lock).
bool orphanedHere(const LockRowView& row, int pid, const CellContext& ctx) {
    const auto* evidence = ctx.model().orphanEvidence(pid);
    return evidence && std::any_of(evidence->begin(), evidence->end(),
                                   [&](const auto& e) { return pglock::monitor::about_lock(e, row.entry); });
}
bool anyOrphan(const LockRowView& row, const CellContext& ctx) {
    return std::any_of(row.entry.holders.begin(), row.entry.holders.end(),
                       [&](const auto& h) { return orphanedHere(row, h.pid, ctx); });
}

QVariant stateCell(const LockRowView& row, int role, const CellContext& ctx) {
    switch (role) {
    case Qt::DisplayRole: return serverText(worstState(row.entry, row.snap));
    case Qt::DecorationRole: return anyOrphan(row, ctx) ? QVariant(theme::orphanIcon()) : QVariant();
    case Qt::ToolTipRole: {
        QString tip = perHolder(row, [&row](QString& line, const Backend* b) {
            line += QLatin1Char(' ') + (b ? serverText(b->state) : QString());
            if (b && isIdleInTx(b->state) && b->state_change)
                line += tr(" for %1").arg(L::formatDuration(row.snap.server_now - *b->state_change));
        }).toString();
        for (const auto& h : row.entry.holders) {
            if (!orphanedHere(row, h.pid, ctx)) continue;
            tip += tr("\nPID %1 is probably orphaned:").arg(h.pid);
            for (const auto& e : *ctx.model().orphanEvidence(h.pid))
                if (pglock::monitor::about_lock(e, row.entry)) tip += QStringLiteral("\n  \u2022 ") + serverText(e.text);
        }
        return tip;
    }
    default: return {};
    }
}
QVariant waiterStateCell(const WaiterRowView& w, int role, const CellContext&) {
    return textCell(role, w.backend ? serverText(w.backend->state) : QString());
}

// ---- Application, User: the holders' distinct values; waiters: their own ---------------------

bool applicationChanged(const LockChange& c) { return !sameDistinct(c.before, c.then, c.after, c.now, Field::application); }
bool waiterApplicationChanged(const WaiterChange& c) {
    return fieldOf(c.beforeSession, &Backend::application_name) != fieldOf(c.afterSession, &Backend::application_name);
}

QString distinctText(const LockRowView& row, Field f) {
    std::vector<std::string_view> values;
    distinctValues(row.entry, row.snap, f, values);
    return joinedText(values);
}

QVariant applicationCell(const LockRowView& row, int role, const CellContext&) { return textCell(role, distinctText(row, Field::application)); }
QVariant waiterApplicationCell(const WaiterRowView& w, int role, const CellContext&) {
    return textCell(role, w.backend ? serverText(w.backend->application_name) : QString());
}

bool userChanged(const LockChange& c) { return !sameDistinct(c.before, c.then, c.after, c.now, Field::user); }
bool waiterUserChanged(const WaiterChange& c) {
    return fieldOf(c.beforeSession, &Backend::usename) != fieldOf(c.afterSession, &Backend::usename);
}

QVariant userCell(const LockRowView& row, int role, const CellContext&) { return textCell(role, distinctText(row, Field::user)); }
QVariant waiterUserCell(const WaiterRowView& w, int role, const CellContext&) {
    return textCell(role, w.backend ? serverText(w.backend->usename) : QString());
}

// ---- Client: addresses ("local": unix socket), "(hostnames)" after them ----------------------

bool clientChanged(const LockChange& c) {
    return !sameDistinct(c.before, c.then, c.after, c.now, Field::client) ||
           !sameDistinct(c.before, c.then, c.after, c.now, Field::host);
}
bool waiterClientChanged(const WaiterChange& c) { return clientOf(c.beforeSession) != clientOf(c.afterSession); }

QVariant clientCell(const LockRowView& row, int role, const CellContext&) {
    if (role != Qt::DisplayRole) return {};
    QString out = distinctText(row, Field::client);
    if (const QString hosts = distinctText(row, Field::host); !hosts.isEmpty()) out += QStringLiteral(" (%1)").arg(hosts);
    return out;
}
QVariant waiterClientCell(const WaiterRowView& w, int role, const CellContext&) { return textCell(role, serverText(clientOf(w.backend))); }

// ---- Held for: since the oldest holder took it; waiters: "waiting 3.1 s, pins xmin for 45.0 s"

// Since the oldest current holder took it: another set of holders, another start.
bool heldForChanged(const LockChange& c) { return !samePids(c.before, c.after); }
// The wait, the xmin pin, and the tooltip on the xmin's age.
bool waiterHeldForChanged(const WaiterChange& c) {
    return c.before.wait_start != c.after.wait_start || c.before.xmin_since != c.after.xmin_since ||
           c.before.xmin_age != c.after.xmin_age;
}

QVariant heldForCell(const LockRowView& row, int role, const CellContext& ctx) {
    const auto held = ctx.heldSeconds(row);
    switch (role) {
    case Qt::DisplayRole: return held ? L::formatDuration(*held) : QString();
    case L::SortRole: return held.value_or(-1.0);
    default:
        if (isTintRole(role) && held.value_or(0) >= ctx.model().longHoldThreshold()) return tinted(role, theme::Tint::attention);
        return {};
    }
}

QVariant waiterHeldForCell(const WaiterRowView& w, int role, const CellContext& ctx) {
    const Waiter& wt = w.waiter;
    const auto waited = [&]() -> std::optional<double> {
        if (!wt.wait_start) return std::nullopt;  // PostgreSQL before 14 has no waitstart
        return std::max(0.0, ctx.now() - *wt.wait_start);
    };
    // Past the threshold: how long the waiter's snapshot has pinned the xmin horizon, moved on by
    // the time since the poll like the wait itself.
    const auto pinned = [&]() -> std::optional<double> {
        const auto since = pglock::monitor::xmin_pinned_seconds(wt, w.lock.snap.server_now);
        if (!since) return std::nullopt;
        const double seconds = *since + std::max(0.0, ctx.now() - w.lock.snap.server_now);
        if (seconds < ctx.model().xminPinThreshold()) return std::nullopt;
        return seconds;
    };
    switch (role) {
    case Qt::DisplayRole: {
        const auto secs = waited();
        QString text = secs ? tr("waiting %1").arg(L::formatDuration(*secs)) : tr("waiting");
        if (const auto pin = pinned()) text += tr(", pins xmin for %1").arg(L::formatDuration(*pin));
        return text;
    }
    case Qt::ToolTipRole:
        if (!wt.xmin_age) return {};
        return L::tr("This waiter's snapshot (backend_xmin, %n transactions old) holds back VACUUM and CREATE INDEX "
                     "CONCURRENTLY while it waits. pglock's poll strategy waits without one.",
                     nullptr, static_cast<int>(std::min<std::int64_t>(*wt.xmin_age, INT32_MAX)));
    case L::SortRole: return waited().value_or(-1.0);
    default:
        if (isTintRole(role) && (pinned() || waited().value_or(0) >= ctx.model().longWaitThreshold()))
            return tinted(role, theme::Tint::attention);
        return {};
    }
}

// ---- Waiters: how many sessions wait (a clock icon and a tint beside it when any) ------------

bool waitersChanged(const LockChange& c) { return c.before.waiters.size() != c.after.waiters.size(); }

QVariant waitersCell(const LockRowView& row, int role, const CellContext&) {
    const auto n = row.entry.waiters.size();
    switch (role) {
    case Qt::DisplayRole: return n == 0 ? QString() : QString::number(n);
    case Qt::ToolTipRole:
        if (n == 0) return {};
        return n == 1 ? tr("1 session waiting for this lock") : tr("%1 sessions waiting for this lock").arg(n);
    case Qt::DecorationRole: return n == 0 ? QVariant() : QVariant(theme::waitersIcon());
    case L::SortRole: return static_cast<int>(n);
    default:
        if (isTintRole(role) && n > 0) return tinted(role, theme::Tint::contended);
        return {};
    }
}
QVariant waiterWaitersCell(const WaiterRowView&, int role, const CellContext&) {
    if (role == L::SortRole) return 0;
    return textCell(role, QString());
}

// The one table. A new column: a Column value in locks_model.hpp and its entry here, in the same
// place, with its functions above.
constexpr ColumnSpec kColumns[] = {
    {.column = L::Name,
     .header = QT_TRANSLATE_NOOP("LocksModel", "Name"),
     .headerTip = QT_TRANSLATE_NOOP("LocksModel", "The lock's name from the catalog, or \"unknown\""),
     .alignRight = false,
     .asked = Asked::everyPoll,
     .lockChanged = nameChanged,
     .waiterChanged = waiterNever,  // "waiting: pid N"
     .lockCell = nameCell,
     .waiterCell = waiterNameCell,
     .ticks = false},
    {.column = L::Key,
     .header = QT_TRANSLATE_NOOP("LocksModel", "Key"),
     .headerTip = QT_TRANSLATE_NOOP("LocksModel", "The advisory key (bigint) as pg_advisory_lock takes it"),
     .alignRight = true,
     .asked = Asked::never,
     .lockChanged = never,
     .waiterChanged = waiterNever,  // empty
     .lockCell = keyCell,
     .waiterCell = waiterKeyCell,
     .ticks = false},
    {.column = L::Mode,
     .header = QT_TRANSLATE_NOOP("LocksModel", "Mode"),
     .headerTip = nullptr,
     .alignRight = false,
     .asked = Asked::whenHoldersMoved,
     .lockChanged = modeChanged,
     .waiterChanged = waiterModeChanged,
     .lockCell = modeCell,
     .waiterCell = waiterModeCell,
     .ticks = false},
    {.column = L::Holders,
     .header = QT_TRANSLATE_NOOP("LocksModel", "Holders"),
     .headerTip = nullptr,
     .alignRight = false,
     .asked = Asked::whenHoldersMoved,
     .lockChanged = holdersChanged,
     .waiterChanged = waiterHoldersChanged,
     .lockCell = holdersCell,
     .waiterCell = waiterHoldersCell,
     .ticks = false},
    {.column = L::State,
     .header = QT_TRANSLATE_NOOP("LocksModel", "State"),
     .headerTip = QT_TRANSLATE_NOOP("LocksModel", "The holders' session state; with several holders the worst one"),
     .alignRight = false,
     .asked = Asked::whenHoldersMovedOrIdle,
     .lockChanged = stateChanged,
     .waiterChanged = waiterStateChanged,
     .lockCell = stateCell,
     .waiterCell = waiterStateCell,
     .ticks = false},
    {.column = L::Application,
     .header = QT_TRANSLATE_NOOP("LocksModel", "Application"),
     .headerTip = nullptr,
     .alignRight = false,
     .asked = Asked::whenHoldersMoved,
     .lockChanged = applicationChanged,
     .waiterChanged = waiterApplicationChanged,
     .lockCell = applicationCell,
     .waiterCell = waiterApplicationCell,
     .ticks = false},
    {.column = L::User,
     .header = QT_TRANSLATE_NOOP("LocksModel", "User"),
     .headerTip = nullptr,
     .alignRight = false,
     .asked = Asked::whenHoldersMoved,
     .lockChanged = userChanged,
     .waiterChanged = waiterUserChanged,
     .lockCell = userCell,
     .waiterCell = waiterUserCell,
     .ticks = false},
    {.column = L::Client,
     .header = QT_TRANSLATE_NOOP("LocksModel", "Client"),
     .headerTip = QT_TRANSLATE_NOOP("LocksModel", "The client address; \"local\" for a unix-socket connection"),
     .alignRight = false,
     .asked = Asked::whenHoldersMoved,
     .lockChanged = clientChanged,
     .waiterChanged = waiterClientChanged,
     .lockCell = clientCell,
     .waiterCell = waiterClientCell,
     .ticks = false},
    {.column = L::HeldFor,
     .header = QT_TRANSLATE_NOOP("LocksModel", "Held for"),
     .headerTip = QT_TRANSLATE_NOOP("LocksModel", "Time since the oldest current holder took the lock"),
     .alignRight = true,
     .asked = Asked::whenHoldersMoved,
     .lockChanged = heldForChanged,
     .waiterChanged = waiterHeldForChanged,
     .lockCell = heldForCell,
     .waiterCell = waiterHeldForCell,
     .ticks = true},
    {.column = L::Waiters,
     .header = QT_TRANSLATE_NOOP("LocksModel", "Waiters"),
     .headerTip = QT_TRANSLATE_NOOP("LocksModel", "Sessions waiting for the lock"),
     .alignRight = true,
     .asked = Asked::everyPoll,
     .lockChanged = waitersChanged,
     .waiterChanged = waiterNever,  // empty
     .lockCell = waitersCell,
     .waiterCell = waiterWaitersCell,
     .ticks = false},
};

// A column without an entry, an entry out of place, or one that does not say what changes it and
// what its cells show does not build.
static_assert(std::size(kColumns) == L::ColumnCount, "one entry per LocksModel::Column");
consteval bool complete() {
    for (std::size_t i = 0; i < std::size(kColumns); ++i) {
        const ColumnSpec& c = kColumns[i];
        if (c.column != static_cast<L::Column>(i) || !c.header || !c.lockChanged || !c.waiterChanged || !c.lockCell ||
            !c.waiterCell)
            return false;
    }
    return true;
}
static_assert(complete(), "every column in Column order, with a header, both change predicates and both cell functions");

}  // namespace

const ColumnSpec& spec(int column) { return kColumns[column]; }

unsigned columnsAsked(Asked asked) {
    unsigned mask = 0;
    for (std::size_t c = 0; c < std::size(kColumns); ++c)
        if (kColumns[c].asked == asked) mask |= 1u << c;
    return mask;
}

}  // namespace lockscope::columns
