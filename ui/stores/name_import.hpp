// Text lists of lock names in the app: the list format itself (parse, escape, printable form) is
// core's (pglock/name_list.hpp, shared with `pglock status --catalog`); here are its Qt forms, the
// isolation of a name inside other text, and the guarded file read both importers use. No
// database and no GUI here, so the parsing is testable on its own and can run off the GUI thread.
#pragma once

#include <QByteArray>
#include <QByteArrayView>
#include <QList>
#include <QString>
#include <QStringList>

#include <optional>

#include "pglock/name_list.hpp"

namespace lockscope {

// Where a name was read: a file (relative to a scanned tree's root, or the imported file's
// path) and a 1-based line.
struct NameSource {
    QByteArray name;
    QString file;
    int line = 0;
};

namespace names {

constexpr qint64 kMaxImportBytes = static_cast<qint64>(pglock::max_name_list_bytes);

// pglock::escape_name: one name as one line of the list format (no line terminator).
QByteArray escapeName(QByteArrayView name);
// pglock::printable_name as text: how the app shows a name (exactly its exported line).
QString printable(QByteArrayView name);
// `text` between FIRST STRONG ISOLATE and POP DIRECTIONAL ISOLATE: a right-to-left name inside
// other text ("%1 (from holder)") keeps the text around it in place.
QString isolated(const QString& text);
// pglock::unescape_name: the inverse for one already-trimmed line; nullopt with *why set for an
// unknown or cut escape.
std::optional<QByteArray> unescapeName(QByteArrayView line, QString* why = nullptr);

struct NameList {
    QList<NameSource> names;  // file is left empty; line is 1-based
    QStringList warnings;     // "line N: ..." for each skipped line
    int skipped = 0;
};
// pglock::parse_name_list, with a warning per skipped line (pglock::describe). The caller has
// already rejected binary content (see readTextFile).
NameList parseNameList(QByteArrayView content);

// The whole file, or an error that names the path: missing, a directory, unreadable, larger than
// maxBytes, or (when rejectNul) containing a NUL byte, which no text list has: that is a binary
// file picked by mistake, and importing its "lines" would fill the catalog with junk.
struct FileRead {
    QByteArray data;
    QString error;  // empty on success
};
FileRead readTextFile(const QString& path, qint64 maxBytes, bool rejectNul);

}  // namespace names
}  // namespace lockscope
