#include "catalog_file.hpp"

#include <sqlite3.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <stdexcept>
#include <system_error>
#include <unordered_set>

#include "pglock/catalog_format.hpp"
#include "pglock/key.hpp"
#include "pglock_cli/text.hpp"

namespace pglock::cli {

namespace {

constexpr std::string_view sqlite_header{"SQLite format 3\0", 16};

[[noreturn]] void fail(const std::string& path, const std::string& what) {
    throw std::runtime_error("catalog " + path + ": " + one_line(what));
}

std::string read_all(const std::string& path) {
    std::error_code ec;
    const auto status = std::filesystem::status(path, ec);
    if (std::filesystem::is_directory(status)) fail(path, "is a directory, not a catalog file");
    if (std::filesystem::is_character_file(status) || std::filesystem::is_block_file(status))
        fail(path, "is a device, not a catalog file");
    std::ifstream in(path, std::ios::binary);
    if (!in) fail(path, std::string("cannot open: ") + std::strerror(errno));
    // Bounded as the app bounds its import: a FIFO or a growing file cannot fill the memory.
    std::string data;
    char chunk[64 * 1024];
    while (in.read(chunk, sizeof chunk) || in.gcount() > 0) {
        data.append(chunk, static_cast<std::size_t>(in.gcount()));
        if (data.size() > max_name_list_bytes)
            fail(path, "more than the limit of " + std::to_string(max_name_list_bytes) + " bytes");
    }
    if (in.bad()) fail(path, "cannot read");
    return data;
}

struct SqliteClose {
    void operator()(sqlite3* db) const noexcept { sqlite3_close_v2(db); }
};
struct SqliteFinalize {
    void operator()(sqlite3_stmt* stmt) const noexcept { sqlite3_finalize(stmt); }
};

Catalog read_sqlite(const std::string& path) {
    sqlite3* raw = nullptr;
    const int rc = sqlite3_open_v2(path.c_str(), &raw, SQLITE_OPEN_READONLY, nullptr);
    std::unique_ptr<sqlite3, SqliteClose> db(raw);
    if (rc != SQLITE_OK)
        fail(path, std::string("cannot open the SQLite catalog: ") + (db ? sqlite3_errmsg(db.get()) : sqlite3_errstr(rc)));
    sqlite3_busy_timeout(db.get(), 2000);  // the lockscope app may be writing to it right now
    // Busy, or a hot journal this read-only handle cannot roll back: say so, not "not a catalog".
    const auto sqlite_failure = [&](int rc) {
        std::error_code ec;
        const bool hot_journal = std::filesystem::exists(path + "-journal", ec);
        fail(path, catalog_format::describe_sqlite_failure(rc, sqlite3_errmsg(db.get()), hot_journal));
    };
    const auto prepare = [&](std::string_view sql) {
        sqlite3_stmt* raw_stmt = nullptr;
        if (const int rc = sqlite3_prepare_v2(db.get(), sql.data(), static_cast<int>(sql.size()), &raw_stmt, nullptr);
            rc != SQLITE_OK)
            sqlite_failure(rc);
        return std::unique_ptr<sqlite3_stmt, SqliteFinalize>(raw_stmt);
    };

    // The same rule as the lockscope app's (catalog_format.hpp): its application_id and schema.
    std::int32_t app_id = 0;
    {
        auto pragma = prepare(catalog_format::read_application_id);
        const int step = sqlite3_step(pragma.get());
        if (step != SQLITE_ROW) sqlite_failure(step);
        app_id = static_cast<std::int32_t>(sqlite3_column_int64(pragma.get(), 0));
    }
    std::vector<catalog_format::SchemaObject> schema;
    {
        auto master = prepare(catalog_format::read_schema);
        const auto text = [&](int column) {
            const auto* t = reinterpret_cast<const char*>(sqlite3_column_text(master.get(), column));
            return t ? std::string(t) : std::string();
        };
        for (int step; (step = sqlite3_step(master.get())) != SQLITE_DONE;) {
            if (step != SQLITE_ROW) sqlite_failure(step);
            schema.push_back({text(0), text(1), text(2)});
        }
    }
    const catalog_format::Recognition seen = catalog_format::recognize_catalog(false, app_id, schema);
    if (seen.verdict == catalog_format::Verdict::foreign) fail(path, "not a lockscope catalog: " + seen.why);
    if (seen.verdict == catalog_format::Verdict::create) return Catalog(std::vector<std::string>{});  // marked, no table yet

    auto stmt = prepare(catalog_format::select_names);

    std::vector<std::string> names;
    for (;;) {
        const int step = sqlite3_step(stmt.get());
        if (step == SQLITE_DONE) break;
        if (step != SQLITE_ROW) sqlite_failure(step);
        if (sqlite3_column_type(stmt.get(), 0) == SQLITE_NULL) continue;
        // BLOB: the exact bytes of the name (TEXT rows come out as their UTF-8 bytes).
        const auto* bytes = static_cast<const char*>(sqlite3_column_blob(stmt.get(), 0));
        const int size = sqlite3_column_bytes(stmt.get(), 0);
        if (size <= 0 || !bytes) continue;  // an empty name is no lock's name
        names.emplace_back(bytes, static_cast<std::size_t>(size));
    }
    return Catalog(std::move(names));
}

}  // namespace

namespace {
std::vector<NamedKey> derive_keys(std::vector<std::string> names) {
    std::vector<NamedKey> entries;
    entries.reserve(names.size());
    for (auto& name : names) {
        const std::int64_t key = key_of(name);
        entries.push_back({std::move(name), key});
    }
    return entries;
}
}  // namespace

Catalog::Catalog(std::vector<std::string> names) : Catalog(derive_keys(std::move(names))) {}

Catalog::Catalog(std::vector<NamedKey> entries) {
    std::unordered_set<std::string> seen;
    std::vector<NamedKey> kept;
    for (auto& e : entries) {
        if (!seen.insert(e.name).second) continue;
        by_key_.try_emplace(e.key, names_.size());
        names_.push_back(e.name);
        kept.push_back(std::move(e));
    }
    collisions_ = find_key_collisions(kept);
}

std::vector<std::string> catalog_warnings(const Catalog& catalog, const std::string& path) {
    std::vector<std::string> lines;
    for (const SkippedLine& s : catalog.skipped())
        lines.push_back("pglock: warning: catalog " + path + ": " + display_line(describe(s)));
    for (const KeyCollision& c : catalog.collisions())
        lines.push_back("pglock: warning: catalog " + path + ": " + describe(c));
    return lines;
}

const std::string* Catalog::find(std::int64_t key) const {
    const auto it = by_key_.find(key);
    return it == by_key_.end() ? nullptr : &names_[it->second];
}

Catalog parse_text_catalog(std::string_view text, const std::string& origin) {
    // No text list has a NUL byte: the file is something else (a binary, a compressed file) and
    // reading names from it would be noise. The app refuses such an import the same way.
    if (const auto nul = text.find('\0'); nul != std::string_view::npos)
        fail(origin, "a binary file (NUL byte at offset " + std::to_string(nul) +
                         "): neither a text catalog (one name per line) nor a SQLite catalog");
    NameList list = parse_name_list(text);
    std::vector<std::string> names;
    names.reserve(list.names.size());
    for (ListedName& n : list.names) names.push_back(std::move(n.name));
    Catalog catalog(std::move(names));
    catalog.set_skipped(std::move(list.skipped));
    return catalog;
}

Catalog load_catalog(const std::string& path) {
    const std::string data = read_all(path);
    if (data.size() >= sqlite_header.size() && std::string_view(data).substr(0, sqlite_header.size()) == sqlite_header)
        return read_sqlite(path);
    return parse_text_catalog(data, path);
}

std::string default_catalog_path() {
    namespace fs = std::filesystem;
    std::vector<fs::path> candidates;
#ifdef PGLOCK_SOURCE_DIR
    candidates.emplace_back(fs::path(PGLOCK_SOURCE_DIR) / "resources" / "sample-catalog.txt");
#endif
    std::error_code ec;
    const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
    if (!ec) candidates.push_back(exe.parent_path().parent_path() / "share" / "pglock" / "sample-catalog.txt");
#ifdef PGLOCK_INSTALL_DATADIR
    candidates.emplace_back(fs::path(PGLOCK_INSTALL_DATADIR) / "sample-catalog.txt");
#endif
    for (const auto& p : candidates) {
        if (fs::is_regular_file(p, ec)) return p.string();
    }
    return {};
}

}  // namespace pglock::cli
