#include "history/history_csv.hpp"

#include <QDateTime>
#include <QStringList>

#include "pglock/text.hpp"
#include "stores/name_import.hpp"

namespace lockscope::history::csv {
namespace {

QByteArray utcIso(double epochSeconds) {
    const auto ms = static_cast<qint64>(epochSeconds * 1000.0 + (epochSeconds >= 0 ? 0.5 : -0.5));
    return QDateTime::fromMSecsSinceEpoch(ms, Qt::UTC).toString(Qt::ISODateWithMs).toUtf8();
}

bool printable(const QByteArray& name) {
    if (!pglock::is_valid_utf8(name.toStdString())) return false;
    for (char c : name) {
        const auto u = static_cast<unsigned char>(c);
        if ((u < 0x20 && c != '\n' && c != '\r' && c != '\t') || u == 0x7f) return false;
    }
    return true;
}

}  // namespace

QByteArray field(QByteArrayView value) {
    bool quote = false;
    for (char c : value) {
        if (c == ',' || c == '"' || c == '\r' || c == '\n') {
            quote = true;
            break;
        }
    }
    if (!quote) return value.toByteArray();
    QByteArray out;
    out.reserve(value.size() + 8);
    out.append('"');
    for (char c : value) {
        if (c == '"') out.append('"');
        out.append(c);
    }
    out.append('"');
    return out;
}

QByteArray readableName(const QByteArray& name) { return printable(name) ? name : names::escapeName(name); }

QByteArray headerLine() {
    return QByteArrayLiteral(
        "kind,name,name_escaped,key,form,pid,application,user,mode,started,ended,duration_s,waited_on,name_source\r\n");
}

QByteArray line(const Record& r) {
    QByteArrayList waitedOn;
    for (int pid : r.waitedOn) waitedOn << QByteArray::number(pid);
    // A holder's cut name is no name: it stays out of the name columns (its source says it was seen).
    const bool whole = r.name && r.nameSource != LockNameSource::holderPrefix;
    const QByteArrayList fields = {
        r.kind == Kind::hold ? QByteArrayLiteral("hold") : QByteArrayLiteral("wait"),
        field(whole ? readableName(*r.name) : QByteArray()),
        field(whole ? names::escapeName(*r.name) : QByteArray()),
        QByteArray::number(r.key),
        r.intPair ? QByteArrayLiteral("int4 pair") : QByteArrayLiteral("bigint"),
        QByteArray::number(r.pid),
        field(r.application.toUtf8()),
        field(r.user.toUtf8()),
        r.shared ? QByteArrayLiteral("shared") : QByteArrayLiteral("exclusive"),
        utcIso(r.started),
        utcIso(r.ended),
        QByteArray::number(r.duration(), 'f', 3),
        waitedOn.join(' '),
        nameSourceText(r.nameSource).toUtf8(),  // last: consumers of the older columns keep their positions
    };
    return fields.join(',') + "\r\n";
}

}  // namespace lockscope::history::csv
