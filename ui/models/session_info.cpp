#include "models/session_info.hpp"

#include "pglock/resolve.hpp"

#include <QDateTime>
#include <QStringList>

#include <cmath>

#include "models/locks_model.hpp"
#include "models/server_text.hpp"

namespace lockscope {

namespace {

// Every value the server gave, as every view shows it (server_text.hpp).
QString qs(const std::string& s) { return serverText(s); }

// "2024-05-01T14:03:07+02:00 (3 min 05 s ago)"
QString stamp(const std::optional<double>& when, double serverNow) {
    if (!when) return {};
    QString out = formatTimestamp(*when);
    if (serverNow > 0) out += QStringLiteral(" (%1 ago)").arg(LocksModel::formatDuration(serverNow - *when));
    return out;
}

// The lock as every view names it (lock_naming.hpp); without a namer, the rule with nothing known.
QString lockText(const pglock::monitor::LockEntry& e, const LockNamer& namer) {
    const pglock::monitor::LockId id = pglock::monitor::id_of(e);
    if (namer) return namer(id, e.key, e.holder_name).text;
    NameFacts facts;
    facts.holder = e.holder_name;
    return decideLockName(id, e.key, facts).text;
}

}  // namespace

QString formatTimestamp(double epochSeconds) {
    const auto ms = static_cast<qint64>(std::llround(epochSeconds * 1000.0));
    return QDateTime::fromMSecsSinceEpoch(ms, Qt::UTC).toOffsetFromUtc(QDateTime::fromMSecsSinceEpoch(ms).offsetFromUtc()).toString(Qt::ISODate);
}

QString SessionInfo::value(const QString& label) const {
    for (const auto& f : fields)
        if (f.label == label) return f.value;
    return {};
}

QString SessionInfo::toText() const {
    QStringList lines;
    for (const auto& f : fields) lines << f.label + QStringLiteral(": ") + f.value;
    return lines.join(QLatin1Char('\n'));
}

SessionInfo SessionInfo::from(const pglock::monitor::Snapshot& snap, int pid, const LockNamer& namer) {
    SessionInfo info;
    info.pid = pid;
    const auto it = snap.backends.find(pid);
    info.found = it != snap.backends.end();
    info.fields.append({QStringLiteral("PID"), QString::number(pid)});
    if (!info.found) return info;
    const pglock::monitor::Backend& b = it->second;

    QString client;
    if (!b.client_addr.empty())
        client = qs(b.client_addr) + (b.client_hostname.empty() ? QString() : QStringLiteral(" (%1)").arg(qs(b.client_hostname)));
    else if (!b.state.empty())  // visible but no address: a unix-socket client
        client = QStringLiteral("local (unix socket)");

    QString wait;
    if (!b.wait_event_type.empty()) wait = qs(b.wait_event_type) + QStringLiteral(": ") + qs(b.wait_event);

    // What this session holds and waits for, from the same snapshot.
    QStringList holds, waitsFor;
    for (const auto& lock : snap.locks) {
        for (const auto& h : lock.holders)
            if (h.pid == pid) holds << lockText(lock, namer) + (h.shared ? QStringLiteral(" (shared)") : QString());
        for (const auto& w : lock.waiters) {
            if (w.pid != pid) continue;
            QString line = lockText(lock, namer);
            if (!w.blocked_by.empty()) {
                QStringList by;
                for (int p : w.blocked_by) by << QString::number(p);
                line += QStringLiteral(" (blocked by %1)").arg(by.join(QStringLiteral(", ")));
            }
            waitsFor << line;
        }
    }

    info.fields.append({QStringLiteral("State"), qs(b.state)});
    info.fields.append({QStringLiteral("Application"), qs(b.application_name)});
    info.fields.append({QStringLiteral("User"), qs(b.usename)});
    info.fields.append({QStringLiteral("Client"), client});
    info.fields.append({QStringLiteral("Backend start"), stamp(b.backend_start, snap.server_now)});
    info.fields.append({QStringLiteral("Transaction start"), stamp(b.xact_start, snap.server_now)});
    info.fields.append({QStringLiteral("State change"), stamp(b.state_change, snap.server_now)});
    info.fields.append({QStringLiteral("Wait event"), wait});
    info.fields.append({QStringLiteral("Backend xmin age"),
                        b.backend_xmin_age ? QStringLiteral("%1 transactions").arg(*b.backend_xmin_age) : QString()});
    info.fields.append({QStringLiteral("Holds"), holds.join(QStringLiteral(", "))});
    info.fields.append({QStringLiteral("Waits for"), waitsFor.join(QStringLiteral(", "))});
    info.fields.append({QStringLiteral("Query"), serverQuery(b.query)});  // in full, on one line
    return info;
}

}  // namespace lockscope
