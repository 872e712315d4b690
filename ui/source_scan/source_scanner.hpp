// Finds lock names in a source tree: string literals passed as the name to this library or to the
// Go package gokit/db/lock, so an operator can fill the catalog from the services' code instead
// of typing names. Works on tokens (comments skipped, literals decoded with the language's
// escapes), not on regular expressions, so a call in a comment or a name inside another string
// is not picked up, and "a\"b" is found as a"b.
//
// Recognized calls (the name must be a constant string: one literal, adjacent C++ literals or
// Go literals joined by +; anything else is reported as a warning and skipped):
//   Go    lock.New(<d>, "name", ...)          lock.RunOnce(<ctx>, <d>, "name", ...)
//         lock.RunBlocking(<ctx>, <d>, "name", ...)
//         service.WithSingletonCron(..., "name", ...)  — its signature is not in the seed docs,
//             so the first string argument that is not a cron spec (no blank, no leading '@') wins
//         interpreted "..." (Go escapes) and raw `...` literals
//   C++   pglock::Lock(<pool>, "name", ...)   pglock::Lock lk(<pool>, "name") / Lock lk{pool, "name"}
//         make_unique<pglock::Lock>(<pool>, "name")
//         pglock::run_once(<pool>, "name", ...)   pglock::run_blocking(<pool>, "name", ...)
//         (unqualified Lock / run_once / run_blocking too, as after `using namespace pglock`; the
//          member forms lk.run_once(...) take no name and are not matched)
//         "..." with C++ escapes, u8"...", R"delim(...)delim", "name"s / "name"sv
// What is really supported: Go and C++, the two languages these libraries exist in. Python, Ruby,
// Rust, Java, Kotlin, C#, TypeScript and JavaScript files are only lexed (their comments and
// string quoting, not their escapes in full: Python's b''/f'' prefixes, Rust's r#""# raw strings
// and JS template substitutions are not understood), and matched with both call sets, which finds
// wrappers named like these calls and nothing else.
//
// Three parts: source_lexer (tokens), call_matcher (the call shapes above), and the tree walk
// here.
//
// The walk skips .git, .hg, .svn, build, node_modules and vendor directories, symbolic links
// (no loops, nothing outside the tree), files over 2 MiB and binary files (a NUL byte in the
// first 8 KiB); skipped files are counted and named in the warnings.
#pragma once

#include <QList>
#include <QString>
#include <QStringList>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "source_scan/scan_types.hpp"
#include "stores/name_import.hpp"

namespace lockscope::scan {

constexpr qint64 kMaxSourceFileBytes = 2 * 1024 * 1024;
constexpr qint64 kBinarySniffBytes = 8 * 1024;

// The language of a file by its extension; nullopt for files the scanner does not read.
std::optional<Language> languageOf(const QString& fileName);

// Scans one file's text. Pure and thread-safe.
TextScan scanText(std::string_view text, Language language);

struct TreeScan {
    QList<NameSource> names;  // every occurrence, file relative to the root, in path order
    QStringList warnings;     // "file:line: ..." for skipped literals, "file: ..." for skipped files
    int filesScanned = 0;
    int skipped = 0;          // skipped files + skipped literals
    QString error;            // the root itself is unusable; nothing else is set then
};
// Walks the tree under root. Touches no database, so a UI can run it on a worker thread and
// hand the result to CatalogService::importScan.
TreeScan scanTree(const QString& root);

}  // namespace lockscope::scan
