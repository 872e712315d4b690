// Locks that other libraries derive from where they run, not from a name: Rails' and
// golang-migrate's (and sqlx's) migration locks hash the database name (and schema), pg-boss's
// maintenance locks hash the database, its schema and a fixed key. The monitor knows the
// database and can list its schemas, so it names these keys with no catalog at all
// ("golang-migrate lock for database app, schema public"). Qt-free; used by lockscope's naming
// rule and by `pglock status`.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "pglock/context.hpp"
#include "pglock/session.hpp"

namespace pglock::monitor {

// What the schemes read from the server: the database name, its schemas (pg_catalog, pg_toast
// and information_schema left out) and the tables whose name says "migrations" (golang-migrate's
// x-migrations-table may be any of them).
struct DatabaseFacts {
    std::string database;
    std::vector<std::string> schemas;
    std::vector<std::pair<std::string, std::string>> migration_tables;  // (schema, table)
};

// One statement, two columns per row: database and schema; a third, the table, is NULL for the
// rows that list a schema.
std::string_view database_facts_sql() noexcept;
DatabaseFacts read_database_facts(Session& session, const Context& ctx = {});

// A key some library derives from the facts, with what it is.
struct ContextLock {
    std::string scheme;  // the key-scheme id (pglock/key_schemes.hpp): "golang-migrate", ...
    std::string label;   // "golang-migrate lock for database app, schema public"
    friend bool operator==(const ContextLock&, const ContextLock&) = default;
};

// Every context-derived bigint key of one database. A few per schema: cheap to build, and built
// only when the facts are read again, not per poll.
class ContextLocks {
public:
    ContextLocks() = default;
    explicit ContextLocks(const DatabaseFacts& facts);
    const ContextLock* find(std::int64_t key) const;
    const std::string& database() const noexcept { return database_; }
    std::size_t size() const noexcept { return by_key_.size(); }
    // Same keys with the same labels: a re-read that found nothing new renames nothing.
    friend bool operator==(const ContextLocks& a, const ContextLocks& b) { return a.by_key_ == b.by_key_; }

private:
    void add(std::int64_t key, std::string scheme, std::string label);
    std::string database_;
    std::unordered_map<std::int64_t, ContextLock> by_key_;
};

// The facts of the database a monitoring session is connected to, read again once they are
// older than `max_age` (schemas come and go rarely; listing them every poll would double the
// poll's statements). invalidate() after a reconnect: it may be another server.
class ContextLockCache {
public:
    explicit ContextLockCache(std::chrono::steady_clock::duration max_age = std::chrono::seconds(60)) : max_age_(max_age) {}
    std::shared_ptr<const ContextLocks> get(Session& session, const Context& ctx = {});
    void invalidate() noexcept { read_at_.reset(); }

private:
    std::chrono::steady_clock::duration max_age_;
    std::optional<std::chrono::steady_clock::time_point> read_at_;
    std::shared_ptr<const ContextLocks> locks_ = std::make_shared<const ContextLocks>();
};

}  // namespace pglock::monitor
