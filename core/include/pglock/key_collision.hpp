// Two names, one key. With 64-bit keys from SHA-256 a true collision is not expected in practice,
// but when it happens two unrelated jobs silently share one lock (one of them blocks or skips
// for no visible reason). These helpers make it visible: a pure check over (name, key) pairs for
// catalogs, and an opt-in registry that refuses a second name for a key within one process.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace pglock {

struct NamedKey {
    std::string name;
    std::int64_t key = 0;
};

// A key that more than one distinct name maps to, with those names sorted (bytewise).
struct KeyCollision {
    std::int64_t key = 0;
    std::vector<std::string> names;
    friend bool operator==(const KeyCollision&, const KeyCollision&) = default;
};

// Every key that two or more distinct names share, ordered by key. The same name listed twice is
// not a collision. Pure: the keys are taken as given, so callers (and tests) decide where they
// come from.
std::vector<KeyCollision> find_key_collisions(std::span<const NamedKey> entries);

// One-line description, e.g. `key 42 is shared by "a" and "b": they take the same lock`.
std::string describe(const KeyCollision& collision);

// The names this process has used per key, for LockOptions::refuse_key_collision. Thread-safe.
// It remembers every name claimed for the life of the process (one entry per distinct name), so
// a collision between a lock used at 9:00 and another used at 17:00 is still caught.
class KeyRegistry {
public:
    // The registry that Locks built with refuse_key_collision use.
    static KeyRegistry& process();

    // Records that `name` uses `key`. Throws Error{key_collision} when another name claimed the
    // key before; claiming the same (name, key) again is fine.
    void claim(std::string_view name, std::int64_t key);
    // The name that claimed `key`, if any.
    std::optional<std::string> name_of(std::int64_t key) const;
    std::size_t size() const;

private:
    mutable std::mutex mutex_;
    std::map<std::int64_t, std::string> names_;
};

}  // namespace pglock
