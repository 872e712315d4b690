// `pglock catalog audit`: names that share a key within or across key schemes. No server.
// The colliding names were found with Python (zlib.crc32(b"job-29685295") == zlib.crc32(b"job-32060020")
// == 3715908291), not by the code under test.
#include <QTemporaryDir>
#include <QtTest>

#include "cli_test_support.hpp"

using namespace clitest;

namespace {

QString write_catalog(const QTemporaryDir& dir, const QByteArray& text) {
    const QString path = dir.filePath("names.txt");
    QFile f(path);
    if (!f.open(QIODevice::WriteOnly) || f.write(text) != text.size()) qFatal("cannot write %s", qPrintable(path));
    return path;
}

}  // namespace

class TestCliCatalogAudit : public QObject {
    Q_OBJECT
    QTemporaryDir dir_;

private slots:
    void clean_catalog_exits_0() {
        const QString path = write_catalog(dir_, "orders.daily-rollup\njob-29685295\njob-32060020\n");
        const auto r = run({"catalog", "audit", path});
        QCOMPARE(r.code, 0);
        QVERIFY2(r.out.contains(": 3 names; schemes pglock-v1\n"), r.out.constData());
        QVERIFY2(r.out.endsWith("no collisions\n"), r.out.constData());
        QCOMPARE(r.err, QByteArray());  // pglock-v1 is 64-bit: no warning
    }

    void crc32_collision_within_a_scheme() {
        const QString path = write_catalog(dir_, "orders.daily-rollup\njob-29685295\njob-32060020\n");
        const auto r = run({"catalog", "audit", path, "--scheme", "django-pglocks", "--scheme", "with_advisory_lock"});
        QCOMPARE(r.code, 1);
        // django-pglocks: the signed CRC-32, 3715908291 - 2^32; with_advisory_lock: the pair (CRC & 0x7fffffff, 0).
        QVERIFY2(r.out.contains("collision on bigint -579059005 (classid 4294967295, objid 3715908291, objsubid 1): "
                                "django-pglocks \"job-29685295\", django-pglocks \"job-32060020\"\n"),
                 r.out.constData());
        QVERIFY2(r.out.contains("collision on int4 pair 1568424643,0 (classid 1568424643, objid 0, objsubid 2): "
                                "with_advisory_lock \"job-29685295\", with_advisory_lock \"job-32060020\"\n"),
                 r.out.constData());
        QVERIFY2(r.out.endsWith("2 collisions: those locks block each other\n"), r.out.constData());
        // A warning for each 32-bit scheme.
        QVERIFY2(r.err.contains("pglock: warning: django-pglocks keys are 32-bit"), r.err.constData());
        QVERIFY2(r.err.contains("pglock: warning: with_advisory_lock keys are 32-bit"), r.err.constData());
    }

    void collision_across_schemes() {
        // PALs without an app and DistributedLock's hash form are both SHA-1's first 8 bytes,
        // little-endian: one long name takes the same key in both.
        const QString path = write_catalog(dir_, "orders.daily-rollup\n");
        const auto r = run({"catalog", "audit", path, "--scheme", "pals", "--scheme", "distributedlock-net"});
        QCOMPARE(r.code, 1);
        QVERIFY2(r.out.contains(": pals \"orders.daily-rollup\", distributedlock-net \"orders.daily-rollup\"\n"),
                 r.out.constData());
        // With an app, PALs hashes "app.name": no collision.
        const auto r2 = run({"catalog", "audit", path, "--scheme", "pals", "--scheme", "distributedlock-net", "--app", "billing"});
        QCOMPARE(r2.code, 0);
    }

    void all_schemes_includes_context_locks() {
        const QString path = write_catalog(dir_, "a\nb\n");
        const auto r = run({"catalog", "audit", path, "--all-schemes", "--database", "app"});
        QCOMPARE(r.code, 0);
        QVERIFY2(r.out.contains("schemes pglock-v1, rails-migration, sqlx-migrate, with_advisory_lock"), r.out.constData());
        QVERIFY2(r.err.contains("not auditing golang-migrate: it needs --schema"), r.err.constData());
        QVERIFY2(r.err.contains("not auditing good_job: it needs --table"), r.err.constData());
    }

    void usage_errors() {
        const QString path = write_catalog(dir_, "a\n");
        for (const QStringList& args :
             {QStringList{"catalog", "audit", path, "--scheme", "nope"}, QStringList{"catalog", "audit", path, "--scheme", "good_job"},
              QStringList{"catalog", "audit", path, "--database", "d"}, QStringList{"catalog", "audit"},
              QStringList{"catalog"}}) {
            const auto r = run(args);
            QVERIFY2(r.code == 2, qPrintable(args.join(' ') + " -> " + QString::number(r.code)));
            QVERIFY2(r.err.startsWith("pglock: usage:"), r.err.constData());
        }
        QVERIFY(run({"catalog", "audit", path, "--scheme", "nope"}).err.contains("known: pglock-v1, golang-migrate"));
        const auto missing = run({"catalog", "audit", dir_.filePath("absent.txt")});
        QCOMPARE(missing.code, 1);
    }
};

QTEST_GUILESS_MAIN(TestCliCatalogAudit)
#include "test_cli_catalog_audit.moc"
