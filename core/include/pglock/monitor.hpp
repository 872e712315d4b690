// The monitor engine: one cheap query per poll over pg_locks ⋈ pg_stat_activity, decoded into
// named-lock terms, and a tracker that turns successive snapshots into holds with start and end.
// Qt-free; shared by the lockscope app and `pglock status`.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "pglock/context.hpp"
#include "pglock/key.hpp"
#include "pglock/session.hpp"

namespace pglock::monitor {

// What pg_stat_activity says of a backend that holds or waits for an advisory lock.
struct Backend {
    int pid = 0;
    std::string state;             // active, idle, idle in transaction, ... ("" when not visible)
    std::string application_name;
    std::string usename;
    std::string client_addr;       // "" for unix-socket clients
    std::string client_hostname;
    std::string query;
    std::string wait_event_type;   // "Lock" with wait_event "advisory" for an advisory waiter
    std::string wait_event;
    std::optional<double> backend_start;  // epoch seconds
    std::optional<double> xact_start;
    std::optional<double> state_change;
    std::optional<std::int64_t> backend_xmin_age;  // age(backend_xmin) in transactions
};

using KeyForm = pglock::KeyForm;  // key.hpp: bigint (objsubid 1) or int_pair (objsubid 2)

struct Holder {
    int pid = 0;
    bool shared = false;  // ShareLock rather than ExclusiveLock
};

struct Waiter {
    int pid = 0;
    bool shared = false;
    std::optional<double> wait_start;  // epoch seconds (PostgreSQL 14+)
    std::vector<int> blocked_by;       // pg_blocking_pids(pid)
    // The waiter's backend_xmin is set: its snapshot holds back VACUUM's horizon (and makes
    // CREATE INDEX CONCURRENTLY wait). A pg_advisory_lock wait (AcquireStrategy::queue) has one
    // for the whole wait; a polling waiter has none between tries. From pg_stat_activity:
    std::optional<std::int64_t> xmin_age{};  // age(backend_xmin) in transactions
    std::optional<double> xmin_since{};      // xact_start (epoch seconds): the snapshot is at most this old
};

// A name for a key read from its holder's application_name (pglock/holder_identity.hpp).
struct HolderName {
    std::string name;
    // key_of(name) is the lock's key. false: the holder's name was cut to fit application_name,
    // and `name` is only a prefix, which no hash can confirm: show it as a prefix.
    bool verified = false;
    int pid = 0;  // the holder it came from
};
// How long `w` has pinned the xmin horizon at the snapshot's server time; nullopt when it pins
// nothing.
inline std::optional<double> xmin_pinned_seconds(const Waiter& w, double server_now) {
    if (!w.xmin_age || !w.xmin_since) return std::nullopt;
    return server_now > *w.xmin_since ? server_now - *w.xmin_since : 0.0;
}

struct LockEntry {
    KeyForm form = KeyForm::bigint;
    LockTag tag;                // classid, objid as pg_locks shows them
    // The bigint key (form == bigint). For int_pair it is only (classid << 32 | objid), which is
    // NOT a name's key (a bigint lock with that value is a different lock): use the pair.
    std::int64_t key = 0;
    std::int32_t pair_first = 0, pair_second = 0;  // form == int_pair: the two int4 keys
    std::vector<Holder> holders;   // sorted by pid
    std::vector<Waiter> waiters;   // oldest wait first
    // What the holders' application_name says the name is (bigint keys only); catalogs win.
    std::optional<HolderName> holder_name;
};

// What a session on a blocking chain waits for when that is not an advisory lock: its ungranted
// pg_locks row (a row, a relation, a transaction, ...). Fetched only for sessions on a chain of
// an advisory lock (see poll()), never for the whole server.
struct OtherWait {
    int pid = 0;
    std::string locktype;   // pg_locks.locktype: relation, tuple, transactionid, virtualxid, ...
    std::string mode;       // pg_locks.mode, e.g. ShareLock, RowExclusiveLock
    std::string relation;   // schema-qualified ("public.invoices"), "" when the lock has none
    std::optional<std::int64_t> page, tuple;
    std::string transactionid, virtualxid;
    std::optional<double> wait_start;  // epoch seconds (PostgreSQL 14+)
    std::vector<int> blocked_by;       // pg_blocking_pids(pid)
    std::string description;           // readable: "row (0,3) of public.invoices", "transaction 1234"
};

// "row (0,3) of public.invoices", "transaction 1234", "relation public.jobs", ...
std::string describe_other_wait(const OtherWait& wait);

struct Snapshot {
    int server_version = 0;     // PQserverVersion, e.g. 150018
    bool in_recovery = false;   // a standby at this poll (pg_is_in_recovery()): its advisory locks are local to it
    // The server the poll's session is connected to (libpq's PQhost and PQport): with a
    // multi-host conninfo (host=a,b), the one libpq picked, so a failover shows as a new host or
    // port; for a unix socket, the socket directory. port is 0 when libpq reports none.
    std::string host;
    int port = 0;
    double server_now = 0;      // epoch seconds, from the server's clock at the poll
    double latency_ms = 0;      // the poll's round trip, measured by the client
    std::vector<LockEntry> locks;           // sorted by form, then signed key (or pair)
    std::map<int, Backend> backends;        // every pid named in `locks` or `other_waits`
    // The sessions on a chain that wait on a lock other than an advisory lock, and the sessions
    // that block them, up to the root blocker (sorted by pid). Empty when no advisory holder or
    // waiter waits on such a lock, which then costs no second statement.
    std::vector<OtherWait> other_waits;
};

// The identity of a lock in a snapshot: its form plus its pg_locks tag.
struct LockId {
    KeyForm form = KeyForm::bigint;
    LockTag tag;
    friend auto operator<=>(const LockId& a, const LockId& b) {
        if (a.form != b.form) return a.form <=> b.form;
        if (a.tag.classid != b.tag.classid) return a.tag.classid <=> b.tag.classid;
        return a.tag.objid <=> b.tag.objid;
    }
    friend bool operator==(const LockId&, const LockId&) = default;
};
inline LockId id_of(const LockEntry& e) { return {e.form, e.tag}; }

// The poll's SQL for a server version (waitstart exists from PostgreSQL 14 on).
std::string poll_query(int server_version);

// The second statement of a poll, run only when a session of the first waits on a lock other
// than an advisory lock: from the pids $1 (int4[]), the sessions that block them, recursively (a
// pid once: a cycle ends), each with its pg_stat_activity row, its ungranted pg_locks row (none
// for a root) and pg_blocking_pids() for those waiting on a lock.
std::string chain_query(int server_version);

// Fills every bigint lock's holder_name from its holders' application_name: a complete name that
// hashes to the key is verified; otherwise a cut name of a holder whose complete names do not
// account for it is a prefix. poll() calls it.
void name_from_holders(Snapshot& snapshot);

// Makes `session` a monitor's session. Its client_encoding becomes one every text converts to
// (see monitor.cpp), unless its connection string chose one. A statement on it that would wait for a lock (the poll
// reads pg_locks, pg_stat_activity and pg_database, whose relation locks queue behind a pending
// ALTER, VACUUM FULL or LOCK TABLE of them) gives up after `lock_timeout` with SQLSTATE
// sqlstate::lock_not_available instead of queueing, where it would also hold up every session
// that queues after it. Run it once after connecting; the setting lasts for the session (behind
// a transaction-pooling pooler it does not, which the docs say).
inline constexpr std::chrono::milliseconds default_monitor_lock_timeout{200};
void prepare_session(Session& session, std::chrono::milliseconds lock_timeout = default_monitor_lock_timeout,
                     const Context& ctx = {});

// Opens a monitor's session and prepares it (prepare_session).
Session connect_session(const std::string& conninfo, const Context& ctx, const Session::Overrides& overrides = {},
                        const Keepalive& keepalive = {});

// Runs the poll on `session` (which should be dedicated to monitoring, prepare_session'd).
// Throws pglock::Error.
Snapshot poll(Session& session, const Context& ctx = {});

// What an operator can do to a backend the poll shows, during an incident.
enum class BackendSignal {
    cancel_query,  // pg_cancel_backend: the running statement fails, the session stays
    terminate,     // pg_terminate_backend: the session ends, its session-level locks go with it
};

// The statement that sends `signal` ($1: the backend's pid; one boolean column).
std::string_view backend_signal_sql(BackendSignal signal) noexcept;

// Sends `signal` to backend `pid` on `session`. True when the server signalled it; false when
// the pid is no backend of that server (any more). Throws pglock::Error, e.g. with SQLSTATE
// sqlstate::insufficient_privilege when the role may not signal that backend.
bool signal_backend(Session& session, int pid, BackendSignal signal, const Context& ctx = {});

// A hold: (lock, pid) seen granted from `start` until `end` (nullopt while it lasts).
struct Hold {
    LockId lock;
    std::int64_t key = 0;
    int pid = 0;
    bool shared = false;
    double start = 0;               // server epoch seconds of the first snapshot that showed it
    std::optional<double> end;      // of the first snapshot that no longer did
    std::string application_name;
    std::string usename;
    std::optional<double> backend_start;  // of the holding session: a reused pid is another hold
    // Seconds inside [start, end] when no poll could see the hold (the monitor's own session was
    // reconnecting) and it was seen again, same session and mode, on both sides of the gap.
    double unseen = 0;
    double duration() const { return end ? *end - start : 0; }
};

// Turns successive snapshots into holds. Memory is bounded: open holds are as many as the
// server has, and only the last `max_finished` finished holds are kept for the caller to drain.
class HoldTracker {
public:
    explicit HoldTracker(std::size_t max_finished = 10000) : max_finished_(max_finished) {}

    // Returns how many holds ended with this snapshot (their records are in finished()).
    std::size_t update(const Snapshot& snapshot);
    const std::map<std::pair<LockId, int>, Hold>& open() const noexcept { return open_; }
    // Finished holds, oldest first; the caller may take them (e.g. into a history store).
    std::vector<Hold> take_finished();
    std::optional<double> held_since(const LockId& lock, int pid) const;
    // The server restarted or the connection dropped: every open hold ends at `when`.
    void close_all(double when);
    // The monitor's session was lost after the poll at server time `last_seen`. Open holds stay
    // open until the next update(): one that its snapshot shows again with the same pid,
    // backend_start and mode, within `max_gap` seconds of `last_seen`, goes on as one hold (the
    // gap added to its `unseen`); every other one ends at `last_seen`, the last time it was seen.
    // Called again before that update, it keeps the first `last_seen`.
    void suspend(double last_seen, double max_gap);

private:
    void resume(const Snapshot& snapshot);
    void trim_finished();  // keeps the newest max_finished_
    std::size_t max_finished_;
    std::map<std::pair<LockId, int>, Hold> open_;
    std::vector<Hold> finished_;
    std::optional<double> suspended_at_;
    double max_gap_ = 0;
};

// A wait: (lock, pid) seen waiting from `start` until `end` (nullopt while it lasts), whether it
// ended by being granted, canceled or by the session going away.
struct Wait {
    LockId lock;
    std::int64_t key = 0;
    int pid = 0;
    bool shared = false;
    // The server's pg_locks.waitstart when it showed one (PostgreSQL 14+), else the server time of
    // the first snapshot that showed the wait (which is later than the true start by up to a poll).
    double start = 0;
    bool start_from_server = false;  // start is waitstart, not a poll time
    std::optional<double> end;       // server time of the first snapshot that no longer showed it
    std::string application_name;
    std::string usename;
    // Every pid pg_blocking_pids() named during the wait, sorted, no repeats: who it waited on.
    // Bounded by the server's max_connections.
    std::vector<int> blocked_by;
    double duration() const { return end ? *end - start : 0; }
};

// Turns successive snapshots into waits, as HoldTracker does for holds. Memory is bounded the
// same way: open waits are as many as the server has, finished ones at most `max_finished`.
class WaitTracker {
public:
    explicit WaitTracker(std::size_t max_finished = 10000) : max_finished_(max_finished) {}

    // Returns how many waits ended with this snapshot (their records are in take_finished()).
    std::size_t update(const Snapshot& snapshot);
    const std::map<std::pair<LockId, int>, Wait>& open() const noexcept { return open_; }
    // Finished waits, oldest end first; the caller may take them (e.g. into a history store).
    std::vector<Wait> take_finished();
    // The connection dropped: every open wait ends at `when`.
    void close_all(double when);
    // As HoldTracker::suspend: a wait the next snapshot shows again within `max_gap`, with the
    // same waitstart (PostgreSQL 14+; without one a wait cannot be told from a new one), goes on;
    // every other one ends at `last_seen`.
    void suspend(double last_seen, double max_gap);

private:
    void resume(const Snapshot& snapshot);
    void finish(Wait wait, double when);
    void trim_finished();
    std::size_t max_finished_;
    std::map<std::pair<LockId, int>, Wait> open_;
    std::vector<Wait> finished_;
    std::optional<double> suspended_at_;
    double max_gap_ = 0;
};

}  // namespace pglock::monitor
