// The catalog's text list importer and exporter (ui/stores/name_import.cpp). The input is read
// twice: as the content of an imported file, and as one raw name (any bytes are a valid name).
// Properties, from name_import.hpp's contract:
//   - the importer never yields more names than the content has lines; lines are 1-based,
//     increasing and within the content; every skipped line has its warning; no name is empty;
//   - export then import gives back exactly the same names (escapeName is the inverse of the
//     importer), for a single name and for the whole imported list written one per line as the
//     catalog's exportText does;
//   - an exported line is valid UTF-8 with no line break, CR or NUL, and printable() shows
//     exactly that line, so two different names never look the same.
#include <QByteArray>
#include <QByteArrayView>
#include <QString>

#include <cstddef>
#include <cstdint>

#include "fuzz_check.hpp"
#include "stores/name_import.hpp"

namespace names = lockscope::names;

namespace {

void check_exported_line(const QByteArray& name) {
    const QByteArray line = names::escapeName(name);
    FUZZ_CHECK(names::isValidUtf8(line), "an exported line is valid UTF-8");
    FUZZ_CHECK(!line.contains('\n') && !line.contains('\r') && !line.contains('\0'),
               "an exported line has no line break, CR or NUL");
    FUZZ_CHECK(names::printable(name).toUtf8() == line, "printable() shows exactly the exported line");
    const std::optional<QByteArray> back = names::unescapeName(line);
    FUZZ_CHECK(back && *back == name, "unescapeName(escapeName(name)) == name");
    // The file the catalog exports holding just this name, read back by the importer.
    const names::NameList imported = names::parseNameList(line + '\n');
    FUZZ_CHECK(imported.skipped == 0, "an exported name is never skipped on import");
    if (name.isEmpty()) {
        FUZZ_CHECK(imported.names.isEmpty(), "an empty name is a blank line");
        return;
    }
    FUZZ_CHECK(imported.names.size() == 1 && imported.names[0].name == name,
               "a name exported alone imports as exactly that name");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const QByteArray content(reinterpret_cast<const char*>(data), static_cast<qsizetype>(size));

    const names::NameList list = names::parseNameList(content);
    const qsizetype lines = content.isEmpty() ? 0 : content.count('\n') + (content.endsWith('\n') ? 0 : 1);
    FUZZ_CHECK(list.names.size() + list.skipped <= lines, "never more names (and skipped lines) than lines");
    FUZZ_CHECK(list.warnings.size() == list.skipped, "one warning per skipped line");
    int previous = 0;
    for (const lockscope::NameSource& n : list.names) {
        FUZZ_CHECK(n.line > previous && n.line <= lines, "name lines are increasing and within the content");
        FUZZ_CHECK(!n.name.isEmpty(), "an imported name is never empty");
        FUZZ_CHECK(n.file.isEmpty(), "parseNameList leaves the file to the caller");
        previous = n.line;
    }

    // Export everything imported (one escaped name per line) and import that again.
    QByteArray exported;
    for (const lockscope::NameSource& n : list.names) {
        check_exported_line(n.name);
        exported += names::escapeName(n.name);
        exported += '\n';
    }
    const names::NameList again = names::parseNameList(exported);
    FUZZ_CHECK(again.skipped == 0 && again.names.size() == list.names.size(), "re-import keeps every name");
    for (qsizetype i = 0; i < again.names.size(); ++i)
        FUZZ_CHECK(again.names[i].name == list.names[i].name && again.names[i].line == i + 1,
                   "re-import gives the same names in the same order, one per line");

    // The input as one name.
    check_exported_line(content);
    return 0;
}
