// How the CLI connects: --dsn (conninfo or URI) or, when empty, libpq's environment and defaults.
#pragma once

#include <string>
#include <vector>

#include "pglock/conninfo.hpp"
#include "pglock/pool.hpp"

namespace pglock::cli {

// Pool options for a DSN. Validates the DSN with libpq first, so a malformed one fails at once
// with libpq's own message (Error{connection_failed}). connect_timeout is 10 s unless the DSN or
// PGCONNECT_TIMEOUT sets libpq's connect_timeout: then that, with libpq's rules (values below
// 2 s count as 2 s; 0 or negative means wait without a limit). `pooler_check`:
// PoolOptions::refuse_transaction_pooler (the CLI's --no-pooler-check turns it off).
PoolOptions pool_options_for(const std::string& dsn, std::size_t max_size, bool pooler_check = true);

// The options a DSN sets (pglock::conninfo_options); throws Error{connection_failed,
// "invalid --dsn: ..."} when libpq cannot parse it.
std::vector<ConninfoOption> dsn_options(const std::string& dsn);

}  // namespace pglock::cli
