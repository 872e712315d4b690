// pglock key NAME... : names to advisory keys, offline.
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <algorithm>
#include <functional>
#include <memory>
#include <optional>
#include <utility>
#include <iostream>
#include <stdexcept>
#include <string>
#include <vector>

#include "pglock/error.hpp"
#include "pglock/key.hpp"
#include "pglock/key_schemes.hpp"
#include "key_scheme_cli.hpp"
#include "pglock_cli/exit_codes.hpp"
#include "pglock_cli/text.hpp"
#include "signals.hpp"
#include "verbs.hpp"

namespace pglock::cli {

namespace {

struct KeyOptions {
    std::vector<std::string> names;
    bool json = false;
    bool sql = false;
    std::string scheme_id;     // --scheme: another library's derivation (pglock/key_schemes.hpp)
    bool all_schemes = false;  // --all-schemes: every scheme's key of each name
    SchemeContext context;     // --database, --schema, --table, --app, --prefix
    const KeySchemeInfo* scheme = nullptr;  // resolved from scheme_id by check_scheme_usage()
};

// The answer for each name in the chosen format, written as the names come.
class Printer {
public:
    explicit Printer(const KeyOptions& options) : options_(options) {
        if (options_.json) std::cout << "[";
    }
    void answer(const std::string& name) {
        if (options_.scheme) return answer_scheme(name);
        if (options_.all_schemes) {
            if (options_.json) {
                std::cout << (count_ ? ",\n " : "\n ") << all_schemes_json(name, options_.context);
            } else {
                std::cout << (count_ ? "\n" : "") << all_schemes_table(name, options_.context);
            }
            ++count_;
            return;
        }
        const std::int64_t key = key_of(name);
        const LockTag tag = tag_of(key);
        if (options_.json) {
            std::cout << (count_ ? ",\n " : "\n ") << "{\"name\":" << json_quote(name);
            if (!is_valid_utf8(name)) std::cout << ",\"name_hex\":\"" << hex_bytes(name) << '"';
            std::cout << ",\"key\":" << key << ",\"classid\":" << tag.classid << ",\"objid\":" << tag.objid
                      << ",\"key_scheme\":" << key_scheme_version << '}';
        } else if (options_.sql) {
            if (count_) std::cout << '\n';
            std::cout << "-- name " << tsv_escape(name) << '\n' << pg_locks_sql(key) << '\n';
        } else {
            std::cout << tsv_escape(name) << '\t' << key << '\t' << tag.classid << '\t' << tag.objid << '\n';
        }
        ++count_;
    }
    // The key of a scheme that needs no name, or whose absent name is its empty key (pg-boss).
    void answer_scheme(std::optional<std::string_view> name) {
        const SchemeKey key = scheme_key(*options_.scheme, name, options_.context);
        if (options_.json) {
            std::cout << (count_ ? ",\n " : "\n ") << scheme_json_object(name, *options_.scheme, key);
        } else if (options_.sql) {
            if (count_) std::cout << '\n';
            if (name) std::cout << "-- name " << tsv_escape(*name) << " (" << options_.scheme->id << ")\n";
            std::cout << (key.form == KeyForm::bigint ? pg_locks_sql(key.packed) : pg_locks_sql_pair(key.key1(), key.key2()))
                      << '\n';
        } else {
            std::cout << scheme_tsv_line(name, key);
        }
        ++count_;
    }
    void finish() {
        if (options_.json) std::cout << "\n]\n";
    }
    // False once a write failed: the reader of our output is gone (EPIPE, e.g. `| head -1`).
    bool flush() { return static_cast<bool>(std::cout.flush()); }

private:
    const KeyOptions& options_;
    std::size_t count_ = 0;
};

[[noreturn]] void empty_name(const std::string& where) {
    throw Error(Errc::empty_name, where + " is empty; an empty name would collide with every other empty one");
}

// Each line of stdin (its bytes without the final "\n", nothing else stripped: a CR stays, and
// shows as \r in the TSV output) to `on_line` as soon as it is complete, the last one also
// without a final "\n". Output is flushed before every read that may wait, so that a line gets
// its answer while the writer waits for it (`yes | pglock key - | head -1`, a coprocess).
// Memory: one read buffer and the longest line. False when writing failed.
bool for_each_stdin_line(Printer& printer, const std::function<void(const std::string&)>& on_line) {
    std::string line;
    char buf[64 * 1024];
    for (;;) {
        if (!printer.flush()) return false;
        const ssize_t n = ::read(STDIN_FILENO, buf, sizeof buf);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) throw std::runtime_error(std::string("reading stdin failed: ") + std::strerror(errno));
        if (n == 0) break;
        std::string_view chunk(buf, static_cast<std::size_t>(n));
        for (std::size_t nl; (nl = chunk.find('\n')) != std::string_view::npos; chunk.remove_prefix(nl + 1)) {
            line.append(chunk.substr(0, nl));
            on_line(line);
            line.clear();
        }
        line.append(chunk);
    }
    if (!line.empty()) on_line(line);
    return true;
}

// The context options are given only with a scheme that reads them, and the names fit the scheme.
void check_scheme_usage(KeyOptions& options, const std::vector<std::pair<ContextField, bool>>& given) {
    if (!options.scheme_id.empty()) {
        options.scheme = find_key_scheme(options.scheme_id);
        if (!options.scheme)
            throw UsageError("unknown key scheme \"" + options.scheme_id + "\"; known: " + key_scheme_ids());
    }
    for (const auto& [field, is_given] : given) {
        if (!is_given) continue;
        const std::string option = "--" + std::string(field_name(field));
        if (!options.scheme && !options.all_schemes) throw UsageError(option + " goes with --scheme or --all-schemes");
        if (!options.scheme) continue;
        const auto& s = *options.scheme;
        const bool used = std::find(s.required.begin(), s.required.end(), field) != s.required.end() ||
                          std::find(s.optional.begin(), s.optional.end(), field) != s.optional.end();
        if (!used) throw UsageError(std::string(s.id) + " does not use " + option);
    }
    if (options.scheme) {
        const auto& s = *options.scheme;
        if (const auto missing = missing_field(s, options.context))
            throw UsageError(std::string(s.id) + " needs --" + std::string(field_name(*missing)));
        if (s.name_use == NameUse::none && !options.names.empty())
            throw UsageError(std::string(s.id) + " takes no name: its lock comes from the context options");
        if (s.name_use == NameUse::required && options.names.empty())
            throw UsageError(std::string(s.id) + " needs a name: " + std::string(s.name_means));
        try {  // a context value the scheme cannot use (a --prefix that is no integer) is a usage error
            if (s.name_use != NameUse::required) scheme_key(s, std::nullopt, options.context);
            else scheme_key(s, "x", options.context);
        } catch (const KeySchemeError& e) {
            throw UsageError(e.what());
        }
    } else if (options.names.empty()) {
        throw UsageError("a lock name is required");
    }
}

int run_key(const KeyOptions& options) {
    // No server, nothing to undo: a signal ends it at once, with a line that says so. Also blocks
    // SIGPIPE, so a closed output shows as a failed write that ends the run quietly.
    SignalStop signals;
    const auto on_signal = signals.exit_on_signal("answering lock names");

    for (std::size_t i = 0; i < options.names.size(); ++i) {
        if (options.names[i].empty()) empty_name("lock name #" + std::to_string(i + 1));
    }
    Printer printer(options);
    if (options.scheme && options.names.empty()) printer.answer_scheme(std::nullopt);
    bool stdin_read = false;
    for (const auto& arg : options.names) {
        if (arg != "-") {
            printer.answer(arg);
            continue;
        }
        if (stdin_read) continue;  // stdin can be read only once
        stdin_read = true;
        std::size_t line_no = 0;
        const bool written = for_each_stdin_line(printer, [&](const std::string& name) {
            ++line_no;
            if (name.empty()) empty_name("stdin line " + std::to_string(line_no));
            printer.answer(name);
        });
        if (!written) return exit_error;  // nobody reads our output any more: nothing to say, to nobody
    }
    printer.finish();
    return printer.flush() ? exit_ok : exit_error;
}

}  // namespace

void register_key(CLI::App& app, VerbRun& run) {
    auto options = std::make_shared<KeyOptions>();
    auto* cmd = app.add_subcommand("key", "Print the advisory key of each name (needs no server).");
    cmd->add_option("names", options->names, "lock names; - reads more names from stdin, one per line");
    auto* json = cmd->add_flag("--json", options->json,
                               "a JSON array of {name, key, classid, objid, key_scheme}; key_scheme 1 is the Go package's SHA-256 "
                               "scheme; \"name_hex\" is added when a name is "
                               "not valid UTF-8 (its \"name\" then shows U+FFFD for the bad bytes)");
    auto* sql = cmd->add_flag("--sql", options->sql, "the pg_locks query that shows each key's holders and waiters (with --scheme, of that scheme's key)");
    json->excludes(sql);
    auto* scheme = cmd->add_option("--scheme", options->scheme_id,
                                   "the key under another library's scheme (ids: " + key_scheme_ids() +
                                       "); TSV adds OBJSUBID, JSON adds scheme, form, objsubid, pair, bits32");
    auto* all = cmd->add_flag("--all-schemes", options->all_schemes,
                              "a table of each name's key under every scheme (with --json: one object per scheme)");
    scheme->excludes(all);
    sql->excludes(all);
    auto given = std::make_shared<ContextOptions>(add_context_options(cmd, options->context));
    cmd->footer("Default output: NAME<TAB>KEY<TAB>CLASSID<TAB>OBJID per line; NAME in PostgreSQL COPY text form\n"
                "(backslash, tab, CR and LF written as \\\\, \\t, \\r, \\n). Names starting with - go after --.\n"
                "Key schemes, their sources and context options: docs/key-schemes.md.");
    cmd->callback([options, given, &run] {
        run = [options, flags = given_fields(*given)] {
            check_scheme_usage(*options, flags);
            return run_key(*options);
        };
    });
}

}  // namespace pglock::cli
