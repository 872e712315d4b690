// The CLI side of other libraries' key schemes (`pglock key --scheme`, `--all-schemes`, `pglock
// catalog audit`): the context options, and a name's key as TSV, JSON or a table. The keys come
// from core (pglock/key_schemes.hpp); this is only options and text.
#pragma once

#include <CLI/CLI.hpp>

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "pglock/key_schemes.hpp"

namespace pglock::cli {

// --database, --schema, --table, --app and --prefix on `cmd`, filling `context`; the returned
// options tell which were given (for "--x goes with --scheme" and "S does not use --x").
using ContextOptions = std::vector<std::pair<ContextField, CLI::Option*>>;
ContextOptions add_context_options(CLI::App* cmd, SchemeContext& context);
std::vector<std::pair<ContextField, bool>> given_fields(const ContextOptions& options);

// NAME<TAB>KEY<TAB>CLASSID<TAB>OBJID<TAB>OBJSUBID, KEY being "key1,key2" for a pair; NAME is
// empty for a scheme that takes none.
std::string scheme_tsv_line(std::optional<std::string_view> name, const SchemeKey& key);

// {"name", ["name_hex",] "scheme", "form", "key", "classid", "objid", "objsubid", ["pair",] "bits32"}
// in status --json's spelling ("bigint" / "int_pair", "key" null for a pair).
std::string scheme_json_object(std::optional<std::string_view> name, const KeySchemeInfo& scheme, const SchemeKey& key);
// The same for a scheme the context was not enough for: "key" null and "needs": "database".
std::string scheme_json_missing(std::string_view name, const KeySchemeInfo& scheme, ContextField needs);

// The --all-schemes table of one name: SCHEME, KEY, INT4 PAIR, 32-BIT and a note.
std::string all_schemes_table(std::string_view name, const SchemeContext& context);
std::string all_schemes_json(std::string_view name, const SchemeContext& context);  // comma-joined objects

}  // namespace pglock::cli
