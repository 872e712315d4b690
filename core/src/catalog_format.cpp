#include "pglock/catalog_format.hpp"

#include <algorithm>
#include <cctype>
#include <cstdio>

namespace pglock::catalog_format {
namespace {

// SQLite keeps the CREATE text as written, minus "IF NOT EXISTS"; other writers (the CLI's tests,
// a hand-made catalog) may space it differently. Compare without blanks and case.
std::string canonical(std::string_view sql) {
    std::string out;
    constexpr std::string_view ine = "IFNOTEXISTS";
    for (const char c : sql) {
        if (!std::isspace(static_cast<unsigned char>(c))) out += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    }
    if (const auto at = out.find(ine); at != std::string::npos) out.erase(at, ine.size());
    return out;
}

bool exact_schema(const std::vector<SchemaObject>& schema, std::string* why) {
    bool table = false;
    for (const SchemaObject& o : schema) {
        if (o.type == "table" && o.name == "names" && canonical(o.sql) == canonical(create_table)) {
            table = true;
        } else if (o.type == "index" && o.name == "names_key" && canonical(o.sql) == canonical(create_index)) {
        } else if (o.type == "index" && o.name == "sqlite_autoindex_names_1" && o.sql.empty()) {
        } else {
            *why = o.type + " \"" + o.name + "\" is not part of a lockscope catalog";
            return false;
        }
    }
    if (!table) *why = "it has no names table of a lockscope catalog";
    return table;
}

std::string hex(std::int32_t v) {
    char buf[16];
    std::snprintf(buf, sizeof buf, "0x%08x", static_cast<unsigned>(v));
    return buf;
}

}  // namespace

std::string describe_sqlite_failure(int code, std::string_view message, bool hot_journal) {
    const std::string said = "(" + std::string(message) + ")";
    const std::string journal =
        hot_journal ? "; it has a hot journal (FILE-journal: a write was interrupted) that SQLite must roll back first" : "";
    switch (code & 0xff) {
    case 5:  // SQLITE_BUSY
    case 6:  // SQLITE_LOCKED
        return "busy: another program is writing to it " + said + journal + "; try again when it is done";
    case 8:  // SQLITE_READONLY
        if (hot_journal)
            return "cannot be read now " + said + journal + ", which needs write access to the file and its directory";
        return "cannot be written " + said;
    case 26:  // SQLITE_NOTADB
        return "not an SQLite database " + said;
    case 11:  // SQLITE_CORRUPT
        return "damaged " + said;
    default: return std::string(message) + journal;
    }
}

Recognition recognize_catalog(bool new_file, std::int32_t app_id, const std::vector<SchemaObject>& schema) {
    if (app_id != 0 && app_id != application_id)
        return {Verdict::foreign, "its application_id " + hex(app_id) + " belongs to another program"};
    if (schema.empty()) {
        if (new_file || app_id == application_id) return {Verdict::create, {}};
        return {Verdict::foreign, "an existing SQLite database without tables, not marked as a lockscope catalog "
                                  "(application_id 0)"};
    }
    std::string why;
    if (!exact_schema(schema, &why)) return {Verdict::foreign, why};
    return {Verdict::catalog, {}};
}

}  // namespace pglock::catalog_format
