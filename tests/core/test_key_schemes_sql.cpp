// The SQL forms, on a real server: pglock-v1's (for operators without this library) against
// key_of for every single byte and odd names; pg-boss's and GoodJob's own SQL expressions
// against the registry; and where pg_locks shows a pair-form key.
#include <QtTest>

#include <string>
#include <vector>

#include "core_test_util.hpp"
#include "pglock/key_schemes.hpp"

using namespace pgt;

namespace {

std::string hex_bytea(const std::string& bytes) {
    return "\\x" + QByteArray::fromStdString(bytes).toHex().toStdString();
}

std::string han18() {
    std::string s;
    for (int i = 0; i < 18; ++i) s += "\xe6\xbc\xa2";
    return s;
}

// Odd names that are text (the UTF-8 form takes text).
std::vector<std::string> text_names() {
    return {"", "a", "orders.daily-rollup", "gr\xc3\xb6\xc3\x9f" "e/\xd0\xba\xd0\xbb\xd1\x8e\xd1\x87", han18(),
            std::string(10000, 'x'), "back\\slash 'quote'", "tab\there"};
}

}  // namespace

class TestKeySchemesSql : public QObject {
    Q_OBJECT
    std::string dsn_;

private slots:
    void initTestCase() { PGT_REQUIRE_DSN(dsn_); }

    // The documented form, written out here as docs/key-schemes.md shows it, and the library's copy.
    void v1_sql_form_matches_key_of() {
        guarded([&] {
            RawConn obs(dsn_);
            const std::string doc_text =
                "SELECT ('x' || substr(encode(sha256(convert_to($1::text, 'UTF8')), 'hex'), 1, 16))::bit(64)::bigint";
            const std::string doc_bytea = "SELECT ('x' || substr(encode(sha256($1::bytea), 'hex'), 1, 16))::bit(64)::bigint";
            QCOMPARE("SELECT " + std::string(pglock::v1_key_sql()), doc_text);
            QCOMPARE("SELECT " + std::string(pglock::v1_key_sql_bytea()), doc_bytea);
            for (int b = 0; b < 256; ++b) {
                const std::string name(1, static_cast<char>(b));
                QCOMPARE(obs.integer(doc_bytea, {hex_bytea(name)}), static_cast<long long>(pglock::key_of(name)));
                if (b > 0 && b < 0x80)  // a text parameter carries no NUL, and one byte >= 0x80 is not UTF-8
                    QCOMPARE(obs.integer(doc_text, {name}), static_cast<long long>(pglock::key_of(name)));
            }
            for (const auto& name : text_names()) {
                QCOMPARE(obs.integer(doc_text, {name}), static_cast<long long>(pglock::key_of(name)));
                QCOMPARE(obs.integer(doc_bytea, {hex_bytea(name)}), static_cast<long long>(pglock::key_of(name)));
            }
            for (const std::string& name : {std::string("\xff\xfe\x80 not utf-8"), std::string("nul\0inside", 10)})
                QCOMPARE(obs.integer(doc_bytea, {hex_bytea(name)}), static_cast<long long>(pglock::key_of(name)));
        });
    }

    // pg-boss hashes (current_database() || '.pgboss.' || schema || key)::bytea with sha224.
    void pg_boss_matches_its_sql() {
        guarded([&] {
            RawConn obs(dsn_);
            const std::string sql = "SELECT ('x' || encode(sha224(($1::text || '.pgboss.' || $2::text || $3::text)::bytea), 'hex'))"
                                    "::bit(64)::bigint";
            for (const auto& name : text_names()) {
                if (name.find('\\') != std::string::npos) continue;
                for (const std::string schema : {"pgboss", "jobs", ""}) {
                    const pglock::SchemeContext ctx{"app_db", schema, {}, {}, {}};
                    QCOMPARE(obs.integer(sql, {"app_db", schema, name}),
                             static_cast<long long>(pglock::scheme_key("pg-boss", name, ctx).packed));
                }
            }
            // Why the registry refuses a backslash: text::bytea reads it as an escape.
            QVERIFY(obs.scalar("SELECT encode(('a\\\\b')::bytea, 'hex')") != obs.scalar("SELECT encode(convert_to('a\\\\b', 'UTF8'), 'hex')"));
        });
    }

    // GoodJob (hash_function md5): ('x' || substr(md5(table || '-' || id), 1, 16))::bit(64)::bigint.
    void good_job_matches_its_sql() {
        guarded([&] {
            RawConn obs(dsn_);
            const std::string sql = "SELECT ('x' || substr(md5($1::text || '-' || $2::text), 1, 16))::bit(64)::bigint";
            for (const auto& id : text_names()) {
                const pglock::SchemeContext ctx{{}, {}, "good_jobs", {}, {}};
                QCOMPARE(obs.integer(sql, {"good_jobs", id}), static_cast<long long>(pglock::scheme_key("good_job", id, ctx).packed));
            }
        });
    }

    // A pair-form key shows in pg_locks as classid = key1, objid = key2, objsubid = 2.
    void pair_form_in_pg_locks() {
        guarded([&] {
            RawConn holder(dsn_);
            RawConn obs(dsn_);
            for (const auto& k : {pglock::scheme_key("with_advisory_lock", "billing:invoice-run", {}),
                                  pglock::scheme_key("distributedlock-net", "ASCII", {}),
                                  pglock::SchemeKey::pair(-1, -2147483647 - 1)}) {
                QCOMPARE(k.objsubid(), 2);
                holder.query("SELECT pg_advisory_lock($1::int4, $2::int4)", {std::to_string(k.key1()), std::to_string(k.key2())});
                const auto tag = pglock::tag_of(k.packed);
                QCOMPARE(obs.integer("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND pid = $1::int AND granted "
                                     "AND classid = $2::bigint::oid AND objid = $3::bigint::oid AND objsubid = 2",
                                     {std::to_string(holder.pid()), std::to_string(tag.classid), std::to_string(tag.objid)}),
                         1LL);
                // The operator's query for the pair finds the holder.
                const auto rows = obs.query(pglock::pg_locks_sql_pair(k.key1(), k.key2()));
                QCOMPARE(PQntuples(rows.get()), 1);
                QCOMPARE(std::string(PQgetvalue(rows.get(), 0, 0)), std::to_string(holder.pid()));
                QVERIFY(holder.boolean("SELECT pg_advisory_unlock($1::int4, $2::int4)",
                                       {std::to_string(k.key1()), std::to_string(k.key2())}));
            }
        });
    }
};

QTEST_GUILESS_MAIN(TestKeySchemesSql)
#include "test_key_schemes_sql.moc"
