#include "actions/terminate_impact.hpp"

#include <QCoreApplication>
#include <QStringList>

#include "models/lock_cells.hpp"
#include "models/locks_model.hpp"
#include "models/server_text.hpp"

namespace lockscope {

namespace {

QString tr(const char* text) { return QCoreApplication::translate("TerminateImpact", text); }

constexpr int kMaxLocksListed = 12;  // a session with thousands of locks: the count says the rest

QString lockLine(const pglock::monitor::HeldLock& lock, const TerminateImpactFacts& facts) {
    const QString what = lock.advisory_key && facts.nameOfKey
                             ? tr("advisory %1 (key %2)").arg(facts.nameOfKey(*lock.advisory_key)).arg(*lock.advisory_key)
                             : serverText(lock.object);
    return QStringLiteral("  \u2022 %1, %2").arg(what, serverText(lock.mode));
}

}  // namespace

bool isPooledBackend(const TerminateImpactFacts& facts) {
    const auto& i = facts.impact;
    pglock::monitor::Backend b;
    b.pid = i.pid;
    b.state = i.state;
    b.application_name = i.application_name;
    b.client_hostname = i.client_hostname;
    b.query = i.query;
    if (!pglock::monitor::pooler_hint(b).empty()) return true;
    if (facts.evidence)
        for (const auto& e : *facts.evidence)
            if (pglock::monitor::pooler_sign(e.sign)) return true;
    return false;
}

QString terminateImpactText(const TerminateImpactFacts& facts) {
    const auto& i = facts.impact;
    if (!i.found) return tr("PID %1 is no backend of this server any more: there is nothing to terminate.").arg(i.pid);
    QStringList lines;
    int held = 0;
    for (const auto& l : i.locks) held += l.granted ? 1 : 0;
    lines << (held == 1 ? tr("It holds 1 lock:") : tr("It holds %1 locks:").arg(held));
    int listed = 0;
    for (const auto& l : i.locks) {
        if (!l.granted) continue;
        if (listed++ == kMaxLocksListed) {
            lines << tr("  \u2022 … and %1 more").arg(held - kMaxLocksListed);
            break;
        }
        lines << lockLine(l, facts);
    }
    for (const auto& l : i.locks)
        if (!l.granted) lines << tr("It waits for:") << lockLine(l, facts);

    if (i.waiting_pids.empty()) {
        lines << tr("No session waits on it.");
    } else {
        QStringList pids;
        for (const int p : i.waiting_pids) pids << QString::number(p);
        lines << tr("%1 waiting on it (PID %2): they get its locks once it is gone.")
                     .arg(i.waiting_pids.size() == 1 ? tr("1 session is") : tr("%1 sessions are").arg(i.waiting_pids.size()))
                     .arg(pids.join(QStringLiteral(", ")));
    }

    if (isPooledBackend(facts)) {
        lines << tr("A pooled backend: a connection pooler may be serving other clients on it; terminating it breaks "
                    "whichever client has it now.");
        pglock::monitor::Backend b;
        b.state = i.state;
        b.application_name = i.application_name;
        b.client_hostname = i.client_hostname;
        b.query = i.query;
        if (const std::string hint = pglock::monitor::pooler_hint(b); !hint.empty())
            lines << QStringLiteral("  \u2022 ") + serverText(hint);
        if (facts.evidence)
            for (const auto& e : *facts.evidence)
                if (pglock::monitor::pooler_sign(e.sign)) lines << QStringLiteral("  \u2022 ") + serverText(e.text);
    } else {
        lines << tr("No sign of a connection pooler in front of it.");
    }
    if (facts.evidence)
        for (const auto& e : *facts.evidence)
            if (!pglock::monitor::pooler_sign(e.sign)) lines << tr("Probably orphaned: %1").arg(serverText(e.text));

    if (const auto age = i.transaction_age()) {
        const QString open = tr("Its transaction has been open for %1").arg(LocksModel::formatDuration(*age));
        lines << (i.wrote ? open + tr(" and has written: terminating rolls its changes back.")
                          : open + tr(" and has written nothing: no work is rolled back."));
    } else {
        lines << tr("No transaction is open: no work is rolled back; its session-level locks are released.");
    }
    return lines.join(QLatin1Char('\n'));
}

}  // namespace lockscope
