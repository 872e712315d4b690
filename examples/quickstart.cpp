// The library example of README.md and docs/library.md (check-docs holds their lines to this
// file), compiled and run by the test suite against a real server.
#include <pglock/pglock.hpp>

#include <cstdio>
#include <cstdlib>
#include <iostream>

int main(int argc, char** argv) {
    // A conninfo string or URI; empty means libpq's defaults and PG* environment variables.
    pglock::Pool pool(argc > 1 ? argv[1] : "", {.max_size = 4});

    // One-liner: run the job at most once across all replicas right now.
    const bool ran = pglock::run_once(pool, "orders.daily-rollup", {}, [](pglock::Guard& guard) {
        std::cout << "rolling up under key " << guard.key() << " on backend " << guard.backend_pid() << "\n";
    });
    if (!ran) std::cout << "another replica is rolling up\n";

    // Try, and skip when another session holds it.
    pglock::Lock warmup(pool, "session.warmup", {.logger = pglock::make_stderr_logger()});
    if (std::optional<pglock::Guard> guard = warmup.try_acquire()) {
        std::cout << "warming up\n";
        // The guard releases on scope exit; release() says whether the unlock worked.
        if (std::error_code ec = guard->release()) std::cerr << "release: " << ec.message() << "\n";
    }

    // Wait at most 5 s for a lock; the server-side wait is cancelled when the time is up.
    pglock::Lock charge(pool, "orders.batch-charge");
    try {
        pglock::Guard guard = charge.acquire(pglock::Context::with_timeout(std::chrono::seconds(5)));
        // Work on the lock's own session, and stop if the lock is lost.
        auto session = guard.session();
        session->exec("SELECT $1::text", {"charged"});
        std::cout << "lost: " << std::boolalpha << guard.lost() << "\n";
    } catch (const pglock::Error& e) {
        std::cerr << pglock::code_string(e.code()) << ": " << e.what() << "\n";
        return 1;
    }

    // Where to look for it in pg_locks:
    std::cout << pglock::pg_locks_sql(charge.key()) << "\n";
    return 0;
}
