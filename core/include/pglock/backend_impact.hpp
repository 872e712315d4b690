// What terminating a backend would do, asked before doing it: every lock the session holds
// (advisory and others), who waits on it, its transaction and whether it wrote anything that the
// termination rolls back. One on-demand read (not part of the poll: it asks pg_blocking_pids() of
// every waiting session). Qt-free; lockscope's "Terminate holder…" shows it before confirming.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "pglock/context.hpp"
#include "pglock/session.hpp"

namespace pglock::monitor {

struct HeldLock {
    std::string locktype;  // pg_locks.locktype: advisory, relation, transactionid, tuple, ...
    std::string mode;      // ExclusiveLock, RowExclusiveLock, ...
    bool granted = true;   // false: the one lock it waits for
    // For people: "advisory key -7132652647757890940", "advisory pair (1, 2)",
    // "relation public.orders", "transactionid 1234", "virtualxid 3/14".
    std::string object;
    std::optional<std::int64_t> advisory_key;  // bigint advisory locks only
};

struct BackendImpact {
    bool found = false;  // false: no backend with that pid (it ended already)
    int pid = 0;
    double server_now = 0;
    std::string state, application_name, client_addr, client_hostname, query;
    std::optional<double> backend_start, xact_start;
    // The transaction has an xid: it wrote something, and terminating rolls that back.
    bool wrote = false;
    std::vector<HeldLock> locks;     // held first, then the awaited one; session-level advisory locks included
    std::vector<int> waiting_pids;   // sessions pg_blocking_pids() says it blocks, sorted
    std::optional<double> transaction_age() const {
        return xact_start ? std::optional<double>(server_now - *xact_start) : std::nullopt;
    }
};

BackendImpact backend_impact(Session& session, int pid, const Context& ctx = {});

}  // namespace pglock::monitor
