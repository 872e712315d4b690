// Lock names to advisory keys, and keys to what pg_locks shows.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace pglock {

// How names become keys. Each scheme is frozen: changing the derivation would make two builds of
// one service take different locks for the same name, so a new derivation would be a new
// version, never an edit of an old one. Shown in `pglock key --json` ("key_scheme") and in the
// pglock_key_scheme_info metric so that mixed deployments can be told apart.
enum class KeyScheme {
    // The Go package's (gokit/db/lock): SHA-256 of the name's bytes, the first 8 bytes read
    // big-endian as a signed int64.
    v1 = 1,
};
inline constexpr KeyScheme key_scheme = KeyScheme::v1;            // the scheme key_of() implements
inline constexpr int key_scheme_version = static_cast<int>(key_scheme);
inline constexpr std::string_view key_scheme_name = "sha256-be64";  // a short label for v1

// The key of a name: the first 8 bytes of SHA-256(name) read big-endian, as a signed int64.
// Bit-identical to the Go package: int64(binary.BigEndian.Uint64(sha256(name)[:8])).
// Any byte string is a valid name, NUL bytes and invalid UTF-8 included.
std::int64_t key_of(std::string_view name) noexcept;

// The two key spaces of PostgreSQL's advisory locks; they never overlap. pg_locks shows both with
// classid and objid holding the two 32-bit halves, told apart by objsubid.
enum class KeyForm {
    bigint,    // objsubid = 1: a 64-bit key, as pg_advisory_lock(bigint) and this library take
    int_pair,  // objsubid = 2: pg_advisory_lock(int4, int4); not this library's key of a name
};

// How pg_locks shows a bigint advisory key: locktype='advisory', classid = high 32 bits,
// objid = low 32 bits, objsubid = 1. (objsubid = 2 is the two-int4 form; that is not ours.)
struct LockTag {
    std::uint32_t classid = 0;
    std::uint32_t objid = 0;
    friend bool operator==(const LockTag&, const LockTag&) = default;
};

constexpr LockTag tag_of(std::int64_t key) noexcept {
    const auto bits = static_cast<std::uint64_t>(key);
    return {static_cast<std::uint32_t>(bits >> 32), static_cast<std::uint32_t>(bits & 0xffffffffu)};
}

constexpr std::int64_t key_of(LockTag tag) noexcept {
    return static_cast<std::int64_t>((static_cast<std::uint64_t>(tag.classid) << 32) | tag.objid);
}

// The parameterized query an application should run to find the holders and waiters of a key:
// $1 = classid, $2 = objid (both as bigint, since oid is unsigned 32-bit).
// The Go package's documented `WHERE objid = $1` is wrong for bigint keys; this is the right one.
std::string_view pg_locks_query() noexcept;

// The same query with the key's classid and objid written in, ready for an operator to paste
// into psql. Only integers are interpolated, never text.
std::string pg_locks_sql(std::int64_t key);
// The same for a lock taken with pg_advisory_lock(key1, key2): objsubid = 2, classid = key1,
// objid = key2 (as pg_locks' unsigned oid).
std::string pg_locks_sql_pair(std::int32_t key1, std::int32_t key2);

}  // namespace pglock
