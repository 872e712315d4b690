#include "models/lock_columns.hpp"

#include "models/lock_facts.hpp"

#include <QtGlobal>

#include <algorithm>
#include <iterator>
#include <string_view>

namespace lockscope::columns {

namespace {

using namespace facts;
using pglock::monitor::Backend;

// ---- lock rows ------------------------------------------------------------------------------

bool never(const LockChange&) { return false; }

// The name follows what the holders' application_name says (the rule in lock_naming.hpp); its
// tooltip also names the holder it came from.
bool nameChanged(const LockChange& c) {
    const auto& a = c.before.holder_name;
    const auto& b = c.after.holder_name;
    if (a.has_value() != b.has_value()) return true;
    return a && (a->name != b->name || a->verified != b->verified || a->pid != b->pid);
}

bool modeChanged(const LockChange& c) { return modeOf(c.before) != modeOf(c.after); }

// Text: the pids. Tooltip: per holder its mode, application, address, host and query.
bool holdersChanged(const LockChange& c) {
    if (!sameHolders(c.before, c.after)) return true;
    for (auto member : {&Backend::query, &Backend::application_name, &Backend::client_hostname})
        if (!sameHolderField(c.before, c.then, c.after, c.now, member)) return true;
    for (const auto& h : c.after.holders)
        if (clientOf(backendOf(c.then, h.pid)) != clientOf(backendOf(c.now, h.pid))) return true;
    return false;
}

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

bool applicationChanged(const LockChange& c) { return !sameDistinct(c.before, c.then, c.after, c.now, Field::application); }
bool userChanged(const LockChange& c) { return !sameDistinct(c.before, c.then, c.after, c.now, Field::user); }
bool clientChanged(const LockChange& c) {
    return !sameDistinct(c.before, c.then, c.after, c.now, Field::client) ||
           !sameDistinct(c.before, c.then, c.after, c.now, Field::host);
}
// Since the oldest current holder took it: another set of holders, another start.
bool heldForChanged(const LockChange& c) { return !samePids(c.before, c.after); }
bool waitersChanged(const LockChange& c) { return c.before.waiters.size() != c.after.waiters.size(); }

// ---- waiter rows ----------------------------------------------------------------------------

std::string_view fieldOf(const Backend* b, std::string Backend::*member) { return b ? std::string_view(b->*member) : std::string_view(); }

bool waiterNever(const WaiterChange&) { return false; }  // "waiting: pid N" and empty cells
bool waiterModeChanged(const WaiterChange& c) { return c.before.shared != c.after.shared; }
bool waiterHoldersChanged(const WaiterChange& c) { return c.before.blocked_by != c.after.blocked_by; }
bool waiterStateChanged(const WaiterChange& c) {
    return fieldOf(c.beforeSession, &Backend::state) != fieldOf(c.afterSession, &Backend::state);
}
bool waiterApplicationChanged(const WaiterChange& c) {
    return fieldOf(c.beforeSession, &Backend::application_name) != fieldOf(c.afterSession, &Backend::application_name);
}
bool waiterUserChanged(const WaiterChange& c) {
    return fieldOf(c.beforeSession, &Backend::usename) != fieldOf(c.afterSession, &Backend::usename);
}
bool waiterClientChanged(const WaiterChange& c) { return clientOf(c.beforeSession) != clientOf(c.afterSession); }
// "waiting 3.1 s, pins xmin for 45.0 s", and the tooltip on the xmin's age.
bool waiterHeldForChanged(const WaiterChange& c) {
    return c.before.wait_start != c.after.wait_start || c.before.xmin_since != c.after.xmin_since ||
           c.before.xmin_age != c.after.xmin_age;
}

using L = LocksModel;

// The one table. A new column: a Column value in locks_model.hpp, an entry here (in the same
// place), its cell data in LocksModel::lockData() and waiterData().
constexpr ColumnSpec kColumns[] = {
    {L::Name, QT_TRANSLATE_NOOP("LocksModel", "Name"), QT_TRANSLATE_NOOP("LocksModel", "The lock's name from the catalog, or \"unknown\""),
     false, Asked::everyPoll, nameChanged, waiterNever, false},
    {L::Key, QT_TRANSLATE_NOOP("LocksModel", "Key"), QT_TRANSLATE_NOOP("LocksModel", "The advisory key (bigint) as pg_advisory_lock takes it"),
     true, Asked::never, never, waiterNever, false},
    {L::Mode, QT_TRANSLATE_NOOP("LocksModel", "Mode"), nullptr, false, Asked::whenHoldersMoved, modeChanged, waiterModeChanged, false},
    {L::Holders, QT_TRANSLATE_NOOP("LocksModel", "Holders"), nullptr, false, Asked::whenHoldersMoved, holdersChanged,
     waiterHoldersChanged, false},
    {L::State, QT_TRANSLATE_NOOP("LocksModel", "State"),
     QT_TRANSLATE_NOOP("LocksModel", "The holders' session state; with several holders the worst one"), false,
     Asked::whenHoldersMovedOrIdle, stateChanged, waiterStateChanged, false},
    {L::Application, QT_TRANSLATE_NOOP("LocksModel", "Application"), nullptr, false, Asked::whenHoldersMoved,
     applicationChanged, waiterApplicationChanged, false},
    {L::User, QT_TRANSLATE_NOOP("LocksModel", "User"), nullptr, false, Asked::whenHoldersMoved, userChanged, waiterUserChanged, false},
    {L::Client, QT_TRANSLATE_NOOP("LocksModel", "Client"),
     QT_TRANSLATE_NOOP("LocksModel", "The client address; \"local\" for a unix-socket connection"), false,
     Asked::whenHoldersMoved, clientChanged, waiterClientChanged, false},
    {L::HeldFor, QT_TRANSLATE_NOOP("LocksModel", "Held for"),
     QT_TRANSLATE_NOOP("LocksModel", "Time since the oldest current holder took the lock"), true, Asked::whenHoldersMoved,
     heldForChanged, waiterHeldForChanged, true},
    {L::Waiters, QT_TRANSLATE_NOOP("LocksModel", "Waiters"), QT_TRANSLATE_NOOP("LocksModel", "Sessions waiting for the lock"), true,
     Asked::everyPoll, waitersChanged, waiterNever, false},
};

// A column without an entry, an entry out of place, or one that does not say what changes it
// does not build.
static_assert(std::size(kColumns) == L::ColumnCount, "one entry per LocksModel::Column");
consteval bool complete() {
    for (std::size_t i = 0; i < std::size(kColumns); ++i) {
        const ColumnSpec& c = kColumns[i];
        if (c.column != static_cast<L::Column>(i) || !c.header || !c.lockChanged || !c.waiterChanged) return false;
    }
    return true;
}
static_assert(complete(), "every column in Column order, with a header and both change predicates");

}  // namespace

const ColumnSpec& spec(int column) { return kColumns[column]; }

unsigned columnsAsked(Asked asked) {
    unsigned mask = 0;
    for (std::size_t c = 0; c < std::size(kColumns); ++c)
        if (kColumns[c].asked == asked) mask |= 1u << c;
    return mask;
}

}  // namespace lockscope::columns
