// What the verb files share: global options, how a verb registers itself, small output helpers.
#pragma once

#include <CLI/CLI.hpp>

#include <functional>
#include <iosfwd>
#include <memory>
#include <stdexcept>
#include <string>

#include "pglock/lock.hpp"

namespace pglock::cli {

// Options valid for every verb (before or after the verb name: the app falls through).
struct GlobalOptions {
    std::string dsn;       // conninfo or URI; empty: libpq's PG* environment and defaults
    bool verbose = false;  // the library's log lines ("lock: acquired" ...) on stderr
    // PoolOptions::refuse_transaction_pooler for the verbs that take locks (--no-pooler-check).
    bool pooler_check = true;
};

// Set by the chosen verb's parse callback and run after parsing, so that nothing connects
// before the whole command line is known to be valid. Returns the exit code.
using VerbRun = std::function<int()>;

void register_key(CLI::App& app, VerbRun& run);
void register_try(CLI::App& app, const GlobalOptions& global, VerbRun& run);
void register_hold(CLI::App& app, const GlobalOptions& global, VerbRun& run);
void register_bench(CLI::App& app, const GlobalOptions& global, VerbRun& run);
void register_status(CLI::App& app, const GlobalOptions& global, VerbRun& run);
void register_demo(CLI::App& app, const GlobalOptions& global, VerbRun& run);
void register_fence(CLI::App& app, const GlobalOptions& global, VerbRun& run);
void register_catalog(CLI::App& app, VerbRun& run);
void register_exporter(CLI::App& app, const GlobalOptions& global, VerbRun& run);  // PGLOCK_WITH_PROMETHEUS

// A usage problem found after parsing (exit 2, like CLI11's own).
struct UsageError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

// CLI11 check for duration options ("500ms", "30s", "5m", "1h").
CLI::Validator duration_check();

// LockOptions carrying the stderr logger when --verbose was given.
LockOptions lock_options(const GlobalOptions& global);

// Writes one line and flushes: scripts and tests read stdout through a pipe while we run.
void say(std::ostream& out, const std::string& line);

}  // namespace pglock::cli
