// Names that share a key within one library's scheme or across schemes: the collision audit of a
// catalog. Two entries collide when they lock the same key in the same key space (a bigint and an
// int4 pair never collide), so two libraries' locks that happen to coincide block each other.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "pglock/key_schemes.hpp"

namespace pglock {

struct SchemeEntry {
    std::string_view scheme;          // a KeySchemeInfo id
    std::optional<std::string> name;  // nullopt: a scheme's context-derived lock (a migration lock)
    friend bool operator==(const SchemeEntry&, const SchemeEntry&) = default;
};

struct SchemeCollision {
    SchemeKey key;
    std::vector<SchemeEntry> entries;  // two or more, in the order of `schemes`, then of `names`
};

struct SchemeAudit {
    std::vector<SchemeCollision> collisions;  // ordered by key space, then key
    // Entries a scheme refused (KeySchemeError::unsupported), one line each: "pg-boss "a\b": ...".
    std::vector<std::string> refused;
};

// Every name under every scheme of `schemes` (a NameUse::none scheme contributes its one
// context-derived lock instead). Schemes whose required context is missing must not be passed.
// The same name listed twice is one entry.
SchemeAudit audit_key_schemes(std::span<const std::string> names, std::span<const KeySchemeInfo* const> schemes,
                              const SchemeContext& context);

// Pairs of names expected to share a key by chance among `names` 32-bit keys: n(n-1)/2 / 2^32.
double expected_32bit_collisions(std::size_t names) noexcept;

}  // namespace pglock
