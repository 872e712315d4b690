#include "stores/name_import.hpp"

#include <QFile>
#include <QFileInfo>

namespace lockscope::names {
namespace {

std::string_view view(QByteArrayView bytes) noexcept { return {bytes.data(), static_cast<std::size_t>(bytes.size())}; }

QByteArray bytes(const std::string& s) { return QByteArray(s.data(), static_cast<qsizetype>(s.size())); }

}  // namespace

QByteArray escapeName(QByteArrayView name) { return bytes(pglock::escape_name(view(name))); }

QString printable(QByteArrayView name) { return QString::fromStdString(pglock::printable_name(view(name))); }

QString isolated(const QString& text) { return QChar(0x2068) + text + QChar(0x2069); }

std::optional<QByteArray> unescapeName(QByteArrayView line, QString* why) {
    std::string reason;
    std::optional<std::string> name = pglock::unescape_name(view(line), &reason);
    if (!name) {
        if (why) *why = QString::fromStdString(reason);
        return std::nullopt;
    }
    return bytes(*name);
}

NameList parseNameList(QByteArrayView content) {
    const pglock::NameList parsed = pglock::parse_name_list(view(content));
    NameList list;
    list.names.reserve(static_cast<qsizetype>(parsed.names.size()));
    for (const pglock::ListedName& n : parsed.names) list.names.append(NameSource{bytes(n.name), QString(), n.line});
    for (const pglock::SkippedLine& skipped : parsed.skipped) list.warnings << QString::fromStdString(pglock::describe(skipped));
    list.skipped = static_cast<int>(parsed.skipped.size());
    return list;
}

FileRead readTextFile(const QString& path, qint64 maxBytes, bool rejectNul) {
    const QFileInfo info(path);
    if (!info.exists()) return {{}, QStringLiteral("%1: no such file").arg(path)};
    if (info.isDir()) return {{}, QStringLiteral("%1: is a directory, not a file").arg(path)};
    // Checked before reading so that a huge file costs nothing; the bounded read below also
    // catches files whose size the file system does not know (pipes, /proc) or that grew since.
    if (info.size() > maxBytes)
        return {{}, QStringLiteral("%1: %2 bytes is more than the limit of %3 bytes").arg(path).arg(info.size()).arg(maxBytes)};
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly))
        return {{}, QStringLiteral("%1: cannot be read: %2").arg(path, file.errorString())};
    QByteArray data = file.read(maxBytes + 1);
    if (file.error() != QFileDevice::NoError)
        return {{}, QStringLiteral("%1: read failed: %2").arg(path, file.errorString())};
    if (data.size() > maxBytes)
        return {{}, QStringLiteral("%1: more than the limit of %2 bytes").arg(path).arg(maxBytes)};
    if (rejectNul) {
        const qsizetype nul = data.indexOf('\0');
        if (nul >= 0)
            return {{}, QStringLiteral("%1: a binary file (NUL byte at offset %2), not a text list of names; "
                                       "nothing was imported")
                            .arg(path)
                            .arg(nul)};
    }
    return {std::move(data), {}};
}

}  // namespace lockscope::names
