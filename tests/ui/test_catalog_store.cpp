// The name catalog: the SQLite store, the text list import/export, and the source-tree scanner.
// No server. Expected keys come from pglock::key_of, which test_key checks against Python's
// hashlib; orders.daily-rollup -> -7132652647757890940 is the seed's documented vector.
#include <QDir>
#include <QFile>
#include <QRandomGenerator>
#include <QSignalSpy>
#include <QSqlDatabase>
#include <QSqlError>
#include <QSqlQuery>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QUuid>
#include <QtTest>

#include <string_view>

#include "pglock/key.hpp"
#include "pglock/text.hpp"
#include "stores/catalog_name_cache.hpp"
#include "stores/catalog_store.hpp"
#include "stores/name_import.hpp"
#include "source_scan/source_scanner.hpp"

using lockscope::CatalogEntry;
using lockscope::CatalogStore;
using lockscope::ImportReport;

namespace {

qint64 keyOf(const QByteArray& name) {
    return pglock::key_of(std::string_view(name.constData(), static_cast<std::size_t>(name.size())));
}

void writeFile(const QString& path, const QByteArray& bytes) {
    QDir().mkpath(QFileInfo(path).absolutePath());
    QFile f(path);
    QVERIFY2(f.open(QIODevice::WriteOnly), qPrintable(f.errorString()));
    QCOMPARE(f.write(bytes), bytes.size());
}

QList<QByteArray> namesOf(const std::vector<CatalogEntry>& entries) {
    QList<QByteArray> out;
    for (const CatalogEntry& e : entries) out << e.name;
    return out;
}

// Names that break naive handling: NUL bytes, invalid UTF-8, line breaks, escapes' own
// characters, edge blanks and a comment-looking start.
QList<QByteArray> oddNames() {
    return {
        QByteArray("orders.daily-rollup"),
        QByteArray("a\0b", 3),
        QByteArray("\0", 1),
        QByteArray::fromHex("fffe41"),          // invalid UTF-8
        QByteArray::fromHex("616263c328646566"),  // a truncated sequence inside text
        QByteArray::fromHex("eda080"),            // an encoded surrogate
        QByteArray("line1\nline2"),
        QByteArray("cr\rlf\r\n"),
        QByteArray("back\\slash \\x41 \\n"),    // text that looks like escapes
        QByteArray("tab\there"),
        QByteArray("  leading and trailing  "),
        QByteArray("   "),
        QByteArray("#not-a-comment"),
        QByteArray(" #spaced"),
        QByteArray("\xd0\xb1\xd0\xbb\xd0\xbe\xd0\xba"),  // блок
        QByteArray("\xf0\x9f\x94\x92lock"),              // 🔒lock
        QByteArray("del\x7f"),
    };
}

QString sqliteConnection(const QString& path) {
    const QString name = QUuid::createUuid().toString();
    QSqlDatabase db = QSqlDatabase::addDatabase(QStringLiteral("QSQLITE"), name);
    db.setDatabaseName(path);
    db.open();
    return name;
}

QByteArray fileBytes(const QString& path) {
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray("(unreadable)");
}

// Runs statements on the file through a connection of the test's own; the first failure is returned.
QString sqlOn(const QString& path, const QStringList& statements) {
    const QString conn = sqliteConnection(path);
    QString error;
    {
        QSqlQuery q(QSqlDatabase::database(conn));
        for (const QString& sql : statements) {
            if (!q.exec(sql)) {
                error = sql + QStringLiteral(": ") + q.lastError().text();
                break;
            }
        }
    }
    QSqlDatabase::removeDatabase(conn);
    return error;
}

qint64 applicationId(const QString& path) {
    const QString conn = sqliteConnection(path);
    qint64 id = -1;
    {
        QSqlQuery q(QSqlDatabase::database(conn));
        if (q.exec(QStringLiteral("PRAGMA application_id")) && q.next()) id = q.value(0).toLongLong();
    }
    QSqlDatabase::removeDatabase(conn);
    return id;
}

// "PLKC": the application_id of a lockscope catalog (pglock/catalog_format.hpp).
constexpr qint64 kCatalogApplicationId = 0x504c4b43;

}  // namespace

class TestCatalogStore : public QObject {
    Q_OBJECT

    QTemporaryDir dir_;
    QString path(const QString& name) const { return dir_.filePath(name); }

private slots:
    void initTestCase() {
        QStandardPaths::setTestModeEnabled(true);
        QVERIFY(dir_.isValid());
    }

    void add_remove_rename() {
        CatalogStore store(path(QStringLiteral("basic.sqlite")));
        QVERIFY2(store.isOpen(), qPrintable(store.errorString()));
        QSignalSpy changed(&store, &CatalogStore::changed);

        QCOMPARE(store.add("orders.daily-rollup", QStringLiteral("nightly rollup"), QStringLiteral("billing")),
                 CatalogStore::AddResult::added);
        QCOMPARE(changed.count(), 1);
        std::optional<CatalogEntry> e = store.entry("orders.daily-rollup");
        QVERIFY(e);
        QCOMPARE(e->key, qint64(-7132652647757890940LL));
        QCOMPARE(e->note, QStringLiteral("nightly rollup"));
        QCOMPARE(e->owner, QStringLiteral("billing"));
        const QDateTime added = QDateTime::fromString(e->addedAt, Qt::ISODateWithMs);
        QVERIFY2(added.isValid() && e->addedAt.endsWith(u'Z'), qPrintable(e->addedAt));
        QVERIFY(qAbs(added.secsTo(QDateTime::currentDateTimeUtc())) < 60);

        QCOMPARE(store.add("orders.daily-rollup"), CatalogStore::AddResult::duplicate);
        QCOMPARE(store.add(QByteArray()), CatalogStore::AddResult::invalid);
        QVERIFY(!store.errorString().isEmpty());
        QCOMPARE(changed.count(), 1);  // nothing changed
        QCOMPARE(store.count(), 1);
        QVERIFY(store.contains("orders.daily-rollup"));
        QVERIFY(!store.contains("orders"));

        QCOMPARE(store.add("session.warmup"), CatalogStore::AddResult::added);  // default note/owner: ''
        QCOMPARE(store.entry("session.warmup")->note, QString());
        QCOMPARE(store.entry("session.warmup")->owner, QString());

        // Rename keeps note/owner/added_at and re-derives the key.
        QCOMPARE(store.rename("orders.daily-rollup", "orders.hourly-rollup"), CatalogStore::RenameResult::renamed);
        QVERIFY(!store.contains("orders.daily-rollup"));
        e = store.entry("orders.hourly-rollup");
        QVERIFY(e);
        QCOMPARE(e->key, keyOf("orders.hourly-rollup"));
        QVERIFY(e->key != qint64(-7132652647757890940LL));
        QCOMPARE(e->note, QStringLiteral("nightly rollup"));
        QCOMPARE(store.namesForKey(-7132652647757890940LL), QList<QByteArray>());
        QCOMPARE(store.rename("orders.hourly-rollup", "session.warmup"), CatalogStore::RenameResult::duplicate);
        QCOMPARE(store.rename("missing", "other"), CatalogStore::RenameResult::notFound);
        QCOMPARE(store.rename("session.warmup", QByteArray()), CatalogStore::RenameResult::invalid);
        QCOMPARE(store.rename("session.warmup", "session.warmup"), CatalogStore::RenameResult::unchanged);
        QVERIFY(store.contains("orders.hourly-rollup"));  // the failed renames touched nothing
        QCOMPARE(store.count(), 2);

        QVERIFY(store.setNote("session.warmup", QStringLiteral("warms caches")));
        QVERIFY(store.setOwner("session.warmup", QStringLiteral("platform")));
        QCOMPARE(store.entry("session.warmup")->note, QStringLiteral("warms caches"));
        QCOMPARE(store.entry("session.warmup")->owner, QStringLiteral("platform"));
        QVERIFY(store.setNote("session.warmup", QString()));  // a null QString is stored as ''
        QCOMPARE(store.entry("session.warmup")->note, QString());
        QVERIFY(!store.setNote("missing", QStringLiteral("x")));
        QVERIFY(!store.setOwner("missing", QStringLiteral("x")));

        const int before = changed.count();
        QVERIFY(store.remove("session.warmup"));
        QVERIFY(!store.remove("session.warmup"));
        QCOMPARE(changed.count(), before + 1);
        QCOMPARE(namesOf(store.entries()), QList<QByteArray>{"orders.hourly-rollup"});
    }

    // The key column is key_of(name) for every name, whatever its bytes; names are BLOBs.
    void keys_are_always_derived() {
        const QString file = path(QStringLiteral("keys.sqlite"));
        {
            CatalogStore store(file);
            for (const QByteArray& name : oddNames())
                QCOMPARE(store.add(name), CatalogStore::AddResult::added);
            QVERIFY(store.rename(QByteArray("a\0b", 3), QByteArray("a\0c", 3)) == CatalogStore::RenameResult::renamed);
            for (const CatalogEntry& e : store.entries()) QCOMPARE(e.key, keyOf(e.name));
        }
        const QString conn = sqliteConnection(file);
        {
            QSqlQuery q(QSqlDatabase::database(conn));
            QVERIFY(q.exec(QStringLiteral("SELECT name, key, typeof(name), typeof(key) FROM names")));
            int rows = 0;
            while (q.next()) {
                ++rows;
                QCOMPARE(q.value(1).toLongLong(), keyOf(q.value(0).toByteArray()));
                QCOMPARE(q.value(2).toString(), QStringLiteral("blob"));
                QCOMPARE(q.value(3).toString(), QStringLiteral("integer"));
            }
            QCOMPARE(rows, int(oddNames().size()));
        }
        QSqlDatabase::removeDatabase(conn);
    }

    // Odd names survive the store, a reopen, and export -> import into another catalog.
    void odd_names_round_trip() {
        const QString file = path(QStringLiteral("odd.sqlite"));
        QList<QByteArray> expected = oddNames();
        std::sort(expected.begin(), expected.end());
        {
            CatalogStore store(file);
            for (const QByteArray& name : oddNames()) QCOMPARE(store.add(name), CatalogStore::AddResult::added);
            QCOMPARE(namesOf(store.entries()), expected);
            QVERIFY2(store.exportText(path(QStringLiteral("odd.txt"))), qPrintable(store.errorString()));
        }
        CatalogStore reopened(file);
        QCOMPARE(namesOf(reopened.entries()), expected);

        QFile exported(path(QStringLiteral("odd.txt")));
        QVERIFY(exported.open(QIODevice::ReadOnly));
        const QByteArray text = exported.readAll();
        QVERIFY(pglock::is_valid_utf8(text.toStdString()));  // every odd byte is escaped
        QVERIFY(!text.contains('\0'));
        QVERIFY(!text.contains('\r'));
        QCOMPARE(text.count('\n'), expected.size());  // one line per name

        CatalogStore other(path(QStringLiteral("odd-import.sqlite")));
        const ImportReport report = other.importText(exported.fileName());
        QVERIFY2(report.ok(), qPrintable(report.errors.join(u'\n')));
        QCOMPARE(report.found, int(expected.size()));
        QCOMPARE(report.added, int(expected.size()));
        QCOMPARE(report.duplicate, 0);
        QCOMPARE(report.skipped, 0);
        QCOMPARE(namesOf(other.entries()), expected);
    }

    void escape_round_trip_all_bytes() {
        QByteArray all;
        for (int i = 0; i < 256; ++i) all += char(i);
        for (const QByteArray& name : QList<QByteArray>{all, all.right(128), QByteArray(" "), QByteArray("#")}) {
            const QByteArray line = lockscope::names::escapeName(name);
            QVERIFY(pglock::is_valid_utf8(line.toStdString()));
            QCOMPARE(lockscope::names::unescapeName(line).value_or("<failed>"), name);
            const lockscope::names::NameList parsed = lockscope::names::parseNameList(line + "\r\n");
            QCOMPARE(parsed.names.size(), 1);
            QCOMPARE(parsed.names[0].name, name);
        }
    }

    // A name starting with U+FEFF (found by fuzzing): kept as is, the BOM vanished twice. As the
    // first line of an export the importer dropped it as the file's byte order mark, and
    // QString::fromUtf8 drops it from any text, so printable() showed "\uFEFFx" exactly like "x".
    void leading_bom_in_a_name_is_escaped() {
        const QByteArray bom("\xEF\xBB\xBF");
        for (const QByteArray& name : QList<QByteArray>{bom + "x", bom, bom + bom, bom + " "}) {
            const QByteArray line = lockscope::names::escapeName(name);
            QVERIFY2(line.startsWith("\\xef\\xbb\\xbf"), line.constData());
            // printable() also writes a U+FEFF inside the name as \ufeff; either way it reads back.
            QCOMPARE(lockscope::names::unescapeName(lockscope::names::printable(name).toUtf8()), std::optional<QByteArray>(name));
            QVERIFY(lockscope::names::printable(name) != lockscope::names::printable(name.sliced(3)));
            const lockscope::names::NameList parsed = lockscope::names::parseNameList(line + "\n");
            QCOMPARE(parsed.names.size(), 1);
            QCOMPARE(parsed.names[0].name, name);
        }
        // Inside a name it is an invisible character like any other: written \ufeff, so that
        // the exported line shows it, and read back as the same bytes.
        QCOMPARE(lockscope::names::escapeName("x" + bom), QByteArray("x\\ufeff"));
        QCOMPARE(lockscope::names::unescapeName("x\\ufeff"), std::optional<QByteArray>("x" + bom));

        // The whole export/import path, with the BOM name sorted first in the file.
        CatalogStore store(path(QStringLiteral("bom.sqlite")));
        QCOMPARE(store.add(bom + "orders"), CatalogStore::AddResult::added);
        QVERIFY2(store.exportText(path(QStringLiteral("bom.txt"))), qPrintable(store.errorString()));
        CatalogStore other(path(QStringLiteral("bom-import.sqlite")));
        const ImportReport report = other.importText(path(QStringLiteral("bom.txt")));
        QVERIFY2(report.ok(), qPrintable(report.errors.join(u'\n')));
        QCOMPARE(namesOf(other.entries()), QList<QByteArray>{bom + "orders"});
    }

    // Lines of scanned names (found by fuzzing): a backslash before a lone CR counted a line
    // although lone CRs end no line anywhere else, so every later name was one line off (and
    // could be past the end of the file). Backslash-newline and backslash-CRLF are splices.
    void scanner_counts_lines_at_newlines_only() {
        const auto scan = [](const QByteArray& source) {
            return lockscope::scan::scanText(std::string_view(source.constData(), std::size_t(source.size())),
                                             lockscope::scan::Language::cpp);
        };
        const lockscope::scan::TextScan loneCr = scan("pglock::Lock(p, \"a\\\rb\");\npglock::Lock(p, \"c\");");
        QCOMPARE(loneCr.names.size(), std::size_t(1));
        QCOMPARE(QByteArray::fromStdString(loneCr.names[0].name), QByteArray("c"));
        QCOMPARE(loneCr.names[0].line, 2);
        QCOMPARE(loneCr.problems.size(), std::size_t(1));  // "\<CR>" is no escape: that literal is skipped
        QCOMPARE(loneCr.problems[0].line, 1);

        const lockscope::scan::TextScan crlf = scan("pglock::Lock(p, \"a\\\r\nb\");\r\npglock::Lock(p, \"c\");");
        QCOMPARE(crlf.names.size(), std::size_t(2));
        QCOMPARE(QByteArray::fromStdString(crlf.names[0].name), QByteArray("ab"));
        QCOMPARE(crlf.names[0].line, 1);
        QCOMPARE(crlf.names[1].line, 3);

        const lockscope::scan::TextScan lf = scan("pglock::Lock(p, \"a\\\nb\");\npglock::Lock(p, \"c\");");
        QCOMPARE(lf.names.size(), std::size_t(2));
        QCOMPARE(lf.names[1].line, 3);
    }

    // The reverse lookup returns exactly the names with that key. (A real SHA-256 prefix collision
    // cannot be produced for a test; the list type is what lets the UI show one.)
    void names_for_key() {
        CatalogStore store(path(QStringLiteral("reverse.sqlite")));
        QCOMPARE(store.add("orders.daily-rollup"), CatalogStore::AddResult::added);
        QCOMPARE(store.add("session.warmup"), CatalogStore::AddResult::added);
        QCOMPARE(store.namesForKey(-7132652647757890940LL), QList<QByteArray>{"orders.daily-rollup"});
        QCOMPARE(store.namesForKey(keyOf("session.warmup")), QList<QByteArray>{"session.warmup"});
        QCOMPARE(store.namesForKey(12345), QList<QByteArray>());
    }

    void import_text_list() {
        CatalogStore store(path(QStringLiteral("import.sqlite")));
        QCOMPARE(store.add("existing.name"), CatalogStore::AddResult::added);
        QSignalSpy changed(&store, &CatalogStore::changed);
        const QString list = path(QStringLiteral("names.txt"));
        writeFile(list, QByteArray("\xEF\xBB\xBF# lock names of the billing service\r\n"  // 1 (BOM + comment)
                                   "orders.daily-rollup\r\n"                            // 2
                                   "\r\n"                                               // 3
                                   "   session.warmup \t\r\n"                           // 4
                                   "  # an indented comment\n"                          // 5
                                   "orders.daily-rollup\n"                              // 6 repeat
                                   "existing.name\n"                                    // 7 in the catalog
                                   "bad\\qescape\n"                                     // 8 skipped
                                   "latin1 caf\xe9\n"                                   // 9 skipped
                                   "escaped\\x00nul\\n\n"                               // 10
                                   "hash # inside"));                                   // 11, no final newline
        const ImportReport report = store.importText(list);
        QVERIFY2(report.ok(), qPrintable(report.errors.join(u'\n')));
        QCOMPARE(report.found, 5);
        QCOMPARE(report.added, 4);
        QCOMPARE(report.duplicate, 2);
        QCOMPARE(report.skipped, 2);
        QCOMPARE(report.warnings.size(), 2);
        QVERIFY2(report.warnings[0].contains(QStringLiteral("line 8")), qPrintable(report.warnings[0]));
        QVERIFY2(report.warnings[1].contains(QStringLiteral("line 9")), qPrintable(report.warnings[1]));
        QCOMPARE(report.sources.size(), 6);
        QCOMPARE(report.sources[0].line, 2);
        QCOMPARE(report.sources[0].file, list);
        QCOMPARE(changed.count(), 1);  // one import, one notification
        QCOMPARE(namesOf(store.entries()),
                 (QList<QByteArray>{"escaped" + QByteArray("\0nul\n", 5), "existing.name", "hash # inside",
                                    "orders.daily-rollup", "session.warmup"}));

        // Importing the same list again adds nothing and says so.
        const ImportReport again = store.importText(list);
        QCOMPARE(again.found, 5);
        QCOMPARE(again.added, 0);
        QCOMPARE(again.duplicate, 6);
        QCOMPARE(changed.count(), 1);
    }

    // Binary junk is refused whole, even when its NUL bytes come after the first 8 KiB.
    void binary_file_changes_nothing() {
        CatalogStore store(path(QStringLiteral("binary.sqlite")));
        QCOMPARE(store.add("orders.daily-rollup", QStringLiteral("n"), QStringLiteral("o")), CatalogStore::AddResult::added);
        const std::vector<CatalogEntry> before = store.entries();
        QSignalSpy changed(&store, &CatalogStore::changed);

        QRandomGenerator rng(42);
        QByteArray junk(64 * 1024, '\0');
        for (char& c : junk) c = char(rng.bounded(256));
        junk[100] = '\0';
        writeFile(path(QStringLiteral("junk.bin")), junk);
        QByteArray lateNul = QByteArray("name.one\nname.two\n").repeated(1000);
        lateNul[10000] = '\0';
        writeFile(path(QStringLiteral("late-nul.txt")), lateNul);

        for (const QString& file : {path(QStringLiteral("junk.bin")), path(QStringLiteral("late-nul.txt"))}) {
            const ImportReport report = store.importText(file);
            QVERIFY(!report.ok());
            QVERIFY2(report.errors.join(u' ').contains(QStringLiteral("binary")), qPrintable(report.errors.join(u' ')));
            QCOMPARE(report.added, 0);
        }
        const std::vector<CatalogEntry> after = store.entries();
        QCOMPARE(after.size(), before.size());
        QCOMPARE(after[0].name, before[0].name);
        QCOMPARE(after[0].note, before[0].note);
        QCOMPARE(after[0].addedAt, before[0].addedAt);
        QCOMPARE(changed.count(), 0);
    }

    void unreadable_and_oversized_files() {
        CatalogStore store(path(QStringLiteral("errors.sqlite")));
        QCOMPARE(store.add("kept"), CatalogStore::AddResult::added);

        ImportReport r = store.importText(path(QStringLiteral("does-not-exist.txt")));
        QVERIFY(!r.ok());
        QVERIFY(r.errors[0].contains(QStringLiteral("no such file")));

        r = store.importText(dir_.path());
        QVERIFY(!r.ok());
        QVERIFY(r.errors[0].contains(QStringLiteral("directory")));

        const QString locked = path(QStringLiteral("locked.txt"));
        writeFile(locked, "locked.name\n");
        QFile::setPermissions(locked, QFileDevice::Permissions{});
        if (QFile f(locked); f.open(QIODevice::ReadOnly)) {
            qInfo("running with permission to read a mode-000 file (root?): skipping that case");
        } else {
            r = store.importText(locked);
            QVERIFY(!r.ok());
            QVERIFY2(r.errors[0].contains(QStringLiteral("cannot be read")), qPrintable(r.errors[0]));
        }

        // 16 MiB + 1 byte of valid names: refused by size alone (a sparse file: cheap to make).
        const QString big = path(QStringLiteral("big.txt"));
        writeFile(big, "big.name\n");
        {
            QFile f(big);
            QVERIFY(f.resize(lockscope::names::kMaxImportBytes + 1));
        }
        r = store.importText(big);
        QVERIFY(!r.ok());
        QVERIFY2(r.errors[0].contains(QStringLiteral("limit")), qPrintable(r.errors[0]));
        QCOMPARE(namesOf(store.entries()), QList<QByteArray>{"kept"});
    }

    void scan_source_tree() {
        QTemporaryDir tree;
        QVERIFY(tree.isValid());
        const QString root = tree.path();
        writeFile(root + "/svc/jobs.go",
                  "package jobs\n"                                                        // 1
                  "\n"                                                                    // 2
                  "import \"github.com/theizzatbek/gokit/db/lock\"\n"                     // 3
                  "\n"                                                                    // 4
                  "func Run(ctx context.Context, svc *Service, id string) error {\n"      // 5
                  "\t// lock.New(svc.DB, \"commented.out\") is not a call\n"              // 6
                  "\tlk := lock.New(svc.DB, \"orders.daily-rollup\",\n"                   // 7
                  "\t\tlock.WithLogger(svc.Logger))\n"                                    // 8
                  "\t_ = lock.RunOnce(ctx, svc.DB, \"go.run-once\\t\\x41\\u00e9\\101\", fn)\n"  // 9
                  "\t_ = lock.RunBlocking(ctx, pool(svc, 1), `go.raw\\n\"quoted\"`, fn)\n"      // 10
                  "\t_ = lock.New(svc.DB, \"tenant-\" + id)\n"                            // 11 dynamic
                  "\t_ = lock.New(svc.DB, \"go.\" + \"joined\")\n"                        // 12
                  "\ts := \"lock.New(svc.DB, \\\"inside.a.string\\\")\"\n"                // 13
                  "\tsvc.Add(service.WithSingletonCron(\"@every 1m\", \"go.cron-job\", job))\n"  // 14
                  "\t_ = lock.New(svc.DB, \"orders.daily-rollup\")\n"                     // 15 repeat
                  "\t/* lock.RunOnce(ctx, d, \"block.comment\", fn) */\n"                 // 16
                  "\treturn nil\n"
                  "}\n");
        writeFile(root + "/cpp/worker.cpp",
                  "#include <pglock/pglock.hpp>\n"                                          // 1
                  "/* pglock::Lock(pool, \"block.comment\") */\n"                           // 2
                  "void f(pglock::Pool& pool) {\n"                                          // 3
                  "    pglock::Lock warmup(pool, \"session.warmup\");\n"                    // 4
                  "    pglock::Lock lk{pool, \"cpp.braced\\\\name\"};\n"                    // 5
                  "    auto tmp = pglock::Lock(pool, \"cpp.esc\\\"quote\\x41\\101\\n\");\n"  // 6
                  "    pglock::run_once(pool, \"cpp.run-once\", {}, [](pglock::Guard&) {});\n"  // 7
                  "    pglock::run_blocking(pool, R\"x(cpp.raw\"(name))x\", {}, fn);\n"     // 8
                  "    pglock::run_once(pool, \"cpp.adj\" \"acent\", {}, fn);\n"            // 9
                  "    auto p = std::make_unique<pglock::Lock>(pool, u8\"cpp.unique\"s);\n"  // 10
                  "    lk.run_once(ctx, fn);\n"                                             // 11 member: no name
                  "    char q = '\"'; int n = 1'000'000;\n"                                 // 12
                  "    pglock::Lock(pool, \"orders.daily-rollup\");  // also in Go\n"       // 13
                  "    std::lock_guard<std::mutex> guard(m); Lock other(mutex);\n"          // 14
                  "}\n");
        writeFile(root + "/cpp/wrap.hpp", "pglock::Lock make_lock(pglock::Pool& pool, std::string name);\n");
        writeFile(root + "/.git/hooks/hook.go", "lock.New(d, \"in.git\")\n");
        writeFile(root + "/build/gen.cpp", "pglock::run_once(pool, \"in.build\", {}, fn);\n");
        writeFile(root + "/node_modules/x/index.js", "lock.New(d, \"in.node-modules\")\n");
        writeFile(root + "/vendor/dep/dep.go", "lock.New(d, \"in.vendor\")\n");
        writeFile(root + "/notes.txt", "lock.New(d, \"in.txt\")\n");
        writeFile(root + "/bin/blob.go", QByteArray("lock.New(d, \"in.binary\")\n") + QByteArray(16, '\0'));
        writeFile(root + "/big.go", "lock.New(d, \"in.big\")\n//" + QByteArray(2 * 1024 * 1024, 'x') + "\n");
        QVERIFY(QFile::link(root, root + "/svc/loop"));  // a symlink loop must not be followed

        CatalogStore store(path(QStringLiteral("scan.sqlite")));
        QCOMPARE(store.add("session.warmup"), CatalogStore::AddResult::added);
        const ImportReport report = store.scanSourceTree(root);
        QVERIFY2(report.ok(), qPrintable(report.errors.join(u'\n')));

        const QList<QByteArray> expectedNew = {
            QByteArray("cpp.adjacent"),
            QByteArray("cpp.braced\\name"),
            QByteArray("cpp.esc\"quoteAA\n"),
            QByteArray("cpp.raw\"(name)"),
            QByteArray("cpp.run-once"),
            QByteArray("cpp.unique"),
            QByteArray("go.cron-job"),
            QByteArray("go.joined"),
            QByteArray("go.raw\\n\"quoted\""),
            QByteArray("go.run-once\tA\xc3\xa9" "A"),
            QByteArray("orders.daily-rollup"),
        };
        QList<QByteArray> all = expectedNew;
        all << "session.warmup";
        std::sort(all.begin(), all.end());
        QCOMPARE(namesOf(store.entries()), all);
        QCOMPARE(report.found, 12);
        QCOMPARE(report.added, 11);
        QCOMPARE(report.duplicate, 3);  // orders.daily-rollup twice more, session.warmup already there
        QCOMPARE(report.filesScanned, 3);  // jobs.go, worker.cpp, wrap.hpp
        QCOMPARE(report.skipped, 3);       // the dynamic name, the binary file, the big file
        QCOMPARE(report.warnings.size(), 3);
        const QString warnings = report.warnings.join(u'\n');
        QVERIFY2(warnings.contains(QStringLiteral("svc/jobs.go:11:")), qPrintable(warnings));
        QVERIFY2(warnings.contains(QStringLiteral("bin/blob.go: a binary file")), qPrintable(warnings));
        QVERIFY2(warnings.contains(QStringLiteral("big.go: larger than 2 MiB")), qPrintable(warnings));

        // Where each name was found, file relative to the root and 1-based line.
        auto where = [&](const QByteArray& name) {
            QStringList out;
            for (const lockscope::NameSource& s : report.sources)
                if (s.name == name) out << QStringLiteral("%1:%2").arg(s.file).arg(s.line);
            return out;
        };
        QCOMPARE(where("orders.daily-rollup"),
                 (QStringList{QStringLiteral("cpp/worker.cpp:13"), QStringLiteral("svc/jobs.go:7"), QStringLiteral("svc/jobs.go:15")}));
        QCOMPARE(where("cpp.run-once"), QStringList{QStringLiteral("cpp/worker.cpp:7")});
        QCOMPARE(where("go.cron-job"), QStringList{QStringLiteral("svc/jobs.go:14")});
        QCOMPARE(where("go.raw\\n\"quoted\""), QStringList{QStringLiteral("svc/jobs.go:10")});
        QCOMPARE(report.sources.size(), 14);

        // A missing root is an error, and changes nothing.
        const ImportReport missing = store.scanSourceTree(root + "/nope");
        QVERIFY(!missing.ok());
        QCOMPARE(store.count(), 12);
    }

    void scanner_literals_data() {
        QTest::addColumn<QByteArray>("source");
        QTest::addColumn<int>("language");
        QTest::addColumn<QByteArray>("name");  // empty: nothing found
        const int go = int(lockscope::scan::Language::go), cpp = int(lockscope::scan::Language::cpp);
        QTest::newRow("go octal and \\U") << QByteArray("lock.New(d, \"\\101\\U0001F512\")") << go
                                          << QByteArray("A\xf0\x9f\x94\x92");
        QTest::newRow("go raw with CR dropped") << QByteArray("lock.New(d, `a\r\nb`)") << go << QByteArray("a\nb");
        QTest::newRow("go short octal is invalid") << QByteArray("lock.New(d, \"\\1\")") << go << QByteArray();
        QTest::newRow("go field named lock") << QByteArray("s.lock.New(d, \"x\")") << go << QByteArray();
        QTest::newRow("cpp greedy hex") << QByteArray("pglock::Lock(p, \"\\x4142\")") << cpp << QByteArray();
        QTest::newRow("cpp line splice") << QByteArray("pglock::Lock(p, \"a\\\nb\")") << cpp << QByteArray("ab");
        QTest::newRow("cpp other namespace") << QByteArray("other::Lock(p, \"x\")") << cpp << QByteArray();
        QTest::newRow("cpp empty name") << QByteArray("pglock::Lock(p, \"\")") << cpp << QByteArray();
        QTest::newRow("cpp unknown UDL") << QByteArray("pglock::Lock(p, \"x\"_name)") << cpp << QByteArray();
        QTest::newRow("cpp using namespace") << QByteArray("run_blocking(pool, \"bare\", {}, fn)") << cpp
                                             << QByteArray("bare");
        QTest::newRow("cpp nested first arg") << QByteArray("pglock::run_once(get(a, b)[0], \"nested\", {}, f)") << cpp
                                              << QByteArray("nested");
    }
    void scanner_literals() {
        QFETCH(QByteArray, source);
        QFETCH(int, language);
        QFETCH(QByteArray, name);
        const lockscope::scan::TextScan scan =
            lockscope::scan::scanText(std::string_view(source.constData(), std::size_t(source.size())),
                                      lockscope::scan::Language(language));
        if (name.isEmpty()) {
            QVERIFY(scan.names.empty());
        } else {
            QCOMPARE(scan.names.size(), std::size_t(1));
            QCOMPARE(QByteArray::fromStdString(scan.names[0].name), name);
        }
    }

    // The file the CLI reads: exactly the documented schema.
    void on_disk_schema() {
        const QString file = path(QStringLiteral("schema.sqlite"));
        { CatalogStore store(file); }
        const QString conn = sqliteConnection(file);
        {
            QSqlQuery q(QSqlDatabase::database(conn));
            QVERIFY(q.exec(QStringLiteral("SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY name")));
            QStringList rows;
            while (q.next())
                rows << QStringList{q.value(0).toString(), q.value(1).toString(), q.value(2).toString(),
                                    q.value(3).isNull() ? QStringLiteral("NULL") : q.value(3).toString()}
                            .join(u'|');
            QCOMPARE(rows, (QStringList{
                               QStringLiteral("table|names|names|CREATE TABLE names (name BLOB PRIMARY KEY, key INTEGER NOT "
                                              "NULL, note TEXT NOT NULL DEFAULT '', owner TEXT NOT NULL DEFAULT '', added_at "
                                              "TEXT NOT NULL)"),
                               QStringLiteral("index|names_key|names|CREATE INDEX names_key ON names(key)"),
                               QStringLiteral("index|sqlite_autoindex_names_1|names|NULL"),
                           }));
        }
        QSqlDatabase::removeDatabase(conn);
    }

    void reopen_and_two_instances() {
        const QString file = path(QStringLiteral("reopen.sqlite"));
        {
            CatalogStore a(file);
            CatalogStore b(file);  // separate connections on one file
            QCOMPARE(a.add("one", QStringLiteral("note 1")), CatalogStore::AddResult::added);
            QCOMPARE(b.add("two"), CatalogStore::AddResult::added);
            QCOMPARE(b.add("one"), CatalogStore::AddResult::duplicate);
            {
                CatalogStore c(file);
                QCOMPARE(c.count(), 2);
            }  // c's destructor must leave a and b working
            QCOMPARE(a.count(), 2);
            QCOMPARE(b.count(), 2);
        }
        CatalogStore again(file);
        QVERIFY(again.isOpen());
        QCOMPARE(namesOf(again.entries()), (QList<QByteArray>{"one", "two"}));
        QCOMPARE(again.entry("one")->note, QStringLiteral("note 1"));
    }

    void refuses_foreign_files() {
        const QString text = path(QStringLiteral("not-sqlite.sqlite"));
        writeFile(text, QByteArray("this is not an SQLite database, just text\n").repeated(200));
        {
            CatalogStore store(text);
            QVERIFY(!store.isOpen());
            QVERIFY(!store.errorString().isEmpty());
            QCOMPARE(store.add("x"), CatalogStore::AddResult::failed);
            QVERIFY(!store.importText(text).ok());
        }
        const QString foreign = path(QStringLiteral("foreign.sqlite"));
        const QString conn = sqliteConnection(foreign);
        {
            QSqlQuery q(QSqlDatabase::database(conn));
            QVERIFY(q.exec(QStringLiteral("CREATE TABLE names (id INTEGER PRIMARY KEY, label TEXT)")));
        }
        QSqlDatabase::removeDatabase(conn);
        CatalogStore store(foreign);
        QVERIFY(!store.isOpen());
        QVERIFY2(store.errorString().contains(QStringLiteral("not a lockscope catalog")), qPrintable(store.errorString()));
    }

    // Another program's SQLite file is never written: no table, no index, not a byte changed.
    void never_writes_into_another_programs_database() {
        const struct {
            const char* file;
            QStringList setup;
        } cases[] = {
            {"app.sqlite", {QStringLiteral("CREATE TABLE settings (k TEXT PRIMARY KEY, v TEXT)"),
                            QStringLiteral("INSERT INTO settings VALUES ('theme', 'dark')")}},
            // The catalog's exact schema, but marked as somebody else's.
            {"marked.sqlite", {QStringLiteral("PRAGMA application_id = 1234"),
                               QString::fromLatin1("CREATE TABLE names (name BLOB PRIMARY KEY, key INTEGER NOT NULL, note TEXT "
                                                   "NOT NULL DEFAULT '', owner TEXT NOT NULL DEFAULT '', added_at TEXT NOT NULL)")}},
            // No tables yet, but an existing database of another program.
            {"empty-other.sqlite", {QStringLiteral("PRAGMA application_id = 99"), QStringLiteral("PRAGMA user_version = 7")}},
        };
        for (const auto& c : cases) {
            const QString file = path(QString::fromLatin1(c.file));
            QCOMPARE(sqlOn(file, c.setup), QString());
            const QByteArray before = fileBytes(file);
            QVERIFY(!before.isEmpty());
            {
                CatalogStore store(file);
                QVERIFY2(!store.isOpen(), c.file);
                QVERIFY2(store.errorString().contains(QStringLiteral("not a lockscope catalog")), qPrintable(store.errorString()));
                QCOMPARE(store.add("x"), CatalogStore::AddResult::failed);
            }
            QVERIFY2(fileBytes(file) == before, c.file);
            QVERIFY2(!QFile::exists(file + QStringLiteral("-journal")), c.file);
        }
    }

    // New files (absent or empty) become catalogs marked with the application_id; a catalog made
    // before the id existed (its exact schema, id 0) is still one and gets the id.
    void new_catalogs_carry_the_application_id() {
        const QString fresh = path(QStringLiteral("fresh.sqlite"));
        { CatalogStore store(fresh); QVERIFY(store.isOpen()); }
        QCOMPARE(applicationId(fresh), kCatalogApplicationId);
        const QString empty = path(QStringLiteral("empty-file.sqlite"));
        writeFile(empty, QByteArray());
        { CatalogStore store(empty); QVERIFY2(store.isOpen(), qPrintable(store.errorString())); }
        QCOMPARE(applicationId(empty), kCatalogApplicationId);
        const QString legacy = path(QStringLiteral("legacy.sqlite"));
        QCOMPARE(sqlOn(legacy, {QString::fromLatin1("CREATE TABLE names (name BLOB PRIMARY KEY, key INTEGER NOT NULL, note TEXT NOT "
                                                     "NULL DEFAULT '', owner TEXT NOT NULL DEFAULT '', added_at TEXT NOT NULL)"),
                                 QStringLiteral("INSERT INTO names VALUES (x'6f6c64', 0, '', '', '2024-01-01T00:00:00.000Z')")}),
                 QString());
        {
            CatalogStore store(legacy);
            QVERIFY2(store.isOpen(), qPrintable(store.errorString()));
            QCOMPARE(namesOf(store.entries()), QList<QByteArray>{"old"});
        }
        QCOMPARE(applicationId(legacy), kCatalogApplicationId);
    }

    // A row whose stored key belongs to another name: the key shown is always the name's own.
    void stored_keys_are_never_trusted() {
        const QString file = path(QStringLiteral("wrong-keys.sqlite"));
        {
            CatalogStore store(file);
            QCOMPARE(store.add("orders.real"), CatalogStore::AddResult::added);
            QCOMPARE(store.add("orders.other"), CatalogStore::AddResult::added);
        }
        // Another writer stores orders.other's key on orders.real's row.
        QCOMPARE(sqlOn(file, {QStringLiteral("UPDATE names SET key = %1 WHERE name = x'%2'")
                                  .arg(keyOf("orders.other"))
                                  .arg(QString::fromLatin1(QByteArray("orders.real").toHex()))}),
                 QString());
        CatalogStore store(file);
        QVERIFY(store.isOpen());
        for (const CatalogEntry& e : store.entries()) QCOMPARE(e.key, keyOf(e.name));
        QCOMPARE(store.entry("orders.real")->key, keyOf("orders.real"));
        QCOMPARE(store.namesForKey(keyOf("orders.other")), QList<QByteArray>{"orders.other"});
        QVERIFY(store.collisions().empty());
        lockscope::CatalogNameCache cache;
        cache.setSnapshot(lockscope::CatalogSnapshot::load(store));
        QCOMPARE(cache.names(keyOf("orders.other")), QList<QByteArray>{"orders.other"});
        QCOMPARE(cache.names(keyOf("orders.real")), QList<QByteArray>{"orders.real"});
    }

    // A catalog another process is writing says so ("busy", SQLite's own words), not "not a
    // lockscope catalog"; the store waits for it up to its 5 s busy timeout first.
    void busy_catalog_says_busy() {
        const QString file = path(QStringLiteral("busy.sqlite"));
        {
            CatalogStore store(file);
            QCOMPARE(store.add("busy.name"), CatalogStore::AddResult::added);
        }
        const QString conn = sqliteConnection(file);
        {
            QSqlQuery q(QSqlDatabase::database(conn));
            QVERIFY(q.exec(QStringLiteral("BEGIN EXCLUSIVE")));
            CatalogStore store(file);
            QVERIFY(!store.isOpen());
            const QString error = store.errorString();
            QVERIFY2(error.contains(QStringLiteral("busy: another program is writing to it")), qPrintable(error));
            QVERIFY2(error.contains(QStringLiteral("database is locked")), qPrintable(error));
            QVERIFY2(!error.contains(QStringLiteral("not a lockscope catalog")), qPrintable(error));
            QVERIFY(q.exec(QStringLiteral("ROLLBACK")));
        }
        QSqlDatabase::removeDatabase(conn);
        CatalogStore again(file);
        QVERIFY2(again.isOpen(), qPrintable(again.errorString()));
        QCOMPARE(again.count(), 1);
    }

    void default_path() {
        const QString p = CatalogStore::defaultPath();
        QVERIFY(p.endsWith(QStringLiteral("/catalog.sqlite")));
        QVERIFY(p.startsWith(QStandardPaths::writableLocation(QStandardPaths::AppDataLocation)));
        {
            CatalogStore store;  // test mode: under ~/.qttest, created with its directories
            QVERIFY2(store.isOpen(), qPrintable(store.errorString()));
            QCOMPARE(store.path(), p);
        }
        QFile::remove(p);
    }
};

QTEST_GUILESS_MAIN(TestCatalogStore)
#include "test_catalog_store.moc"
