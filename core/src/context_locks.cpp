#include "pglock/context_locks.hpp"

#include <set>

#include "pglock/key_schemes.hpp"

namespace pglock::monitor {

namespace {

// pg-boss's fixed lock keys (src/plans.ts): "" for schema creation and migrations, the rest for
// queue maintenance. Per-queue keys carry a job table's name and are not guessed here.
constexpr std::string_view kPgBossKeys[] = {"", "create-queue", "delete-queue", "queue-stats", "queue-stats-insert"};

constexpr std::string_view kGolangMigrateTable = "schema_migrations";

}  // namespace

// pg_catalog's names only (see poll_query() in monitor.cpp). The schema filter is spelled without
// a backslash: with standard_conforming_strings off, which a database owner may set, 'pg\_%' would
// lose it.
std::string_view database_facts_sql() noexcept {
    return "SELECT pg_catalog.current_database()::pg_catalog.text, n.nspname::pg_catalog.text, NULL::pg_catalog.text"
           " FROM pg_catalog.pg_namespace n"
           " WHERE pg_catalog.left(n.nspname::pg_catalog.text, 3) OPERATOR(pg_catalog.<>) 'pg_'"
           " AND n.nspname OPERATOR(pg_catalog.<>) 'information_schema'"
           " UNION ALL "
           "SELECT pg_catalog.current_database()::pg_catalog.text, n.nspname::pg_catalog.text, c.relname::pg_catalog.text"
           " FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid OPERATOR(pg_catalog.=) c.relnamespace"
           " WHERE c.relkind OPERATOR(pg_catalog.=) ANY ('{r,p}'::pg_catalog.\"char\"[])"
           " AND pg_catalog.strpos(c.relname::pg_catalog.text, 'migrations') OPERATOR(pg_catalog.>) 0"
           " AND pg_catalog.left(n.nspname::pg_catalog.text, 3) OPERATOR(pg_catalog.<>) 'pg_'"
           " AND n.nspname OPERATOR(pg_catalog.<>) 'information_schema'";
}

DatabaseFacts read_database_facts(Session& session, const Context& ctx) {
    DatabaseFacts facts;
    Result r = session.exec(database_facts_sql(), {}, ctx);
    for (int row = 0; row < r.rows(); ++row) {
        facts.database = r.get(row, 0);
        if (r.is_null(row, 2)) facts.schemas.emplace_back(r.get(row, 1));
        else facts.migration_tables.emplace_back(r.get(row, 1), r.get(row, 2));
    }
    if (r.rows() == 0) facts.database = session.exec("SELECT pg_catalog.current_database()::pg_catalog.text", {}, ctx).get(0, 0);
    return facts;
}

void ContextLocks::add(std::int64_t key, std::string scheme, std::string label) {
    // The first label wins: a second scheme giving the same key is a CRC-32 coincidence.
    by_key_.try_emplace(key, ContextLock{std::move(scheme), std::move(label)});
}

ContextLocks::ContextLocks(const DatabaseFacts& facts) : database_(facts.database) {
    const auto key_of_scheme = [](std::string_view id, std::optional<std::string_view> name, const SchemeContext& c) {
        try {
            return std::optional<std::int64_t>(scheme_key(id, name, c).packed);
        } catch (const KeySchemeError&) {
            return std::optional<std::int64_t>();  // input the library itself would read otherwise
        }
    };
    const std::string& db = facts.database;
    SchemeContext database_only;
    database_only.database = db;
    if (auto k = key_of_scheme("rails-migration", std::nullopt, database_only))
        add(*k, "rails-migration", "Rails migration lock for database " + db);
    if (auto k = key_of_scheme("sqlx-migrate", std::nullopt, database_only))
        add(*k, "sqlx-migrate", "sqlx migration lock for database " + db);

    // golang-migrate: every schema with the default table, and every migrations-like table where
    // it is; the database as current_database() gives it and as a URL's path gives it ("/app").
    std::set<std::pair<std::string, std::string>> tables;
    for (const auto& schema : facts.schemas) tables.emplace(schema, kGolangMigrateTable);
    for (const auto& t : facts.migration_tables) tables.insert(t);
    for (const auto& [schema, table] : tables) {
        for (const bool url_form : {false, true}) {
            SchemeContext c;
            c.database = url_form ? "/" + db : db;
            c.schema = schema;
            c.table = table;
            const auto k = key_of_scheme("golang-migrate", std::nullopt, c);
            if (!k) continue;
            std::string label = "golang-migrate lock for database " + *c.database + ", schema " + schema;
            if (table != kGolangMigrateTable) label += ", table " + table;
            add(*k, "golang-migrate", std::move(label));
        }
    }

    // pg-boss: its fixed keys in every schema (the schema pg-boss was given is one of them).
    for (const auto& schema : facts.schemas) {
        for (const std::string_view key : kPgBossKeys) {
            SchemeContext c;
            c.database = db;
            c.schema = schema;
            const auto k = key_of_scheme("pg-boss", key, c);
            if (!k) continue;
            add(*k, "pg-boss",
                key.empty() ? "pg-boss schema lock for schema " + schema
                            : "pg-boss " + std::string(key) + " lock for schema " + schema);
        }
    }
}

const ContextLock* ContextLocks::find(std::int64_t key) const {
    const auto it = by_key_.find(key);
    return it == by_key_.end() ? nullptr : &it->second;
}

std::shared_ptr<const ContextLocks> ContextLockCache::get(Session& session, const Context& ctx) {
    const auto now = std::chrono::steady_clock::now();
    if (!read_at_ || now - *read_at_ >= max_age_) {
        locks_ = std::make_shared<const ContextLocks>(read_database_facts(session, ctx));
        read_at_ = now;
    }
    return locks_;
}

}  // namespace pglock::monitor
