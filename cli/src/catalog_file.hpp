// `--catalog FILE`: the lock names an operator knows, so that keys seen in pg_locks get a name.
// FILE is a text file (one name per line) or the lockscope app's SQLite catalog.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "pglock/key_collision.hpp"
#include "pglock/name_list.hpp"

namespace pglock::cli {

class Catalog {
public:
    Catalog() = default;
    explicit Catalog(std::vector<std::string> names);
    // With the keys given rather than derived: how tests make two names share a key, which
    // SHA-256 will not do for them.
    explicit Catalog(std::vector<NamedKey> entries);

    // The names in the order the file gives them (duplicates dropped).
    const std::vector<std::string>& names() const noexcept { return names_; }
    // The name whose key is `key`, or nullptr. Keys are always derived with pglock::key_of,
    // never taken from the file.
    const std::string* find(std::int64_t key) const;
    std::size_t size() const noexcept { return names_.size(); }
    // Keys that more than one of the names map to (find() then gives the first of them).
    const std::vector<KeyCollision>& collisions() const noexcept { return collisions_; }
    // Lines of a text catalog that give no name (pglock/name_list.hpp), each with its reason.
    const std::vector<SkippedLine>& skipped() const noexcept { return skipped_; }
    void set_skipped(std::vector<SkippedLine> skipped) { skipped_ = std::move(skipped); }

private:
    std::vector<std::string> names_;
    std::map<std::int64_t, std::size_t> by_key_;  // key -> index into names_ (first name wins)
    std::vector<KeyCollision> collisions_;
    std::vector<SkippedLine> skipped_;
};

// What an operator should know about a catalog, for stderr: one line per skipped line
// (`pglock: warning: catalog FILE: line 3: unknown escape \q; ...; skipped`), then one per key
// collision (`pglock: warning: catalog FILE: key K is shared by "a" and "b": they take the same
// lock`).
std::vector<std::string> catalog_warnings(const Catalog& catalog, const std::string& path);

// Reads FILE: a SQLite database (detected by its 16-byte header "SQLite format 3\0") is read
// read-only with `SELECT name FROM names` when pglock::catalog_format::recognize_catalog() (the
// lockscope app's own rule) says it is a catalog; anything else is a name list in the format
// lockscope exports and imports (pglock/name_list.hpp): lines it cannot read are skipped and
// listed in skipped(). Throws std::runtime_error with a one-line message naming FILE when it is
// missing, unreadable, larger than pglock::max_name_list_bytes, binary (a NUL byte, as the app
// refuses it), another program's SQLite database, or busy / mid-rollback (said as such).
Catalog load_catalog(const std::string& path);

// Parses the text form (exposed for tests). `origin` names the source in error messages.
Catalog parse_text_catalog(std::string_view text, const std::string& origin);

// The sample catalog that ships with pglock: the source tree's resources/sample-catalog.txt when
// it is still there, else <prefix>/share/pglock/sample-catalog.txt next to the installed binary,
// else the configured install path. Returns "" when none exists.
std::string default_catalog_path();

}  // namespace pglock::cli
