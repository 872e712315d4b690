// `pglock key --scheme` and `--all-schemes`: one name's key under other libraries' schemes, as
// TSV, JSON or a table. The keys come from core (pglock/key_schemes.hpp); this is only the text.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "pglock/key_schemes.hpp"

namespace pglock::cli {

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
