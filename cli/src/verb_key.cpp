// pglock key NAME... : names to advisory keys, offline.
#include <iostream>
#include <string>
#include <vector>

#include "pglock/error.hpp"
#include "pglock/key.hpp"
#include "pglock_cli/exit_codes.hpp"
#include "pglock_cli/text.hpp"
#include "verbs.hpp"

namespace pglock::cli {

namespace {

struct KeyOptions {
    std::vector<std::string> names;
    bool json = false;
    bool sql = false;
};

// The names in order, with each "-" replaced by the lines of stdin. A line is its bytes without
// the final "\n", nothing else stripped (a CR stays, and shows as \r in the TSV output).
std::vector<std::string> collect_names(const std::vector<std::string>& args) {
    std::vector<std::string> names;
    bool stdin_read = false;
    for (const auto& arg : args) {
        if (arg != "-") {
            names.push_back(arg);
            continue;
        }
        if (stdin_read) continue;  // stdin can be read only once
        stdin_read = true;
        for (std::string line; std::getline(std::cin, line);) names.push_back(line);
    }
    for (std::size_t i = 0; i < names.size(); ++i) {
        if (names[i].empty())
            throw Error(Errc::empty_name, "lock name #" + std::to_string(i + 1) +
                                              " is empty; an empty name would collide with every other empty one");
    }
    return names;
}

void print_tsv(const std::string& name, std::int64_t key) {
    const LockTag tag = tag_of(key);
    std::cout << tsv_escape(name) << '\t' << key << '\t' << tag.classid << '\t' << tag.objid << '\n';
}

void print_json_object(const std::string& name, std::int64_t key) {
    const LockTag tag = tag_of(key);
    std::cout << "{\"name\":" << json_quote(name);
    if (!is_valid_utf8(name)) std::cout << ",\"name_hex\":\"" << hex_bytes(name) << '"';
    std::cout << ",\"key\":" << key << ",\"classid\":" << tag.classid << ",\"objid\":" << tag.objid
              << ",\"key_scheme\":" << key_scheme_version << '}';
}

int run_key(const KeyOptions& options) {
    const auto names = collect_names(options.names);
    if (options.json) {
        std::cout << "[";
        for (std::size_t i = 0; i < names.size(); ++i) {
            std::cout << (i ? ",\n " : "\n ");
            print_json_object(names[i], key_of(names[i]));
        }
        std::cout << "\n]\n";
    } else if (options.sql) {
        for (std::size_t i = 0; i < names.size(); ++i) {
            if (i) std::cout << '\n';
            std::cout << "-- name " << tsv_escape(names[i]) << '\n' << pg_locks_sql(key_of(names[i])) << '\n';
        }
    } else {
        for (const auto& name : names) print_tsv(name, key_of(name));
    }
    std::cout.flush();
    return std::cout ? exit_ok : exit_error;
}

}  // namespace

void register_key(CLI::App& app, VerbRun& run) {
    auto options = std::make_shared<KeyOptions>();
    auto* cmd = app.add_subcommand("key", "Print the advisory key of each name (needs no server).");
    cmd->add_option("names", options->names, "lock names; - reads more names from stdin, one per line")
        ->required();
    auto* json = cmd->add_flag("--json", options->json,
                               "a JSON array of {name, key, classid, objid, key_scheme}; key_scheme 1 is the Go package's SHA-256 "
                               "scheme; \"name_hex\" is added when a name is "
                               "not valid UTF-8 (its \"name\" then shows U+FFFD for the bad bytes)");
    auto* sql = cmd->add_flag("--sql", options->sql, "the pg_locks query that shows each key's holders and waiters");
    json->excludes(sql);
    cmd->footer("Default output: NAME<TAB>KEY<TAB>CLASSID<TAB>OBJID per line; NAME in PostgreSQL COPY text form\n"
                "(backslash, tab, CR and LF written as \\\\, \\t, \\r, \\n). Names starting with - go after --.");
    cmd->callback([options, &run] { run = [options] { return run_key(*options); }; });
}

}  // namespace pglock::cli
