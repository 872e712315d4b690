#include "key_scheme_cli.hpp"

#include <cstdio>

#include "pglock_cli/text.hpp"

namespace pglock::cli {
namespace {

std::string key_text(const SchemeKey& key) {
    return key.form == KeyForm::bigint ? std::to_string(key.packed) : "-";
}

std::string pair_text(const SchemeKey& key) {
    return key.form == KeyForm::int_pair ? std::to_string(key.key1()) + "," + std::to_string(key.key2()) : "-";
}

std::string name_fields(std::optional<std::string_view> name) {
    if (!name) return "\"name\":null";
    std::string out = "\"name\":" + json_quote(*name);
    if (!is_valid_utf8(*name)) out += ",\"name_hex\":\"" + hex_bytes(*name) + '"';
    return out;
}

std::string padded(std::string text, std::size_t width) {
    if (text.size() < width) text.append(width - text.size(), ' ');
    return text;
}

}  // namespace

ContextOptions add_context_options(CLI::App* cmd, SchemeContext& c) {
    struct Field {
        ContextField field;
        std::optional<std::string>* value;
        const char* help;
    };
    const Field fields[] = {
        {ContextField::database, &c.database, "the database name, for schemes that read it (migration locks, pg-boss)"},
        {ContextField::schema, &c.schema, "the schema, for golang-migrate and pg-boss"},
        {ContextField::table, &c.table, "the table: golang-migrate's migrations table, GoodJob's table"},
        {ContextField::app, &c.app, "the application name PALs prefixes"},
        {ContextField::prefix, &c.prefix, "with_advisory_lock's integer WITH_ADVISORY_LOCK_PREFIX"},
    };
    ContextOptions options;
    for (const auto& f : fields) {
        auto* value = f.value;
        auto* opt = cmd->add_option_function<std::string>("--" + std::string(field_name(f.field)),
                                                          [value](const std::string& v) { *value = v; }, f.help);
        options.emplace_back(f.field, opt);
    }
    return options;
}

std::vector<std::pair<ContextField, bool>> given_fields(const ContextOptions& options) {
    std::vector<std::pair<ContextField, bool>> given;
    for (const auto& [field, opt] : options) given.emplace_back(field, opt->count() > 0);
    return given;
}

std::string scheme_tsv_line(std::optional<std::string_view> name, const SchemeKey& key) {
    const LockTag tag = tag_of(key.packed);
    const std::string shown = key.form == KeyForm::bigint ? std::to_string(key.packed) : pair_text(key);
    return (name ? tsv_escape(*name) : std::string()) + '\t' + shown + '\t' + std::to_string(tag.classid) + '\t' +
           std::to_string(tag.objid) + '\t' + std::to_string(key.objsubid()) + '\n';
}

std::string scheme_json_object(std::optional<std::string_view> name, const KeySchemeInfo& scheme, const SchemeKey& key) {
    const LockTag tag = tag_of(key.packed);
    const bool bigint = key.form == KeyForm::bigint;
    std::string out = "{" + name_fields(name) + ",\"scheme\":" + json_quote(scheme.id);
    out += bigint ? ",\"form\":\"bigint\"" : ",\"form\":\"int_pair\"";
    out += ",\"key\":" + (bigint ? std::to_string(key.packed) : std::string("null"));
    out += ",\"classid\":" + std::to_string(tag.classid) + ",\"objid\":" + std::to_string(tag.objid) +
           ",\"objsubid\":" + std::to_string(key.objsubid());
    if (!bigint) out += ",\"pair\":[" + std::to_string(key.key1()) + "," + std::to_string(key.key2()) + "]";
    out += std::string(",\"bits32\":") + (scheme.bits32 ? "true" : "false") + "}";
    return out;
}

std::string scheme_json_missing(std::string_view name, const KeySchemeInfo& scheme, ContextField needs) {
    return "{" + name_fields(name) + ",\"scheme\":" + json_quote(scheme.id) + ",\"key\":null,\"needs\":\"" +
           std::string(field_name(needs)) + "\",\"bits32\":" + (scheme.bits32 ? "true" : "false") + "}";
}

std::string all_schemes_table(std::string_view name, const SchemeContext& context) {
    std::string out = "name: " + tsv_escape(name) + '\n';
    out += padded("SCHEME", 21) + padded("KEY", 22) + padded("INT4 PAIR", 24) + padded("32-BIT", 8) + "NOTE\n";
    for (const auto& scheme : key_schemes()) {
        std::string key = "-", pair = "-", note;
        if (const auto missing = missing_field(scheme, context)) {
            note = "needs --" + std::string(field_name(*missing));
        } else {
            try {
                const SchemeKey k = scheme_key(scheme, scheme.name_use == NameUse::none ? std::nullopt
                                                                                      : std::optional<std::string_view>(name),
                                               context);
                key = key_text(k);
                pair = pair_text(k);
                if (scheme.name_use == NameUse::none) note = "from the context, not the name";
            } catch (const KeySchemeError& e) {
                note = e.what();
            }
        }
        out += padded(std::string(scheme.id), 21) + padded(key, 22) + padded(pair, 24) +
               padded(scheme.bits32 ? "yes" : "no", 8) + note;
        while (!out.empty() && out.back() == ' ') out.pop_back();
        out += '\n';
    }
    return out;
}

std::string all_schemes_json(std::string_view name, const SchemeContext& context) {
    std::string out;
    for (const auto& scheme : key_schemes()) {
        if (!out.empty()) out += ",\n ";
        if (const auto missing = missing_field(scheme, context)) {
            out += scheme_json_missing(name, scheme, *missing);
            continue;
        }
        try {
            const bool named = scheme.name_use != NameUse::none;
            const SchemeKey k = scheme_key(scheme, named ? std::optional<std::string_view>(name) : std::nullopt, context);
            out += scheme_json_object(name, scheme, k);
        } catch (const KeySchemeError& e) {
            out += "{" + name_fields(name) + ",\"scheme\":" + json_quote(scheme.id) + ",\"key\":null,\"error\":" +
                   json_quote(e.what()) + "}";
        }
    }
    return out;
}

}  // namespace pglock::cli
