#include "pglock/key_schemes.hpp"

#include <charconv>

#include "digests.hpp"

namespace pglock {
namespace {

using digests::big_endian;
using digests::crc32_ieee;
using digests::little_endian;
using F = ContextField;

SchemeKey bigint(std::int64_t key) { return {KeyForm::bigint, key}; }

// A required field; scheme_key() has checked it is there.
const std::string& need(const std::optional<std::string>& field) { return *field; }

SchemeKey pglock_v1(std::string_view name, const SchemeContext&) { return bigint(key_of(name)); }

// golang-migrate database/util.go (every release since v4.1.0): the additional names first, the
// database last, joined with NUL: crc32.ChecksumIEEE(schema \0 table \0 database), times the salt
// in uint32 arithmetic (it wraps), passed to pg_advisory_lock as a decimal string: 0 .. 2^32-1.
SchemeKey golang_migrate(std::string_view, const SchemeContext& c) {
    std::string input = need(c.schema);
    input.push_back('\0');
    input += c.table.value_or("schema_migrations");
    input.push_back('\0');
    input += need(c.database);
    const std::uint32_t id = crc32_ieee(input) * 1486364155u;
    return bigint(static_cast<std::int64_t>(id));
}

// Rails activerecord migration.rb: MIGRATOR_SALT * Zlib.crc32(current_database), a Ruby Integer
// (no wrap: at most 2053462845 * (2^32-1) < 2^63).
SchemeKey rails_migration(std::string_view, const SchemeContext& c) {
    return bigint(2053462845LL * static_cast<std::int64_t>(crc32_ieee(need(c.database))));
}

// sqlx-postgres migrate.rs generate_lock_id: 0x3d32ad9e * (crc32 as i64), no wrap either.
SchemeKey sqlx_migrate(std::string_view, const SchemeContext& c) {
    return bigint(0x3d32ad9eLL * static_cast<std::int64_t>(crc32_ieee(need(c.database))));
}

// with_advisory_lock: pg_try_advisory_lock(crc32(name) & 0x7fffffff, prefix.to_i & 0x7fffffff),
// the prefix being ENV["WITH_ADVISORY_LOCK_PREFIX"] (unset: nil.to_i = 0).
SchemeKey with_advisory_lock(std::string_view name, const SchemeContext& c) {
    std::int64_t prefix = 0;
    if (c.prefix) {
        const std::string& text = *c.prefix;
        const char* first = text.data() + (!text.empty() && text[0] == '+' ? 1 : 0);
        const auto [end, ec] = std::from_chars(first, text.data() + text.size(), prefix);
        if (ec != std::errc() || end != text.data() + text.size() || first == text.data() + text.size())
            throw KeySchemeError(KeySchemeError::Kind::unsupported,
                                 "with_advisory_lock: --prefix must be the integer WITH_ADVISORY_LOCK_PREFIX holds, not \"" +
                                     text + "\"");
    }
    return SchemeKey::pair(static_cast<std::int32_t>(crc32_ieee(name) & 0x7fffffffu),
                           static_cast<std::int32_t>(prefix & 0x7fffffff));
}

// django-pglocks 1.x: crc32(name.encode("utf-8")) as a signed int32, passed as pg_advisory_lock's
// one (bigint) argument, so negative values are sign-extended.
SchemeKey django_pglocks(std::string_view name, const SchemeContext&) {
    return bigint(static_cast<std::int32_t>(crc32_ieee(name)));
}

bool is_hex8(std::string_view s) {
    if (s.size() != 8) return false;
    for (const char ch : s) {
        const bool hex = (ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'f') || (ch >= 'A' && ch <= 'F');
        if (!hex) return false;
    }
    return true;
}

std::uint32_t hex8(std::string_view s) {
    std::uint32_t v = 0;
    std::from_chars(s.data(), s.data() + s.size(), v, 16);
    return v;
}

// DistributedLock.Postgres PostgresAdvisoryLockKey(name, allowHashing: true):
// 1. at most 9 ASCII characters: 7 bits each, a 0 bit, then 1 bits to 64; used as the int pair;
// 2. 16 hex digits: the bigint they spell; "XXXXXXXX,XXXXXXXX": the int pair they spell;
// 3. else SHA-1 of the UTF-8 bytes, the first 8 bytes read little-endian, as the bigint.
SchemeKey distributedlock_net(std::string_view name, const SchemeContext&) {
    constexpr std::size_t max_ascii = 9;
    bool ascii = name.size() <= max_ascii;
    for (const char ch : name) ascii = ascii && static_cast<unsigned char>(ch) < 0x80;
    if (ascii) {
        std::uint64_t bits = 0;
        for (const char ch : name) bits = (bits << 7) | static_cast<unsigned char>(ch);
        bits <<= 1;
        for (std::size_t i = name.size(); i < max_ascii; ++i) bits = (bits << 7) | 0x7fu;
        return {KeyForm::int_pair, static_cast<std::int64_t>(bits)};
    }
    if (name.size() == 16 && is_hex8(name.substr(0, 8)) && is_hex8(name.substr(8)))
        return bigint(static_cast<std::int64_t>((std::uint64_t{hex8(name.substr(0, 8))} << 32) | hex8(name.substr(8))));
    if (name.size() == 17 && name[8] == ',' && is_hex8(name.substr(0, 8)) && is_hex8(name.substr(9)))
        return SchemeKey::pair(static_cast<std::int32_t>(hex8(name.substr(0, 8))), static_cast<std::int32_t>(hex8(name.substr(9))));
    return bigint(little_endian(digests::sha1_prefix(name)));
}

// PALs core.py Locker._lock_num: sha1(f"{app_name}.{name}") (just the name when app_name is
// None), struct.unpack('q', digest[:8]): native byte order, little-endian where it runs.
SchemeKey pals(std::string_view name, const SchemeContext& c) {
    std::string input;
    if (c.app) input = *c.app + ".";
    input += name;
    return bigint(little_endian(digests::sha1_prefix(input)));
}

// pg-boss plans.ts advisoryLock(): ('x' || encode(sha224((current_database() || '.pgboss.' ||
// schema || key)::bytea), 'hex'))::bit(64)::bigint: the first 8 bytes, big-endian, signed.
SchemeKey pg_boss(std::string_view name, const SchemeContext& c) {
    const std::string input = need(c.database) + ".pgboss." + c.schema.value_or("pgboss") + std::string(name);
    // text::bytea reads a backslash as the start of an escape, so the library hashes other bytes
    // than these; rather than guess them, say so.
    if (input.find('\\') != std::string::npos)
        throw KeySchemeError(KeySchemeError::Kind::unsupported,
                             "pg-boss: a backslash in the database, schema or key is read as a bytea escape by the "
                             "library; not computed here");
    return bigint(big_endian(digests::sha224_prefix(input)));
}

// GoodJob advisory_lockable.rb (hash_function "md5", the default): the key string is
// "#{table_name}-#{id}", ('x' || substr(md5(key), 1, 16))::bit(64)::bigint.
SchemeKey good_job(std::string_view name, const SchemeContext& c) {
    return bigint(big_endian(digests::md5_prefix(need(c.table) + "-" + std::string(name))));
}

// sqlx-postgres advisory_lock.rs PgAdvisoryLock::new: HKDF-SHA256, no salt, info
// "SQLx (Rust) Postgres advisory lock", 8 bytes, i64::from_le_bytes.
SchemeKey sqlx(std::string_view name, const SchemeContext&) {
    return bigint(little_endian(digests::hkdf_sha256_8(name, "SQLx (Rust) Postgres advisory lock")));
}

const std::vector<KeySchemeInfo>& registry() {
    static const std::vector<KeySchemeInfo> schemes{
        {"pglock-v1", "this library and the Go package: SHA-256 of the name, first 8 bytes big-endian", "the lock name",
         NameUse::required, false, {}, {}, pglock_v1},
        {"golang-migrate", "golang-migrate's migration lock: CRC-32 of schema, table and database joined with NUL, times 1486364155 (uint32)",
         "(none: the lock comes from the context)", NameUse::none, true, {F::database, F::schema}, {F::table}, golang_migrate},
        {"rails-migration", "Ruby on Rails' migration lock: 2053462845 times the CRC-32 of the database name",
         "(none: the lock comes from the context)", NameUse::none, true, {F::database}, {}, rails_migration},
        {"sqlx-migrate", "sqlx's migration lock: 0x3d32ad9e times the CRC-32 of the database name",
         "(none: the lock comes from the context)", NameUse::none, true, {F::database}, {}, sqlx_migrate},
        {"with_advisory_lock", "Ruby with_advisory_lock: the pair (CRC-32 of the name, prefix), each & 0x7fffffff",
         "the lock name", NameUse::required, true, {}, {F::prefix}, with_advisory_lock},
        {"django-pglocks", "django-pglocks 1.x: CRC-32 of the name as a signed int32 (2.x uses pglock-v1's SHA-256 form)",
         "the lock name", NameUse::required, true, {}, {}, django_pglocks},
        {"distributedlock-net", "DistributedLock for .NET: packed ASCII up to 9 characters, hex forms, else SHA-1 little-endian",
         "the lock name", NameUse::required, false, {}, {}, distributedlock_net},
        {"pals", "PALs (Python): SHA-1 of app + '.' + name, first 8 bytes little-endian", "the lock name",
         NameUse::required, false, {}, {F::app}, pals},
        {"pg-boss", "pg-boss: SHA-224 of database + '.pgboss.' + schema + key, first 8 bytes big-endian",
         "the lock key (absent: the schema and migration lock)", NameUse::optional, false, {F::database}, {F::schema}, pg_boss},
        {"good_job", "GoodJob: MD5 of table + '-' + id, first 8 bytes big-endian", "the record id (or other key column value)",
         NameUse::required, false, {F::table}, {}, good_job},
        {"sqlx", "sqlx PgAdvisoryLock::new: HKDF-SHA256 of the name, 8 bytes little-endian", "the lock name",
         NameUse::required, false, {}, {}, sqlx},
    };
    return schemes;
}

const std::optional<std::string>& field_of(const SchemeContext& c, ContextField f) noexcept {
    switch (f) {
        case F::database: return c.database;
        case F::schema: return c.schema;
        case F::table: return c.table;
        case F::app: return c.app;
        case F::prefix: break;
    }
    return c.prefix;
}

}  // namespace

std::string_view field_name(ContextField field) noexcept {
    switch (field) {
        case F::database: return "database";
        case F::schema: return "schema";
        case F::table: return "table";
        case F::app: return "app";
        case F::prefix: break;
    }
    return "prefix";
}

std::span<const KeySchemeInfo> key_schemes() noexcept { return registry(); }

const KeySchemeInfo* find_key_scheme(std::string_view id) noexcept {
    for (const auto& s : registry())
        if (s.id == id) return &s;
    return nullptr;
}

std::string key_scheme_ids() {
    std::string ids;
    for (const auto& s : registry()) {
        if (!ids.empty()) ids += ", ";
        ids += s.id;
    }
    return ids;
}

std::optional<ContextField> missing_field(const KeySchemeInfo& scheme, const SchemeContext& context) noexcept {
    for (const ContextField f : scheme.required)
        if (!field_of(context, f)) return f;
    return std::nullopt;
}

SchemeKey scheme_key(const KeySchemeInfo& scheme, std::optional<std::string_view> name, const SchemeContext& context) {
    if (const auto f = missing_field(scheme, context))
        throw KeySchemeError(KeySchemeError::Kind::missing_context,
                             std::string(scheme.id) + " needs the " + std::string(field_name(*f)) + " (--" +
                                 std::string(field_name(*f)) + ")");
    if (scheme.name_use == NameUse::required && !name)
        throw KeySchemeError(KeySchemeError::Kind::missing_name, std::string(scheme.id) + " needs a name: " +
                                                                     std::string(scheme.name_means));
    return scheme.derive(name.value_or(std::string_view{}), context);
}

SchemeKey scheme_key(std::string_view scheme_id, std::optional<std::string_view> name, const SchemeContext& context) {
    const KeySchemeInfo* scheme = find_key_scheme(scheme_id);
    if (!scheme)
        throw KeySchemeError(KeySchemeError::Kind::unknown_scheme,
                             "unknown key scheme \"" + std::string(scheme_id) + "\"; known: " + key_scheme_ids());
    return scheme_key(*scheme, name, context);
}

std::string_view v1_key_sql() noexcept {
    return "('x' || substr(encode(sha256(convert_to($1::text, 'UTF8')), 'hex'), 1, 16))::bit(64)::bigint";
}

std::string_view v1_key_sql_bytea() noexcept {
    return "('x' || substr(encode(sha256($1::bytea), 'hex'), 1, 16))::bit(64)::bigint";
}

}  // namespace pglock
