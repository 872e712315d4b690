// pglock catalog audit FILE: names of a catalog that share a key, within one library's key scheme
// or across schemes, and a warning for every 32-bit scheme. Offline: needs no server.
#include <cstdio>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "catalog_file.hpp"
#include "key_scheme_cli.hpp"
#include "pglock/key_scheme_audit.hpp"
#include "pglock_cli/exit_codes.hpp"
#include "pglock_cli/text.hpp"
#include "signals.hpp"
#include "verbs.hpp"

namespace pglock::cli {

namespace {

struct AuditOptions {
    std::string path;
    std::vector<std::string> scheme_ids;  // --scheme, repeatable; none: pglock-v1
    bool all_schemes = false;
    SchemeContext context;
};

// The schemes to audit: those named, or with --all-schemes every one whose context was given.
std::vector<const KeySchemeInfo*> chosen_schemes(const AuditOptions& options) {
    std::vector<const KeySchemeInfo*> schemes;
    if (options.all_schemes) {
        for (const auto& s : key_schemes()) {
            if (const auto missing = missing_field(s, options.context)) {
                say(std::cerr, "pglock: note: not auditing " + std::string(s.id) + ": it needs --" +
                                   std::string(field_name(*missing)));
                continue;
            }
            schemes.push_back(&s);
        }
        return schemes;
    }
    const std::vector<std::string> ids = options.scheme_ids.empty() ? std::vector<std::string>{"pglock-v1"} : options.scheme_ids;
    for (const auto& id : ids) {
        const KeySchemeInfo* s = find_key_scheme(id);
        if (!s) throw UsageError("unknown key scheme \"" + id + "\"; known: " + key_scheme_ids());
        if (const auto missing = missing_field(*s, options.context))
            throw UsageError(std::string(s->id) + " needs --" + std::string(field_name(*missing)));
        schemes.push_back(s);
    }
    return schemes;
}

std::string describe_entry(const SchemeEntry& entry) {
    return std::string(entry.scheme) + (entry.name ? " " + json_quote(*entry.name) : std::string(" (its context-derived lock)"));
}

std::string describe_key(const SchemeKey& key) {
    const LockTag tag = tag_of(key.packed);
    const std::string where = " (classid " + std::to_string(tag.classid) + ", objid " + std::to_string(tag.objid) +
                              ", objsubid " + std::to_string(key.objsubid()) + ")";
    if (key.form == KeyForm::bigint) return "bigint " + std::to_string(key.packed) + where;
    return "int4 pair " + std::to_string(key.key1()) + "," + std::to_string(key.key2()) + where;
}

int run_audit(const AuditOptions& options, const std::vector<std::pair<ContextField, bool>>& given) {
    for (const auto& [field, is_given] : given)
        if (is_given && options.scheme_ids.empty() && !options.all_schemes)
            throw UsageError("--" + std::string(field_name(field)) + " goes with --scheme or --all-schemes");
    const auto schemes = chosen_schemes(options);
    // Reading a catalog can block (a FIFO, a slow disk) where no stop token reaches: a signal
    // ends the verb at once with a line that says so, as in every verb. SIGPIPE is blocked too,
    // so a closed output shows as a failed write.
    SignalStop signals;
    const auto on_signal = signals.exit_on_signal("auditing the catalog");
    const Catalog catalog = load_catalog(options.path);
    for (const auto& skipped : catalog.skipped())
        say(std::cerr, "pglock: warning: catalog " + options.path + ": " + describe(skipped));

    std::string ids;
    for (const auto* s : schemes) ids += (ids.empty() ? "" : ", ") + std::string(s->id);
    std::cout << "catalog " << options.path << ": " << catalog.size() << " names; schemes " << ids << '\n';
    for (const auto* s : schemes) {
        if (!s->bits32 || s->name_use == NameUse::none) continue;
        char expected[64];
        std::snprintf(expected, sizeof expected, "%.3g", expected_32bit_collisions(catalog.size()));
        say(std::cerr, "pglock: warning: " + std::string(s->id) + " keys are 32-bit (CRC-32): among " +
                           std::to_string(catalog.size()) + " names about " + expected +
                           " pairs collide by chance; at about 77,000 names, even odds");
    }

    const SchemeAudit audit = audit_key_schemes(catalog.names(), schemes, options.context);
    for (const auto& refused : audit.refused) say(std::cerr, "pglock: warning: not checked: " + refused);
    for (const auto& collision : audit.collisions) {
        std::string line = "collision on " + describe_key(collision.key) + ":";
        for (std::size_t i = 0; i < collision.entries.size(); ++i)
            line += (i ? ", " : " ") + describe_entry(collision.entries[i]);
        std::cout << line << '\n';
    }
    std::cout << (audit.collisions.empty() ? std::string("no collisions")
                                           : std::to_string(audit.collisions.size()) + " collisions: those locks block each other")
              << '\n';
    std::cout.flush();
    return audit.collisions.empty() ? exit_ok : exit_error;
}

}  // namespace

void register_catalog(CLI::App& app, VerbRun& run) {
    auto* cmd = app.add_subcommand("catalog", "Check a catalog of lock names (needs no server).");
    cmd->require_subcommand(1);
    auto options = std::make_shared<AuditOptions>();
    auto* audit = cmd->add_subcommand(
        "audit", "Names that share a key within or across key schemes (exit 1 if any), and a warning for 32-bit schemes.");
    audit->add_option("file", options->path, "a name list or the lockscope app's SQLite catalog")->required();
    auto* scheme = audit->add_option("--scheme", options->scheme_ids,
                                     "a key scheme to audit under (repeatable; default pglock-v1; ids in docs/key-schemes.md)");
    auto* all = audit->add_flag("--all-schemes", options->all_schemes, "every scheme whose context options are given");
    scheme->excludes(all);
    auto given = std::make_shared<ContextOptions>(add_context_options(audit, options->context));
    audit->callback([options, given, &run] {
        run = [options, flags = given_fields(*given)] { return run_audit(*options, flags); };
    });
}

}  // namespace pglock::cli
