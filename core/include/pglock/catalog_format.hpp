// The lockscope name catalog on disk (an SQLite file): its schema, the application_id that marks
// it, and the one rule by which the lockscope app (which writes it) and the pglock CLI (which
// reads it) recognise a file as a catalog. Each reader collects the facts with its own SQLite
// binding and asks recognize_catalog(); neither writes into a file this rule refuses.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace pglock::catalog_format {

// PRAGMA application_id of every catalog lockscope creates: "PLKC" in ASCII. Catalogs made before
// it existed carry 0 and are recognised by their exact schema (and get the id when the app opens
// them).
inline constexpr std::int32_t application_id = 0x504c4b43;

// Kept verbatim: the catalog's documented schema (lockscope's catalog_store.hpp).
inline constexpr std::string_view create_table =
    "CREATE TABLE IF NOT EXISTS names (name BLOB PRIMARY KEY, key INTEGER NOT NULL, "
    "note TEXT NOT NULL DEFAULT '', owner TEXT NOT NULL DEFAULT '', added_at TEXT NOT NULL)";
inline constexpr std::string_view create_index = "CREATE INDEX IF NOT EXISTS names_key ON names(key)";

// The statements by which each side reads the facts recognize_catalog() judges: the file's
// application_id (one integer) and its schema (type, name, sql per row; see SchemaObject).
inline constexpr std::string_view read_application_id = "PRAGMA application_id";
inline constexpr std::string_view read_schema = "SELECT type, name, sql FROM sqlite_master";
// Marks a file as a catalog: "PRAGMA application_id = " followed by application_id.
inline constexpr std::string_view set_application_id = "PRAGMA application_id = ";
// Every name of a catalog, as the exact bytes (a BLOB; a TEXT row reads as its UTF-8).
inline constexpr std::string_view select_names = "SELECT name FROM names";

// One row of sqlite_master (type, name, sql; sql is empty for SQLite's automatic indexes).
struct SchemaObject {
    std::string type;
    std::string name;
    std::string sql;
};

enum class Verdict {
    catalog,  // a lockscope catalog: read it, write it
    create,   // nothing in it yet and nobody else's: a writer may create the catalog here
    foreign,  // another program's database: neither read as a catalog nor written
};

struct Recognition {
    Verdict verdict = Verdict::foreign;
    std::string why;  // for foreign: what makes it not a catalog, e.g. "application_id 0x1 is another program's"
};

// `new_file`: the file did not exist or had 0 bytes before it was opened. A file that held
// anything is a catalog only by its application_id plus schema, or (application_id 0) by its
// exact schema; an existing SQLite database without tables is still somebody else's file.
Recognition recognize_catalog(bool new_file, std::int32_t app_id, const std::vector<SchemaObject>& schema);

// What an SQLite failure while opening or reading a catalog means, for the operator: a busy file
// ("database is locked": another program is writing it) or an interrupted write that must be
// rolled back first (a hot journal) is a catalog that cannot be read right now, not "not a
// catalog". `code` is SQLite's result code (an extended one is reduced to its primary code),
// `message` SQLite's text, `hot_journal` whether FILE-journal exists.
std::string describe_sqlite_failure(int code, std::string_view message, bool hot_journal);

}  // namespace pglock::catalog_format
