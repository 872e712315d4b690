// pglock fence init | show NAME... : the table behind fencing tokens (LockOptions::fencing).
#include <iostream>
#include <string>
#include <vector>

#include "pglock/sqlstate.hpp"
#include "pglock/error.hpp"
#include "pglock/fence.hpp"
#include "pglock/key.hpp"
#include "pglock_cli/connection.hpp"
#include "pglock_cli/exit_codes.hpp"
#include "pglock_cli/text.hpp"
#include "signals.hpp"
#include "verbs.hpp"

namespace pglock::cli {

namespace {

// Neither verb waits on a lock: a signal ends the run at once, with a line that says so.
int run_init(const GlobalOptions& global) {
    SignalStop signals;
    const auto on_signal = signals.exit_on_signal("creating the fencing table");
    Pool pool(global.dsn, pool_options_for(global.dsn, 1, global.pooler_check));
    const auto result = fence::init(pool);
    if (!result.refusal.empty()) {
        // The table is there but this role's fenced locks would refuse it: say so now, not at
        // the first --fence.
        throw Error(Errc::query_failed, "exists but unusable: " + result.refusal);
    }
    if (result.created) {
        say(std::cout, "created: table " + display_text(result.table) + "; locks taken with fencing get their tokens from it");
    } else {
        // The schema is whichever search_path finds first: anybody's name in a shared database.
        say(std::cout, "exists: table " + display_text(result.table) + " is already there; nothing changed");
    }
    return exit_ok;
}

int run_show(const std::vector<std::string>& names, const GlobalOptions& global) {
    SignalStop signals;
    const auto on_signal = signals.exit_on_signal("reading fencing tokens");
    Pool pool(global.dsn, pool_options_for(global.dsn, 1, global.pooler_check));
    PooledSession session = pool.acquire();
    for (const auto& name : names) {
        std::optional<std::int64_t> token;
        try {
            token = fence::last_token(*session, name);
        } catch (const Error& e) {
            if (e.sqlstate() != sqlstate::undefined_table) throw;
            throw Error(Errc::query_failed,
                        "no table pglock_fence through search_path: no fencing token was ever handed out here "
                        "(create the table with `pglock fence init`)",
                        e.sqlstate());
        }
        say(std::cout, json_quote(name) + " key=" + std::to_string(key_of(name)) +
                           " token=" + (token ? std::to_string(*token) : std::string("none")));
    }
    return exit_ok;
}

}  // namespace

void register_fence(CLI::App& app, const GlobalOptions& global, VerbRun& run) {
    auto* cmd = app.add_subcommand(
        "fence", "Fencing tokens: create their table (init), or print the last token of locks (show).");
    cmd->require_subcommand(1);
    auto* init = cmd->add_subcommand(
        "init", "Create the table pglock_fence (found through search_path) unless it exists; idempotent.");
    init->callback([&global, &run] { run = [&global] { return run_init(global); }; });

    auto names = std::make_shared<std::vector<std::string>>();
    auto* show = cmd->add_subcommand("show", "Print the last fencing token handed out for each NAME (none: never).");
    show->add_option("name", *names, "lock names")->required();
    show->callback([names, &global, &run] { run = [names, &global] { return run_show(*names, global); }; });
}

}  // namespace pglock::cli
