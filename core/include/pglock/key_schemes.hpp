// Other libraries' advisory keys: how each one turns a lock name (and, for some, the database,
// schema, table or application it runs in) into the key or the (int4, int4) pair it locks.
// A shared database holds the locks of many frameworks; an operator can name them only by
// recomputing their keys. Each scheme is a pure function, checked against the library's own
// source (docs/key-schemes.md cites the repository and file of each one).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "pglock/key.hpp"

namespace pglock {

struct SchemeKey {
    KeyForm form = KeyForm::bigint;
    // The bigint key, or for a pair (key1 << 32) | uint32(key2): then tag_of(packed) is still
    // how pg_locks shows it (classid = key1, objid = key2), only with objsubid = 2.
    std::int64_t packed = 0;

    std::int32_t key1() const noexcept { return static_cast<std::int32_t>(static_cast<std::uint64_t>(packed) >> 32); }
    std::int32_t key2() const noexcept { return static_cast<std::int32_t>(static_cast<std::uint64_t>(packed) & 0xffffffffu); }
    int objsubid() const noexcept { return form == KeyForm::bigint ? 1 : 2; }
    static SchemeKey pair(std::int32_t key1, std::int32_t key2) noexcept {
        return {KeyForm::int_pair, static_cast<std::int64_t>((static_cast<std::uint64_t>(static_cast<std::uint32_t>(key1)) << 32) |
                                                             static_cast<std::uint32_t>(key2))};
    }
    friend bool operator==(const SchemeKey&, const SchemeKey&) = default;
};

// What a scheme may read besides the name. Unset means "not given"; an empty string is a value.
struct SchemeContext {
    std::optional<std::string> database;  // the database name as the library sees it
    std::optional<std::string> schema;
    std::optional<std::string> table;
    std::optional<std::string> app;     // an application name the library prefixes (PALs)
    std::optional<std::string> prefix;  // an integer prefix (with_advisory_lock's environment variable)
};

enum class ContextField { database, schema, table, app, prefix };
std::string_view field_name(ContextField field) noexcept;  // "database", "schema", ...

// How a scheme uses the lock name.
enum class NameUse {
    required,  // the name is the input
    optional,  // absent means the library's empty key (pg-boss's schema lock)
    none,      // derived from the context alone (migration locks)
};

struct KeySchemeInfo {
    std::string_view id;           // stable, e.g. "golang-migrate"; never renamed
    std::string_view description;  // one line
    std::string_view name_means;   // what NAME is for this scheme, e.g. "the record id"
    NameUse name_use = NameUse::required;
    // At most 2^32 keys (a CRC-32): expect collisions from tens of thousands of names on.
    bool bits32 = false;
    std::vector<ContextField> required;  // must be given
    std::vector<ContextField> optional;  // the library's default applies when absent
    SchemeKey (*derive)(std::string_view name, const SchemeContext& context) = nullptr;
};

// Every scheme, "pglock-v1" first, in a stable order.
std::span<const KeySchemeInfo> key_schemes() noexcept;
const KeySchemeInfo* find_key_scheme(std::string_view id) noexcept;
std::string key_scheme_ids();  // "pglock-v1, golang-migrate, ..." for messages

class KeySchemeError : public std::invalid_argument {
public:
    enum class Kind {
        unknown_scheme,   // no scheme has that id
        missing_context,  // a required field was not given
        missing_name,     // the scheme needs a name and got none
        unsupported,      // input the library itself would read differently (documented per scheme)
    };
    KeySchemeError(Kind kind, std::string message) : std::invalid_argument(std::move(message)), kind_(kind) {}
    Kind kind() const noexcept { return kind_; }

private:
    Kind kind_;
};

// The key `scheme` gives `name` in `context`. `name` is ignored by NameUse::none schemes and
// nullopt stands for "no name given". Throws KeySchemeError.
SchemeKey scheme_key(const KeySchemeInfo& scheme, std::optional<std::string_view> name, const SchemeContext& context);
SchemeKey scheme_key(std::string_view scheme_id, std::optional<std::string_view> name, const SchemeContext& context);

// The first required field `context` lacks, if any.
std::optional<ContextField> missing_field(const KeySchemeInfo& scheme, const SchemeContext& context) noexcept;

// The SQL form of pglock-v1 for PostgreSQL without this library: $1 is the name as text (its
// UTF-8 bytes are hashed), or as bytea in the _bytea form for names that are not UTF-8.
std::string_view v1_key_sql() noexcept;
std::string_view v1_key_sql_bytea() noexcept;

}  // namespace pglock
