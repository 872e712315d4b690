// Other libraries' key schemes against an independent implementation: key_scheme_vectors.py
// (Python's hashlib, zlib, hmac) computes the expected keys at test time, and each scheme is also
// checked against a value quoted in that library's own tests or docs where there is one.
// No server (test_key_schemes_sql checks the SQL forms on one).
#include <QProcess>
#include <QtTest>

#include <optional>
#include <set>
#include <string>

#include "pglock/key_scheme_audit.hpp"
#include "pglock/key_schemes.hpp"

using pglock::KeyForm;
using pglock::KeySchemeError;
using pglock::SchemeContext;
using pglock::SchemeKey;

namespace {

std::optional<std::string> field(const QByteArray& text) {
    if (text == "-") return std::nullopt;
    return QByteArray::fromHex(text.mid(1)).toStdString();
}

KeySchemeError::Kind error_kind(const std::function<void()>& f) {
    try {
        f();
    } catch (const KeySchemeError& e) {
        return e.kind();
    }
    throw std::logic_error("no KeySchemeError thrown");
}

}  // namespace

class TestKeySchemes : public QObject {
    Q_OBJECT
private slots:
    void every_scheme_matches_the_python_vectors() {
        QProcess py;
        py.start("python3", {QStringLiteral(PGLOCK_TEST_SOURCE_DIR "/tests/core/key_scheme_vectors.py")});
        QVERIFY2(py.waitForFinished(60000), "key_scheme_vectors.py did not finish in 60 s");
        QCOMPARE(py.exitCode(), 0);
        const QList<QByteArray> lines = py.readAllStandardOutput().split('\n');
        std::set<std::string> seen;
        int checked = 0;
        for (const QByteArray& line : lines) {
            if (line.isEmpty()) continue;
            const QList<QByteArray> c = line.split('\t');
            QCOMPARE(c.size(), 10);
            const std::string scheme = c[0].toStdString();
            SchemeContext ctx{field(c[2]), field(c[3]), field(c[4]), field(c[5]), field(c[6])};
            const auto name = field(c[1]);
            const SchemeKey got = pglock::scheme_key(scheme, name, ctx);
            const QByteArray where = line.left(120);
            if (c[7] == "bigint") {
                QVERIFY2(got.form == KeyForm::bigint, where.constData());
                QVERIFY2(got.packed == c[8].toLongLong(), (where + " got " + QByteArray::number(qint64(got.packed))).constData());
            } else {
                QCOMPARE(c[7], QByteArray("pair"));
                QVERIFY2(got.form == KeyForm::int_pair, where.constData());
                QVERIFY2(got.key1() == c[8].toInt() && got.key2() == c[9].toInt(),
                         (where + " got " + QByteArray::number(got.key1()) + "," + QByteArray::number(got.key2())).constData());
            }
            seen.insert(scheme);
            ++checked;
        }
        QVERIFY(checked > 1000);
        // Every registered scheme had vectors: a new scheme without them fails here.
        for (const auto& s : pglock::key_schemes()) QVERIFY2(seen.count(std::string(s.id)), std::string(s.id).c_str());
    }

    // Values quoted by the libraries themselves.
    void golang_migrate_quoted_vector() {
        // database/util_test.go: GenerateAdvisoryLockId("database_name", "schema_name_1", "schema_name_2"),
        // i.e. crc32("schema_name_1\0schema_name_2\0database_name") * 1486364155.
        const auto k = pglock::scheme_key("golang-migrate", std::nullopt,
                                          SchemeContext{"database_name", "schema_name_1", "schema_name_2", {}, {}});
        QCOMPARE(k.packed, std::int64_t{3743845847});
    }
    void sqlx_quoted_vector() {
        // sqlx-postgres/src/advisory_lock.rs, the doc test of PgAdvisoryLock::new.
        QCOMPARE(pglock::scheme_key("sqlx", "my first Postgres advisory lock!", {}).packed, std::int64_t{-5560419505042474287});
    }
    void distributedlock_quoted_vectors() {
        // PostgresAdvisoryLockKeyTest.cs TestNameHashing: 18 × '漢' with allowHashing.
        std::string han;
        for (int i = 0; i < 18; ++i) han += "\xe6\xbc\xa2";
        const auto hashed = pglock::scheme_key("distributedlock-net", han, {});
        QVERIFY(hashed.form == KeyForm::bigint);
        QCOMPARE(hashed.packed, std::int64_t{-5707277204051710361});
        // TestEquality: nine NULs are the pair (0, 0); "00000003,ffffffff" is the pair (3, -1).
        QVERIFY(pglock::scheme_key("distributedlock-net", std::string(9, '\0'), {}) == SchemeKey::pair(0, 0));
        QVERIFY(pglock::scheme_key("distributedlock-net", "00000003,ffffffff", {}) == SchemeKey::pair(3, -1));
        QVERIFY(pglock::scheme_key("distributedlock-net", std::string(16, '0'), {}) == (SchemeKey{KeyForm::bigint, 0}));
    }

    void pair_halves_and_objsubid() {
        const auto k = SchemeKey::pair(-2, 7);
        QCOMPARE(k.key1(), -2);
        QCOMPARE(k.key2(), 7);
        QCOMPARE(k.objsubid(), 2);
        QCOMPARE(pglock::tag_of(k.packed).classid, 0xfffffffeu);
        QCOMPARE(pglock::tag_of(k.packed).objid, 7u);
    }

    void registry_is_stable() {
        std::set<std::string_view> ids;
        for (const auto& s : pglock::key_schemes()) {
            QVERIFY2(ids.insert(s.id).second, "duplicate id");
            QVERIFY(s.derive != nullptr);
            QVERIFY(!s.description.empty());
        }
        QCOMPARE(pglock::key_schemes().front().id, std::string_view("pglock-v1"));
        QVERIFY(!pglock::key_schemes().front().bits32);
        for (const char* id : {"golang-migrate", "rails-migration", "sqlx-migrate", "with_advisory_lock", "django-pglocks"})
            QVERIFY2(pglock::find_key_scheme(id)->bits32, id);
        for (const char* id : {"distributedlock-net", "pals", "pg-boss", "good_job", "sqlx"})
            QVERIFY2(!pglock::find_key_scheme(id)->bits32, id);
        // v1 in the registry is key_of itself.
        QCOMPARE(pglock::scheme_key("pglock-v1", "orders.daily-rollup", {}).packed, pglock::key_of("orders.daily-rollup"));
    }

    void clear_errors() {
        using K = KeySchemeError::Kind;
        QVERIFY(error_kind([] { pglock::scheme_key("nope", "x", {}); }) == K::unknown_scheme);
        try {
            pglock::scheme_key("nope", "x", {});
        } catch (const KeySchemeError& e) {
            QVERIFY2(std::string(e.what()).find("pglock-v1, golang-migrate") != std::string::npos, e.what());
        }
        QVERIFY(error_kind([] { pglock::scheme_key("rails-migration", std::nullopt, {}); }) == K::missing_context);
        QVERIFY(error_kind([] { pglock::scheme_key("golang-migrate", std::nullopt, SchemeContext{"app", {}, {}, {}, {}}); }) ==
                K::missing_context);
        QVERIFY(error_kind([] { pglock::scheme_key("good_job", "1", {}); }) == K::missing_context);
        QVERIFY(error_kind([] { pglock::scheme_key("sqlx", std::nullopt, {}); }) == K::missing_name);
        QVERIFY(error_kind([] { pglock::scheme_key("with_advisory_lock", "x", SchemeContext{{}, {}, {}, {}, "12abc"}); }) ==
                K::unsupported);
        QVERIFY(error_kind([] { pglock::scheme_key("pg-boss", "a\\b", SchemeContext{"app", {}, {}, {}, {}}); }) == K::unsupported);
        // pg-boss without a name is its schema lock: the empty key.
        QVERIFY(pglock::scheme_key("pg-boss", std::nullopt, SchemeContext{"app", {}, {}, {}, {}}) ==
                pglock::scheme_key("pg-boss", "", SchemeContext{"app", {}, {}, {}, {}}));
    }

    // The audit groups by key space: a pair and a bigint with the same 64 bits are two locks.
    // with_advisory_lock gives "x" the pair (crc32("x") & 0x7fffffff = 0x0cdc1683, 0) (Python's
    // zlib); DistributedLock spells that pair "0cdc1683,00000000" and the bigint with the same
    // bits "0cdc168300000000".
    void audit_groups_by_key_space() {
        const std::vector<std::string> names{"x", "0cdc1683,00000000", "0cdc168300000000", "x"};
        const pglock::KeySchemeInfo* schemes[] = {pglock::find_key_scheme("with_advisory_lock"),
                                                  pglock::find_key_scheme("distributedlock-net")};
        const auto audit = pglock::audit_key_schemes(names, schemes, {});
        QCOMPARE(audit.collisions.size(), std::size_t{1});
        const auto& c = audit.collisions.front();
        QVERIFY(c.key == SchemeKey::pair(0x0cdc1683, 0));
        QCOMPARE(c.entries.size(), std::size_t{2});  // "x" listed twice is one entry
        QVERIFY((c.entries[0] == pglock::SchemeEntry{"with_advisory_lock", "x"}));
        QVERIFY((c.entries[1] == pglock::SchemeEntry{"distributedlock-net", "0cdc1683,00000000"}));
        QVERIFY(audit.refused.empty());
    }

    void audit_counts_a_context_lock_once_and_reports_refusals() {
        const std::vector<std::string> names{"a", "b\\c"};
        const pglock::KeySchemeInfo* schemes[] = {pglock::find_key_scheme("rails-migration"), pglock::find_key_scheme("pg-boss")};
        const auto audit = pglock::audit_key_schemes(names, schemes, SchemeContext{"app", {}, {}, {}, {}});
        QVERIFY(audit.collisions.empty());
        QCOMPARE(audit.refused.size(), std::size_t{1});  // pg-boss refuses the backslash
        QVERIFY(pglock::expected_32bit_collisions(77163) > 0.69 && pglock::expected_32bit_collisions(77163) < 0.70);
    }
};

QTEST_APPLESS_MAIN(TestKeySchemes)
#include "test_key_schemes.moc"
