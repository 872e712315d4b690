// `pglock key`: names to keys without a server, in each output format.
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QtTest>

#include "cli_test_support.hpp"
#include "pglock/key_schemes.hpp"

using namespace clitest;

namespace {

// The known vector, shared with the Go package: SHA-256("orders.daily-rollup")[:8] big-endian.
constexpr const char* vector_name = "orders.daily-rollup";
constexpr std::int64_t vector_key = -7132652647757890940;
// How pg_locks shows it, computed here from the key (not by the code under test).
const quint32 vector_classid = quint32(quint64(vector_key) >> 32);
const quint32 vector_objid = quint32(quint64(vector_key) & 0xffffffffu);

QByteArray tsv_line(const char* name) {
    return QByteArray(name) + '\t' + QByteArray::number(qint64(vector_key)) + '\t' +
           QByteArray::number(vector_classid) + '\t' + QByteArray::number(vector_objid) + '\n';
}

}  // namespace

class TestCliKey : public QObject {
    Q_OBJECT
private slots:
    void tsv_known_vector() {
        const auto r = run({"key", vector_name});
        QCOMPARE(r.code, 0);
        QCOMPARE(r.out, tsv_line(vector_name));
        QCOMPARE(r.err, QByteArray());
    }

    void json_known_vector() {
        const auto r = run({"key", "--json", vector_name, "a\"quote"});
        QCOMPARE(r.code, 0);
        QJsonParseError perr;
        const auto doc = QJsonDocument::fromJson(r.out, &perr);
        QVERIFY2(perr.error == QJsonParseError::NoError, qPrintable(perr.errorString() + ": " + r.out));
        QVERIFY(doc.isArray());
        QCOMPARE(doc.array().size(), 2);
        const auto o = doc.array().at(0).toObject();
        QCOMPARE(o.value("name").toString(), QString(vector_name));
        QCOMPARE(o.value("key").toInteger(), qint64(vector_key));
        QCOMPARE(o.value("classid").toInteger(), qint64(vector_classid));
        QCOMPARE(o.value("objid").toInteger(), qint64(vector_objid));
        QVERIFY(!o.contains("name_hex"));  // only for names that are not UTF-8
        // The derivation is stated: 1 is the Go package's SHA-256 scheme (pglock::key_scheme_version).
        QCOMPARE(o.value("key_scheme").toInt(), 1);
        QCOMPARE(doc.array().at(1).toObject().value("key_scheme").toInt(), 1);
        // All 19 digits are written, whatever a consumer's number type can hold.
        QVERIFY(r.out.contains("\"key\":-7132652647757890940"));
        QCOMPARE(doc.array().at(1).toObject().value("name").toString(), QString("a\"quote"));
    }

    void json_names_that_are_not_text() {
        // Any bytes are a valid name: a control character and invalid UTF-8 (only stdin can carry it).
        const QByteArray raw("\xff\x01ok");
        const auto r = run({"key", "--json", "-"}, raw + "\n");
        QCOMPARE(r.code, 0);
        QJsonParseError perr;
        const auto doc = QJsonDocument::fromJson(r.out, &perr);
        QVERIFY2(perr.error == QJsonParseError::NoError, qPrintable(perr.errorString() + ": " + r.out));
        const auto o = doc.array().at(0).toObject();
        QCOMPARE(o.value("name").toString(), QString::fromUtf8("\xef\xbf\xbd\x01ok"));  // U+FFFD for the bad byte
        QCOMPARE(o.value("name_hex").toString(), QString("ff016f6b"));                  // the exact bytes
        QCOMPARE(o.value("key").toInteger(), qint64(pglock::key_of(raw.toStdString())));
    }

    void sql_known_vector() {
        const auto r = run({"key", "--sql", vector_name});
        QCOMPARE(r.code, 0);
        const QString sql = QString::fromUtf8(r.out);
        QVERIFY2(sql.contains("pg_locks"), qPrintable(sql));
        QVERIFY2(sql.contains("objsubid OPERATOR(pg_catalog.=) 1"), qPrintable(sql));
        QVERIFY2(sql.contains(QString("classid OPERATOR(pg_catalog.=) %1").arg(vector_classid)), qPrintable(sql));
        QVERIFY2(sql.contains(QString("objid OPERATOR(pg_catalog.=) %1").arg(vector_objid)), qPrintable(sql));
    }

    void names_from_stdin() {
        const auto r = run({"key", "first", "-", "last"}, QByteArray("a b\n") + vector_name + "\n");
        QCOMPARE(r.code, 0);
        const auto lines = r.out.split('\n');
        QCOMPARE(lines.size(), 5);  // four lines and the empty rest after the last newline
        QVERIFY(lines[0].startsWith("first\t"));
        QVERIFY(lines[1].startsWith("a b\t"));
        QCOMPARE(lines[2] + '\n', tsv_line(vector_name));
        QVERIFY(lines[3].startsWith("last\t"));
    }

    void tsv_escapes_tabs_in_names() {
        const auto r = run({"key", "-"}, "a\tb\n");
        QCOMPARE(r.code, 0);
        QCOMPARE(r.out.count('\t'), 3);  // still four fields
        QVERIFY(r.out.startsWith("a\\tb\t"));
    }

    void empty_name_is_an_error() {
        const auto r = run({"key", vector_name, ""});
        QCOMPARE(r.code, 1);
        QVERIFY2(clean_one_line_error(r.err), r.err.constData());
        QVERIFY2(r.err.contains("lock_empty_name"), r.err.constData());
        QCOMPARE(r.out, QByteArray());  // nothing half-printed
    }

    void usage_errors_exit_2() {
        for (const QStringList& args : {QStringList{"key", "--bogus", "x"}, QStringList{"key"},
                                        QStringList{"key", "--json", "--sql", "x"}, QStringList{},
                                        QStringList{"frobnicate"}}) {
            const auto r = run(args);
            QVERIFY2(r.code == 2, qPrintable(args.join(' ') + " -> " + QString::number(r.code)));
            QVERIFY2(r.err.startsWith("pglock: usage:"), r.err.constData());
        }
        QVERIFY(run({"key", "--bogus", "x"}).err.contains("--bogus"));
    }

    // Other libraries' schemes; the vectors are quoted from their own tests and docs.
    void scheme_known_vectors() {
        auto r = run({"key", "--scheme", "golang-migrate", "--database", "database_name", "--schema", "schema_name_1",
                      "--table", "schema_name_2"});
        QCOMPARE(r.code, 0);
        QCOMPARE(r.out, QByteArray("\t3743845847\t0\t3743845847\t1\n"));  // golang-migrate database/util_test.go
        r = run({"key", "--scheme", "sqlx", "my first Postgres advisory lock!"});
        QCOMPARE(r.code, 0);
        QVERIFY2(r.out.startsWith("my first Postgres advisory lock!\t-5560419505042474287\t"), r.out.constData());
        QVERIFY(r.out.endsWith("\t1\n"));
        QCOMPARE(r.err, QByteArray());
    }

    void scheme_pair_form() {
        // with_advisory_lock: (crc32("x") & 0x7fffffff, 42); zlib.crc32(b"x") = 2363233923.
        const qint32 key1 = qint32(2363233923u & 0x7fffffffu);
        auto r = run({"key", "--scheme", "with_advisory_lock", "--prefix", "42", "x"});
        QCOMPARE(r.code, 0);
        QCOMPARE(r.out, "x\t" + QByteArray::number(key1) + ",42\t" + QByteArray::number(key1) + "\t42\t2\n");
        r = run({"key", "--json", "--scheme", "with_advisory_lock", "--prefix", "42", "x"});
        const auto o = QJsonDocument::fromJson(r.out).array().at(0).toObject();
        QCOMPARE(o.value("scheme").toString(), QString("with_advisory_lock"));
        QCOMPARE(o.value("form").toString(), QString("int_pair"));
        QVERIFY(o.value("key").isNull());
        QCOMPARE(o.value("pair").toArray().at(0).toInteger(), qint64(key1));
        QCOMPARE(o.value("pair").toArray().at(1).toInteger(), qint64(42));
        QCOMPARE(o.value("objsubid").toInt(), 2);
        QCOMPARE(o.value("bits32").toBool(), true);
    }

    void scheme_sql_names_the_pair_space() {
        const qint32 key1 = qint32(2363233923u & 0x7fffffffu);  // zlib.crc32(b"x") & 0x7fffffff
        const auto r = run({"key", "--sql", "--scheme", "with_advisory_lock", "x"});
        QCOMPARE(r.code, 0);
        QVERIFY2(r.out.startsWith("-- name x (with_advisory_lock)\n-- advisory int4 pair " + QByteArray::number(key1) + ",0\n"),
                 r.out.constData());
        QVERIFY2(r.out.contains("l.objsubid OPERATOR(pg_catalog.=) 2\n  AND l.classid OPERATOR(pg_catalog.=) " + QByteArray::number(key1) + " AND l.objid OPERATOR(pg_catalog.=) 0\n"),
                 r.out.constData());
        const auto b = run({"key", "--sql", "--scheme", "pglock-v1", vector_name});
        QVERIFY2(b.out.contains("l.objsubid OPERATOR(pg_catalog.=) 1\n  AND l.classid OPERATOR(pg_catalog.=) " + QByteArray::number(vector_classid)), b.out.constData());
    }

    void scheme_without_a_name() {
        // pg-boss's schema lock is its empty key; a migration lock comes from the context alone.
        auto r = run({"key", "--json", "--scheme", "pg-boss", "--database", "app"});
        QCOMPARE(r.code, 0);
        QVERIFY(QJsonDocument::fromJson(r.out).array().at(0).toObject().value("name").isNull());
        r = run({"key", "--scheme", "rails-migration", "--database", "app"});
        QCOMPARE(r.code, 0);
        // 2053462845 * zlib.crc32(b"app") (= 3379458255, from Python).
        QCOMPARE(r.out.split('\t').at(1), QByteArray::number(qint64(2053462845) * qint64(3379458255u)));
    }

    void all_schemes_table() {
        auto r = run({"key", "--all-schemes", "billing:invoice-run", "--database", "app"});
        QCOMPARE(r.code, 0);
        QVERIFY2(r.out.startsWith("name: billing:invoice-run\nSCHEME"), r.out.constData());
        for (const auto& s : pglock::key_schemes()) QVERIFY2(r.out.contains("\n" + QByteArray(s.id.data(), qsizetype(s.id.size())) + " "), s.id.data());
        QVERIFY(r.out.contains("needs --table"));   // good_job without --table
        QVERIFY(r.out.contains("needs --schema"));  // golang-migrate without --schema
        QVERIFY(r.out.contains(QByteArray::number(qint64(pglock::key_of("billing:invoice-run")))));
        r = run({"key", "--all-schemes", "--json", "a", "b"});
        QCOMPARE(r.code, 0);
        const auto rows = QJsonDocument::fromJson(r.out).array();
        QCOMPARE(rows.size(), 2 * qsizetype(pglock::key_schemes().size()));
        int bits32 = 0;
        for (const auto& row : rows) bits32 += row.toObject().value("bits32").toBool() ? 1 : 0;
        QCOMPARE(bits32, 2 * 5);  // golang-migrate, rails-migration, sqlx-migrate, with_advisory_lock, django-pglocks
        QCOMPARE(rows.at(1).toObject().value("needs").toString(), QString("database"));  // golang-migrate
    }

    void scheme_usage_errors() {
        struct Case {
            QStringList args;
            const char* says;
        };
        const Case cases[] = {
            {{"key", "--scheme", "nope", "x"}, "known: pglock-v1, golang-migrate, rails-migration"},
            {{"key", "--scheme", "rails-migration"}, "rails-migration needs --database"},
            {{"key", "--scheme", "golang-migrate", "--database", "d"}, "golang-migrate needs --schema"},
            {{"key", "--scheme", "good_job", "1"}, "good_job needs --table"},
            {{"key", "--scheme", "sqlx", "--database", "d", "x"}, "sqlx does not use --database"},
            {{"key", "--database", "d", "x"}, "--database goes with --scheme or --all-schemes"},
            {{"key", "--scheme", "rails-migration", "--database", "d", "x"}, "takes no name"},
            {{"key", "--scheme", "sqlx"}, "sqlx needs a name"},
            {{"key", "--scheme", "with_advisory_lock", "--prefix", "1x", "a"}, "must be the integer"},
            {{"key", "--scheme", "sqlx", "--all-schemes", "a"}, "excludes"},
            {{"key", "--sql", "--all-schemes", "a"}, "excludes"},
        };
        for (const auto& c : cases) {
            const auto r = run(c.args);
            QVERIFY2(r.code == 2, qPrintable(c.args.join(' ') + " -> " + QString::number(r.code)));
            QVERIFY2(r.err.startsWith("pglock: usage:") && r.err.contains(c.says), r.err.constData());
            QCOMPARE(r.out, QByteArray());
        }
    }

    void help_exits_0() {
        const auto r = run({"--help"});
        QCOMPARE(r.code, 0);
        for (const char* verb : {"key", "try", "hold", "bench"}) QVERIFY2(r.out.contains(verb), verb);
    }
};

QTEST_GUILESS_MAIN(TestCliKey)
#include "test_cli_key.moc"
