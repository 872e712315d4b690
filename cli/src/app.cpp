// Command-line parsing and the one place where failures turn into messages and exit codes.
#include "pglock_cli/cli.hpp"

#include <iostream>

#include "pglock/error.hpp"
#include "pglock_cli/duration.hpp"
#include "pglock_cli/exit_codes.hpp"
#include "pglock_cli/text.hpp"
#include "verbs.hpp"

namespace pglock::cli {

CLI::Validator duration_check() {
    return CLI::Validator(
        [](std::string& text) -> std::string { return duration_error(text); },
        "DURATION");
}

LockOptions lock_options(const GlobalOptions& global) {
    LockOptions options;
    if (global.verbose) options.logger = make_stderr_logger(LogLevel::debug);
    return options;
}

void say(std::ostream& out, const std::string& line) { out << line << std::endl; }

namespace {

constexpr const char* footer =
    "--dsn, --verbose and --no-pooler-check may come before or after the verb.\n"
    "Connection: --dsn takes a libpq conninfo string (\"host=... dbname=...\") or a postgresql:// URI;\n"
    "without it libpq's PG* environment variables and defaults apply. Connecting gives up after\n"
    "10 s unless connect_timeout (in the DSN or PGCONNECT_TIMEOUT) says otherwise.\n"
    "Exit codes: 0 ok, 1 error, 2 usage, 3 contended or timed out, 4 lock lost while held.\n";

// Every failure's one line. The message may quote a server (libpq's complaint, the server's
// ERROR with its DETAIL, a name it echoes): shown by the display rule, never as raw bytes.
int report(const char* kind, std::string_view message, int code) {
    std::cerr << "pglock: " << kind << ": " << display_line(message) << std::endl;
    return code;
}

}  // namespace

int run(int argc, char** argv) {
    CLI::App app("Named PostgreSQL advisory locks from the command line.", "pglock");
    app.footer(footer);
    app.require_subcommand(1);
    app.fallthrough();  // global options may also follow the verb: `pglock try NAME --dsn ...`
    app.set_version_flag("--version", std::string("pglock ") + PGLOCK_CLI_VERSION);
    app.failure_message([](const CLI::App*, const CLI::Error& e) {
        return "pglock: usage: " + display_line(e.what()) + " (see --help)\n";
    });

    GlobalOptions global;
    app.add_option("--dsn", global.dsn, "libpq conninfo string or postgresql:// URI (default: PG* environment)");
    app.add_flag("-v,--verbose", global.verbose, "log lock events (lock: acquired, lock: released ...) on stderr");
    app.add_flag("!--no-pooler-check", global.pooler_check,
                 "skip the extra connection that refuses a transaction-mode pooler before the first lock (docs/cli.md)");

    VerbRun verb;
    register_key(app, verb);
    register_try(app, global, verb);
    register_hold(app, global, verb);
    register_bench(app, global, verb);
    register_status(app, global, verb);
    register_demo(app, global, verb);
    register_fence(app, global, verb);
    register_catalog(app, verb);
#if PGLOCK_WITH_PROMETHEUS
    register_exporter(app, global, verb);
#endif

    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        return app.exit(e) == 0 ? exit_ok : exit_usage;  // --help and --version exit 0
    }

    try {
        return verb ? verb() : exit_usage;
    } catch (const UsageError& e) {
        return report("usage", e.what(), exit_usage);
    } catch (const Error& e) {
        // what() already starts with the code string, e.g. "connection_failed: ..."
        std::string message = e.what();
        if (!e.sqlstate().empty()) message += " (SQLSTATE " + e.sqlstate() + ")";
        return report("error", message, exit_error);
    } catch (const std::exception& e) {
        return report("error", e.what(), exit_error);
    } catch (...) {
        return report("error", "unexpected failure", exit_error);
    }
}

}  // namespace pglock::cli
