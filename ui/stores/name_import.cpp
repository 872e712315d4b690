#include "stores/name_import.hpp"

#include <QFile>
#include <QFileInfo>

#include <algorithm>

#include "pglock/text.hpp"

namespace lockscope::names {
namespace {

// Length of the well-formed UTF-8 sequence starting at p[0], or 0 when there is none.
int utf8SequenceLength(const unsigned char* p, qsizetype n) noexcept {
    const unsigned c = p[0];
    if (c < 0x80) return 1;
    int len = 0;
    if (c >= 0xC2 && c <= 0xDF) len = 2;
    else if (c >= 0xE0 && c <= 0xEF) len = 3;
    else if (c >= 0xF0 && c <= 0xF4) len = 4;
    else return 0;  // continuation byte, overlong lead (C0/C1) or beyond U+10FFFF
    if (n < len) return 0;
    for (int k = 1; k < len; ++k)
        if ((p[k] & 0xC0) != 0x80) return 0;
    if (c == 0xE0 && p[1] < 0xA0) return 0;  // overlong 3-byte form
    if (c == 0xED && p[1] > 0x9F) return 0;  // UTF-16 surrogates
    if (c == 0xF0 && p[1] < 0x90) return 0;  // overlong 4-byte form
    if (c == 0xF4 && p[1] > 0x8F) return 0;  // above U+10FFFF
    return len;
}

// The code point of a well-formed sequence of `len` bytes (utf8SequenceLength said so).
char32_t codePoint(const unsigned char* p, int len) noexcept {
    if (len == 1) return p[0];
    char32_t cp = p[0] & (0xFF >> (len + 1));
    for (int k = 1; k < len; ++k) cp = (cp << 6) | (p[k] & 0x3F);
    return cp;
}

constexpr char kHex[] = "0123456789abcdef";

void appendHexEscape(QByteArray& out, unsigned char c) {
    out += "\\x";
    out += kHex[c >> 4];
    out += kHex[c & 0xF];
}

int hexValue(char c) noexcept {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

bool isBlank(char c) noexcept { return c == ' ' || c == '\t'; }

QByteArrayView trimBlanks(QByteArrayView s) noexcept {
    while (!s.isEmpty() && isBlank(s.front())) s = s.sliced(1);
    while (!s.isEmpty() && isBlank(s.back())) s.chop(1);
    return s;
}

}  // namespace

bool isValidUtf8(QByteArrayView bytes) noexcept {
    const auto* p = reinterpret_cast<const unsigned char*>(bytes.data());
    for (qsizetype i = 0, n = bytes.size(); i < n;) {
        const int len = utf8SequenceLength(p + i, n - i);
        if (len == 0) return false;
        i += len;
    }
    return true;
}

QString printable(QByteArrayView name) { return QString::fromUtf8(escapeName(name)); }

QString shownText(const QString& text) {
    QString out;
    bool escaped = false;
    for (qsizetype i = 0; i < text.size(); ++i) {
        const QChar c = text.at(i);
        // Surrogate pairs are never hidden (every hidden code point is in the BMP).
        if (!c.isSurrogate() && pglock::is_hidden_code_point(c.unicode())) {
            if (!escaped) out = text.left(i);
            escaped = true;
            out += QStringLiteral("\\u%1").arg(c.unicode(), 4, 16, QLatin1Char('0'));
        } else if (escaped) {
            out += c;
        }
    }
    return escaped ? out : text;
}

QString isolated(const QString& text) { return QChar(0x2068) + text + QChar(0x2069); }

QByteArray escapeName(QByteArrayView name) {
    const auto* p = reinterpret_cast<const unsigned char*>(name.data());
    const qsizetype n = name.size();
    // Spaces at either end would be trimmed on import, so those (and only those) are escaped.
    qsizetype lead = 0, trail = n;
    while (lead < n && p[lead] == ' ') ++lead;
    while (trail > lead && p[trail - 1] == ' ') --trail;

    QByteArray out;
    out.reserve(n + 8);
    for (qsizetype i = 0; i < n;) {
        const unsigned char c = p[i];
        if (c >= 0x80) {
            const int len = utf8SequenceLength(p + i, n - i);
            if (i == 0 && len == 3 && name.first(3) == QByteArrayView("\xEF\xBB\xBF")) {
                // A leading U+FEFF reads as a byte order mark: parseNameList drops it from the
                // first line of a file and QString::fromUtf8 from the start of every text, so
                // kept as is it would vanish on import and in printable(). Escaped, it survives.
                out += "\\xef\\xbb\\xbf";
                i += 3;
                continue;
            }
            if (len == 0) {
                appendHexEscape(out, c);  // not UTF-8: keep the exact byte
                ++i;
            } else if (const char32_t cp = codePoint(p + i, len); pglock::is_hidden_code_point(cp)) {
                // A bidi override, zero-width or C1 character would reorder or hide the line in
                // any editor or view: written as \uXXXX (all of them are in the BMP), so that the
                // exported line and printable() are one and the same text.
                out += "\\u";
                for (int shift = 12; shift >= 0; shift -= 4) out += kHex[(cp >> shift) & 0xF];
                i += len;
            } else {
                out.append(reinterpret_cast<const char*>(p + i), len);
                i += len;
            }
            continue;
        }
        switch (c) {
            case '\\': out += "\\\\"; break;
            case '\n': out += "\\n"; break;
            case '\r': out += "\\r"; break;
            case '\t': out += "\\t"; break;
            default:
                if (c < 0x20 || c == 0x7f || (c == ' ' && (i < lead || i >= trail)) || (c == '#' && i == 0))
                    appendHexEscape(out, c);  // NUL and friends, edge spaces, a comment-looking start
                else
                    out += static_cast<char>(c);
        }
        ++i;
    }
    return out;
}

std::optional<QByteArray> unescapeName(QByteArrayView line, QString* why) {
    QByteArray out;
    out.reserve(line.size());
    for (qsizetype i = 0; i < line.size(); ++i) {
        const char c = line[i];
        if (c != '\\') {
            out += c;
            continue;
        }
        if (i + 1 >= line.size()) {
            if (why) *why = QStringLiteral("a lone backslash at the end; write a backslash as \\\\");
            return std::nullopt;
        }
        const char e = line[++i];
        switch (e) {
            case '\\': out += '\\'; break;
            case 'n': out += '\n'; break;
            case 'r': out += '\r'; break;
            case 't': out += '\t'; break;
            case 'u': {
                // \uXXXX: what printable() writes for a code point a view would obey.
                char16_t cp = 0;
                bool ok = i + 4 < line.size();
                for (int k = 1; ok && k <= 4; ++k) {
                    const int v = hexValue(line[i + k]);
                    ok = v >= 0;
                    cp = static_cast<char16_t>(cp * 16 + std::max(v, 0));
                }
                if (!ok || QChar::isSurrogate(cp)) {
                    if (why) *why = QStringLiteral("\\u needs exactly four hex digits (not a surrogate)");
                    return std::nullopt;
                }
                out += QString(QChar(cp)).toUtf8();
                i += 4;
                break;
            }
            case 'x': {
                const int hi = i + 1 < line.size() ? hexValue(line[i + 1]) : -1;
                const int lo = i + 2 < line.size() ? hexValue(line[i + 2]) : -1;
                if (hi < 0 || lo < 0) {
                    if (why) *why = QStringLiteral("\\x needs exactly two hex digits");
                    return std::nullopt;
                }
                out += static_cast<char>(hi * 16 + lo);
                i += 2;
                break;
            }
            default:
                if (why)
                    *why = QStringLiteral("unknown escape \\%1; the escapes are \\\\ \\n \\r \\t \\xHH")
                               .arg(QString::fromUtf8(line.sliced(i, 1)));
                return std::nullopt;
        }
    }
    return out;
}

NameList parseNameList(QByteArrayView content) {
    NameList list;
    if (content.startsWith("\xEF\xBB\xBF")) content = content.sliced(3);  // a BOM is not part of a name
    int lineNo = 0;
    while (!content.isEmpty()) {
        ++lineNo;
        const qsizetype nl = content.indexOf('\n');
        QByteArrayView line = nl < 0 ? content : content.first(nl);
        content = nl < 0 ? QByteArrayView() : content.sliced(nl + 1);
        if (line.endsWith('\r')) line.chop(1);
        line = trimBlanks(line);
        if (line.isEmpty() || line.front() == '#') continue;
        if (!isValidUtf8(line)) {
            ++list.skipped;
            list.warnings << QStringLiteral("line %1: not valid UTF-8 text (write raw bytes as \\xHH); skipped")
                                 .arg(lineNo);
            continue;
        }
        QString why;
        std::optional<QByteArray> name = unescapeName(line, &why);
        if (!name) {
            ++list.skipped;
            list.warnings << QStringLiteral("line %1: %2; skipped").arg(lineNo).arg(why);
            continue;
        }
        list.names.append(NameSource{std::move(*name), QString(), lineNo});
    }
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
