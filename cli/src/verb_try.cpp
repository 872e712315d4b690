// pglock try NAME : is the lock free right now? Takes it and gives it back at once.
#include <iostream>
#include <string>

#include "pglock/error.hpp"
#include "pglock/lock.hpp"
#include "pglock_cli/connection.hpp"
#include "pglock_cli/exit_codes.hpp"
#include "pglock_cli/text.hpp"
#include "held_by.hpp"
#include "signals.hpp"
#include "verbs.hpp"

namespace pglock::cli {

namespace {

struct TryOptions {
    std::string name;
    bool fence = false;
};

int run_try(const TryOptions& options, const GlobalOptions& global) {
    // Nothing waits on the server here: a signal ends the run at once, with a line that says so
    // (the server drops whatever the closed session had).
    SignalStop signals;
    const auto on_signal = signals.exit_on_signal("trying the lock " + json_quote(options.name));
    Pool pool(global.dsn, pool_options_for(global.dsn, 2, global.pooler_check));
    LockOptions lock_opts = lock_options(global);
    lock_opts.fencing = options.fence;
    Lock lock(pool, options.name, std::move(lock_opts));
    const std::string what = json_quote(lock.name()) + " key=" + std::to_string(lock.key());

    auto guard = lock.try_acquire();
    if (!guard) {
        say(std::cout, "contended: " + what + " is " + held_by(lock));
        return exit_contended;
    }
    const int pid = guard->backend_pid();
    const auto token = guard->fencing_token();
    if (const auto ec = guard->release())
        throw Error(ec == Errc::lock_lost ? Errc::lock_lost : Errc::release_failed,
                    "acquired " + what + " but releasing it failed: " + ec.message());
    say(std::cout, "acquired: " + what + " was free; taken on backend pid " + std::to_string(pid) +
                       (token ? " with fencing token " + std::to_string(*token) : std::string()) + " and released");
    return exit_ok;
}

}  // namespace

void register_try(CLI::App& app, const GlobalOptions& global, VerbRun& run) {
    auto options = std::make_shared<TryOptions>();
    auto* cmd = app.add_subcommand("try", "Take the lock without waiting and release it at once: exit 0 when it "
                                          "was free, 3 when another session holds it.");
    cmd->add_option("name", options->name, "lock name")->required();
    cmd->add_flag("--fence", options->fence, "take a fencing token with the lock and print it (needs `pglock fence init`)");
    cmd->callback([options, &global, &run] { run = [options, &global] { return run_try(*options, global); }; });
}

}  // namespace pglock::cli
