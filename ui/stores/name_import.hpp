// Text lists of lock names: the format the catalog exports and imports, and the guarded file read
// both importers use. No database and no GUI here, so the parsing is testable on its own and can
// run off the GUI thread.
//
// The list format, one name per line:
//   - a line is split at "\n"; one trailing "\r" is dropped (CRLF files work); a UTF-8 BOM at the
//     very start is dropped;
//   - leading and trailing spaces and tabs are trimmed; blank lines are ignored;
//   - a line whose first non-blank character is '#' is a comment (only whole lines: '#' inside a
//     name is part of the name);
//   - backslash escapes: \\  \n  \r  \t  and \xHH (exactly two hex digits) for any byte. These are
//     the escapes `pglock key` uses in its TSV output, plus \xHH. Any other escape makes the line
//     unusable: it is skipped with a warning rather than guessed at;
//   - the raw line must be valid UTF-8; a line that is not (say a Latin-1 file) is skipped with a
//     warning, because hashing those bytes would give a key the service never uses. Bytes that
//     really are not UTF-8 are written as \xHH.
// Export writes every name so that import gives back exactly the same bytes: \, newline, CR, tab,
// other control bytes, bytes that are not UTF-8, a leading '#', a leading U+FEFF (it reads as a
// BOM) and leading/trailing spaces are escaped; everything else is written as is.
#pragma once

#include <QByteArray>
#include <QByteArrayView>
#include <QList>
#include <QString>
#include <QStringList>

#include <optional>

namespace lockscope {

// Where a name was read: a file (relative to a scanned tree's root, or the imported file's
// path) and a 1-based line.
struct NameSource {
    QByteArray name;
    QString file;
    int line = 0;
};

namespace names {

constexpr qint64 kMaxImportBytes = 16 * 1024 * 1024;

// True when every byte sequence is well-formed UTF-8 (RFC 3629: no overlongs, no surrogates,
// nothing above U+10FFFF).
bool isValidUtf8(QByteArrayView bytes) noexcept;

// One name as one line of the list format (no line terminator). Code points a view or editor
// would obey instead of showing (bidi overrides, zero-width and C1 characters: see
// pglock/text.hpp) are written \uXXXX, which unescapeName() reads back.
QByteArray escapeName(QByteArrayView name);
// A name as the app shows it: exactly escapeName() as text, so control bytes and invalid UTF-8
// are visible, two different names never look the same, and the text can be copied back exactly.
QString printable(QByteArrayView name);
// Text from the server (application_name, user, query) as a view shows it: hidden code points
// written \uXXXX, the rest as is. Display only: nothing reads it back.
QString shownText(const QString& text);
// `text` between FIRST STRONG ISOLATE and POP DIRECTIONAL ISOLATE: a right-to-left name inside
// other text ("%1 (from holder)") keeps the text around it in place.
QString isolated(const QString& text);
// The inverse for one already-trimmed line; nullopt with *why set for an unknown or cut escape.
std::optional<QByteArray> unescapeName(QByteArrayView line, QString* why = nullptr);

struct NameList {
    QList<NameSource> names;  // file is left empty; line is 1-based
    QStringList warnings;     // "line N: ..." for each skipped line
    int skipped = 0;
};
// Parses list content. The caller has already rejected binary content (see readTextFile).
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
