// A process using the library, for the ghost and leak tests: it holds two locks with its
// metrics served (lock_held_info), and on "lease" from stdin takes both guards' sessions, so
// that the lost-lock watcher cannot tell the first guard when its backend is terminated (a
// ghost), and takes a third lock on the second guard's session behind its back (a leak).
//
//   pglock_claims_holder DSN NAME    prints "ready URL GHOST_PID LEAK_PID", then on
//   "lease" prints "leased"; "quit" or the end of stdin ends it.
#include <iostream>
#include <optional>
#include <string>

#include "metrics_server.hpp"
#include "pglock/pglock.hpp"

int main(int argc, char** argv) {
    if (argc != 3) {
        std::cerr << "usage: pglock_claims_holder DSN NAME\n";
        return 2;
    }
    try {
        const std::string name = argv[2];
        pglock::Pool pool(argv[1]);
        const auto server = pglock::cli::MetricsServer::start("127.0.0.1:0");
        pglock::LockOptions options;
        options.metrics = server->metrics();
        pglock::Lock ghost(pool, name + ".ghost", options);
        pglock::Lock leak(pool, name + ".leak", options);
        auto g = ghost.acquire();
        auto h = leak.acquire();
        std::cout << "ready " << server->url() << ' ' << g.backend_pid() << ' ' << h.backend_pid() << std::endl;
        std::optional<pglock::SessionLease> ghost_lease, leak_lease;
        for (std::string line; std::getline(std::cin, line) && line != "quit";) {
            if (line == "lease") {
                ghost_lease.emplace(g.session());
                leak_lease.emplace(h.session());
                (*leak_lease)->exec("SELECT pg_advisory_lock($1::bigint)", {std::to_string(pglock::key_of(name + ".extra"))});
                std::cout << "leased" << std::endl;
            }
        }
        return 0;
    } catch (const std::exception& e) {
        std::cerr << "pglock_claims_holder: " << e.what() << '\n';
        return 1;
    }
}
