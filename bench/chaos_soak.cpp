// The chaos soak: the driver of tests/core/test_chaos for minutes, with server restarts.
//   pglock_chaos_soak --dsn DSN [--seconds S] [--workers N] [--kill-ms MS]
//                     [--restart-every S --restart-cmd CMD] [--seed N]
// scripts/soak starts a private cluster and passes `tests/pg/cluster restart DIR` as CMD: the
// soak runs the restart itself, so it knows when each one began and ended. Prints the counters;
// exits 1 when any invariant was violated, 2 on bad arguments or an unreachable server.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <iostream>
#include <string>
#include <string_view>

#include "chaos_driver.hpp"

namespace {

int usage(const char* why) {
    std::cerr << "pglock_chaos_soak: " << why << "\n"
              << "usage: pglock_chaos_soak --dsn DSN [--seconds S] [--workers N] [--kill-ms MS]\n"
                 "                         [--restart-every S --restart-cmd CMD] [--seed N]\n";
    return 2;
}

}  // namespace

int main(int argc, char** argv) {
    pglock::chaos::Config cfg;
    cfg.duration = std::chrono::minutes(10);
    cfg.progress_every = std::chrono::seconds(30);
    if (const char* env = std::getenv("PGLOCK_TEST_DSN")) cfg.dsn = env;
    try {
        for (int i = 1; i < argc; ++i) {
            const std::string_view arg = argv[i];
            if (i + 1 >= argc) return usage(("missing value for " + std::string(arg)).c_str());
            const std::string value = argv[++i];
            if (arg == "--dsn") cfg.dsn = value;
            else if (arg == "--seconds") cfg.duration = std::chrono::seconds(std::stol(value));
            else if (arg == "--workers") cfg.workers = std::stoi(value);
            else if (arg == "--kill-ms") cfg.kill_every = std::chrono::milliseconds(std::stol(value));
            else if (arg == "--restart-every") cfg.restart_every = std::chrono::seconds(std::stol(value));
            else if (arg == "--restart-cmd") cfg.restart_command = value;
            else if (arg == "--seed") cfg.seed = std::stoull(value);
            else return usage(("unknown option " + std::string(arg)).c_str());
        }
    } catch (const std::exception&) {
        return usage("a number was expected");
    }
    if (cfg.dsn.empty()) return usage("no --dsn (or PGLOCK_TEST_DSN)");
    if (cfg.workers < 1) return usage("--workers must be at least 1");
    if (cfg.restart_every.count() > 0 && cfg.restart_command.empty()) return usage("--restart-every needs --restart-cmd");
    cfg.log = [](const std::string& line) { std::cout << line << std::endl; };

    try {
        const auto rep = pglock::chaos::run(cfg);
        std::cout << rep.summary() << std::flush;
        return rep.total_violations() > 0 ? 1 : 0;
    } catch (const std::exception& e) {
        std::cerr << "pglock_chaos_soak: " << e.what() << "\n";
        return 2;
    }
}
