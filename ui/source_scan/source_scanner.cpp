#include "source_scan/source_scanner.hpp"

#include "source_scan/call_matcher.hpp"
#include "source_scan/source_lexer.hpp"

#include <QDir>
#include <QDirIterator>
#include <QFile>
#include <QFileInfo>

#include <algorithm>
#include <array>
#include <cstdint>

namespace lockscope::scan {
namespace {

bool skippedDirectory(const QString& name) {
    static const std::array<QString, 6> skipped = {
        QStringLiteral(".git"),  QStringLiteral(".hg"),          QStringLiteral(".svn"),
        QStringLiteral("build"), QStringLiteral("node_modules"), QStringLiteral("vendor")};
    return std::find(skipped.begin(), skipped.end(), name) != skipped.end();
}

}  // namespace

std::optional<Language> languageOf(const QString& fileName) {
    const QString ext = QFileInfo(fileName).suffix().toLower();
    if (ext == u"go") return Language::go;
    if (ext == u"cpp" || ext == u"cc" || ext == u"cxx" || ext == u"hpp" || ext == u"h" || ext == u"c")
        return Language::cpp;
    if (ext == u"rs" || ext == u"java" || ext == u"kt" || ext == u"cs") return Language::c_like;
    if (ext == u"ts" || ext == u"js") return Language::js;
    if (ext == u"py" || ext == u"rb") return Language::hash;
    return std::nullopt;
}

TextScan scanText(std::string_view text, Language language) {
    return matchLockCalls(lexSource(text, language), language);
}

TreeScan scanTree(const QString& root) {
    TreeScan scan;
    const QFileInfo rootInfo(root);
    if (!rootInfo.exists()) {
        scan.error = QStringLiteral("%1: no such directory").arg(root);
        return scan;
    }
    if (!rootInfo.isDir()) {
        scan.error = QStringLiteral("%1: not a directory").arg(root);
        return scan;
    }
    if (!rootInfo.isReadable() || !rootInfo.isExecutable()) {
        scan.error = QStringLiteral("%1: the directory cannot be read").arg(root);
        return scan;
    }
    const QDir rootDir(rootInfo.absoluteFilePath());

    // Depth first in name order, for a stable report. QDirIterator without Subdirectories per
    // level, so that skipped directories are pruned instead of walked and filtered.
    std::vector<QString> pending{rootDir.absolutePath()};
    while (!pending.empty()) {
        const QString dir = pending.back();
        pending.pop_back();
        QList<QFileInfo> entries;
        QDirIterator it(dir, QDir::AllEntries | QDir::NoDotAndDotDot | QDir::Hidden | QDir::System);
        while (it.hasNext()) {
            it.next();
            entries.append(it.fileInfo());
        }
        std::sort(entries.begin(), entries.end(),
                  [](const QFileInfo& a, const QFileInfo& b) { return a.fileName() < b.fileName(); });
        std::vector<QString> subdirs;
        for (const QFileInfo& entry : entries) {
            if (entry.isSymLink()) continue;
            const QString rel = rootDir.relativeFilePath(entry.absoluteFilePath());
            if (entry.isDir()) {
                if (skippedDirectory(entry.fileName())) continue;
                if (!entry.isReadable() || !entry.isExecutable()) {
                    ++scan.skipped;
                    scan.warnings << QStringLiteral("%1/: the directory cannot be read; skipped").arg(rel);
                    continue;
                }
                subdirs.push_back(entry.absoluteFilePath());
                continue;
            }
            if (!entry.isFile()) continue;
            const std::optional<Language> lang = languageOf(entry.fileName());
            if (!lang) continue;
            if (entry.size() > kMaxSourceFileBytes) {
                ++scan.skipped;
                scan.warnings << QStringLiteral("%1: larger than 2 MiB; skipped").arg(rel);
                continue;
            }
            QFile file(entry.absoluteFilePath());
            if (!file.open(QIODevice::ReadOnly)) {
                ++scan.skipped;
                scan.warnings << QStringLiteral("%1: cannot be read (%2); skipped").arg(rel, file.errorString());
                continue;
            }
            const QByteArray data = file.read(kMaxSourceFileBytes + 1);
            if (data.size() > kMaxSourceFileBytes) {
                ++scan.skipped;
                scan.warnings << QStringLiteral("%1: larger than 2 MiB; skipped").arg(rel);
                continue;
            }
            if (QByteArrayView(data).first(std::min<qsizetype>(data.size(), kBinarySniffBytes)).contains('\0')) {
                ++scan.skipped;
                scan.warnings << QStringLiteral("%1: a binary file; skipped").arg(rel);
                continue;
            }
            ++scan.filesScanned;
            const TextScan found = scanText(std::string_view(data.constData(), static_cast<std::size_t>(data.size())), *lang);
            for (const Literal& name : found.names)
                scan.names.append(NameSource{QByteArray(name.name.data(), static_cast<qsizetype>(name.name.size())), rel,
                                             name.line});
            for (const Literal& problem : found.problems) {
                ++scan.skipped;
                scan.warnings << QStringLiteral("%1:%2: %3").arg(rel).arg(problem.line).arg(QString::fromStdString(problem.name));
            }
        }
        for (auto s = subdirs.rbegin(); s != subdirs.rend(); ++s) pending.push_back(*s);
    }
    return scan;
}

}  // namespace lockscope::scan
