// Context-derived locks named with no catalog: a database of a fixed name, the migration locks of
// golang-migrate and Rails and pg-boss's schema lock taken with the SQL those libraries send, and
// the monitor naming them from the database name and its schemas alone. The expected keys were
// computed by Python's zlib (crc32), not by the code under test.
#include <QtTest>

#include <memory>
#include <string>

#include "core_test_util.hpp"
#include "pglock/context_locks.hpp"
#include "pglock/monitor.hpp"

using pgt::guarded;
using pgt::RawConn;
namespace mon = pglock::monitor;

namespace {

constexpr const char* kDb = "lockscope_ctx_app";
// python3: (zlib.crc32(b"billing\0schema_migrations\0lockscope_ctx_app") * 1486364155) & 0xffffffff
constexpr std::int64_t kGolangMigrateBilling = 1626149526;
// the same with the database as a migrate URL's path, "/lockscope_ctx_app"
constexpr std::int64_t kGolangMigrateBillingUrl = 3573208691;
// python3: 2053462845 * zlib.crc32(b"lockscope_ctx_app")
constexpr std::int64_t kRails = 6389231354543776620;

const mon::LockEntry* find(const mon::Snapshot& s, std::int64_t key) {
    for (const auto& e : s.locks)
        if (e.form == mon::KeyForm::bigint && e.key == key) return &e;
    return nullptr;
}

}  // namespace

class TestContextLocks : public QObject {
    Q_OBJECT

    std::string dsn_;
    std::string app_dsn_;  // the fixed-name database

private slots:
    void initTestCase() {
        PGT_REQUIRE_DSN(dsn_);
        guarded([&] {
            RawConn admin(dsn_);
            admin.query(std::string("DROP DATABASE IF EXISTS ") + kDb + " WITH (FORCE)");
            admin.query(std::string("CREATE DATABASE ") + kDb);
        });
        app_dsn_ = dsn_ + " dbname=" + kDb;
        guarded([&] {
            RawConn app(app_dsn_);
            app.query("CREATE SCHEMA billing");
            app.query("CREATE SCHEMA pgboss");
        });
    }
    void cleanupTestCase() {
        try {
            RawConn admin(dsn_);
            admin.query(std::string("DROP DATABASE IF EXISTS ") + kDb + " WITH (FORCE)");
        } catch (...) {
        }
    }

    void facts_list_the_database_and_its_schemas() {
        guarded([&] {
            auto s = pglock::Session::connect(app_dsn_);
            const mon::DatabaseFacts facts = mon::read_database_facts(s);
            QCOMPARE(facts.database, std::string(kDb));
            QVERIFY(std::find(facts.schemas.begin(), facts.schemas.end(), "billing") != facts.schemas.end());
            QVERIFY(std::find(facts.schemas.begin(), facts.schemas.end(), "public") != facts.schemas.end());
            for (const auto& schema : facts.schemas) QVERIFY2(!schema.starts_with("pg_"), schema.c_str());
        });
    }

    void migration_and_pg_boss_locks_are_named_on_sight() {
        guarded([&] {
            // golang-migrate (database/postgres/postgres.go Lock): the key as a decimal string.
            RawConn migrate(app_dsn_);
            migrate.query("SELECT pg_advisory_lock($1)", {std::to_string(kGolangMigrateBilling)});
            RawConn migrate_url(app_dsn_);
            migrate_url.query("SELECT pg_advisory_lock($1)", {std::to_string(kGolangMigrateBillingUrl)});
            // Rails (migration.rb with_advisory_lock): the key interpolated into the statement.
            RawConn rails(app_dsn_);
            QVERIFY(rails.boolean("SELECT pg_try_advisory_lock(" + std::to_string(kRails) + ")"));
            // pg-boss (plans.ts advisoryLock): a transaction lock computed in SQL on the server.
            RawConn boss(app_dsn_);
            boss.query("BEGIN");
            boss.query("SELECT pg_advisory_xact_lock(('x' || encode(sha224((current_database() || '.pgboss.' || 'pgboss' || '')::bytea), 'hex'))::bit(64)::bigint)");
            const std::int64_t boss_key = std::stoll(boss.scalar(
                "SELECT ('x' || encode(sha224((current_database() || '.pgboss.' || 'pgboss' || '')::bytea), 'hex'))::bit(64)::bigint"));

            auto s = pglock::Session::connect(app_dsn_);
            mon::ContextLockCache cache;
            const auto named = cache.get(s);
            const mon::Snapshot snap = mon::poll(s);
            for (const std::int64_t key : {kGolangMigrateBilling, kGolangMigrateBillingUrl, kRails, boss_key})
                QVERIFY2(find(snap, key) != nullptr, std::to_string(key).c_str());

            const mon::ContextLock* gm = named->find(kGolangMigrateBilling);
            QVERIFY(gm);
            QCOMPARE(gm->scheme, std::string("golang-migrate"));
            QCOMPARE(gm->label, std::string("golang-migrate lock for database lockscope_ctx_app, schema billing"));
            const mon::ContextLock* gm_url = named->find(kGolangMigrateBillingUrl);
            QVERIFY(gm_url);
            QCOMPARE(gm_url->label, std::string("golang-migrate lock for database /lockscope_ctx_app, schema billing"));
            const mon::ContextLock* r = named->find(kRails);
            QVERIFY(r);
            QCOMPARE(r->scheme, std::string("rails-migration"));
            QCOMPARE(r->label, std::string("Rails migration lock for database lockscope_ctx_app"));
            const mon::ContextLock* b = named->find(boss_key);
            QVERIFY(b);
            QCOMPARE(b->label, std::string("pg-boss schema lock for schema pgboss"));
            // A key no library derives here stays unnamed.
            QVERIFY(named->find(pglock::key_of("orders.daily-rollup")) == nullptr);
            boss.query("COMMIT");
        });
    }

    void cache_reads_again_only_when_old() {
        guarded([&] {
            auto s = pglock::Session::connect(app_dsn_);
            mon::ContextLockCache cache(std::chrono::hours(1));
            const auto first = cache.get(s);
            RawConn app(app_dsn_);
            app.query("CREATE SCHEMA IF NOT EXISTS later");
            QCOMPARE(cache.get(s).get(), first.get());  // not read again within max_age
            cache.invalidate();
            const auto again = cache.get(s);
            QVERIFY(again.get() != first.get());
            QVERIFY(again->size() > first->size());  // the new schema's golang-migrate and pg-boss keys
        });
    }
};

QTEST_GUILESS_MAIN(TestContextLocks)
#include "test_context_locks.moc"
