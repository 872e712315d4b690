// What a Lock is made of, shared with the guards it hands out (they may outlive it).
#pragma once

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>

#include "pglock/lock.hpp"
#include "session_ops.hpp"

namespace pglock::detail {

struct LockImpl {
    // A handle on the state of the pool the Lock was built on (never empty once built): it stays
    // valid when the caller's Pool object moves or is destroyed.
    std::optional<Pool> pool;
    std::string name;
    std::uint64_t id = 0;  // unique in the process, never reused (per-thread caches key on it)
    std::int64_t key = 0;
    KeyText key_text{0};  // the statements' first parameter
    LockOptions options;
    std::unique_ptr<LockMetrics> metrics;
    // The holding session's application_name names the lock (pool and lock options agree), in
    // this format.
    bool names_holder = false;
    std::string application_name_format;
    // LockOptions::fencing: the name as a bytea literal, the fenced statements' last parameter.
    std::string fence_name;

    bool logs(LogLevel level) const noexcept { return options.logger && options.logger->enabled(level); }
    // Logs `message` with attr name first, then `extra`. Callers check logs() first, so a lock
    // without a logger never builds the strings.
    void log(LogLevel level, std::string_view message, std::initializer_list<LogAttr> extra = {}) const noexcept;
    void count(Outcome outcome) const noexcept;
    void observe_hold(double seconds) const noexcept;
    // lock_held_info: a guard holds the lock on backend `pid` / no longer does; lock_lost_total.
    void claim(int pid) const noexcept;
    void unclaim(int pid) const noexcept;
    void count_lost() const noexcept;
    // Errc::session_changed seen: metric and warn "lock: session changed" with both pids.
    void session_changed(int lock_pid, int pid) const noexcept;
};

// What a Lock may ask of its Pool beyond the public API.
struct PoolLend {
    // An idle session without the liveness poll (`reused` true), else a new connection: the
    // caller's first statement is the check, and it must take another session when that finds
    // this one dead.
    static PooledSession lend_unchecked(Pool& pool, const Context& ctx, bool& reused) {
        return pool.lend(ctx, false, reused);
    }
};

// The application_names of a named lock statement: the session's own, which the unlock puts
// back, and the one naming the lock. Escaping the name and expanding the format cost the client
// more than the rest of a pair, and the answer only changes with the lock and the session's own
// name, so each thread keeps the last few. The reference stays valid until this thread asks for
// names of other locks.
struct NamedHolder {
    std::uint64_t lock_id = 0;  // LockImpl::id; 0: empty
    std::string app;
    std::string named;
};
const NamedHolder& named_holder(const LockImpl& impl, Session& session);

// Column 1 of every lock statement's row: pg_backend_pid() of the backend that ran it. Compared
// across statements it shows a transaction-mode pooler, at no extra round trip.
int statement_pid(const Result& res);

// Prepared statement names and texts of the lock statements, per mode. Each returns one row:
// the lock function's result, then pg_backend_pid().
struct Statements {
    const char* try_name;
    const char* try_sql;
    const char* lock_name;
    const char* lock_sql;
    const char* unlock_name;
    const char* unlock_sql;
    const char* xact_name;
    const char* xact_sql;
    // Fenced statements only: a new token for a lock this session already holds (see
    // run_lock_statement: a serialization failure after the grant).
    const char* token_name = nullptr;
    const char* token_sql = nullptr;
};
const Statements& statements(Mode mode) noexcept;
// The same statements that also set application_name, in the same round trip, from $2 (text):
// the lock statements set it only once the lock is granted, the unlock statement restores it,
// the transaction-level one sets it for the rest of the transaction only (set_config's is_local).
const Statements& named_statements(Mode mode) noexcept;
// The session's application_name as the server last reported it (no round trip).
std::string current_application_name(Session& session);
// The exclusive session-level statements with a fencing token (LockOptions::fencing): column 2
// is the token, taken from pglock_fence in the same statement only when the lock was granted.
// Parameters: the key, the application_name when `named`, then the name as bytea. The unlock and
// transaction-level entries are the plain ones (fencing refuses those).
const Statements& fenced_statements(bool named) noexcept;
inline const Statements& statements_of(const LockImpl& impl) noexcept {
    if (!impl.fence_name.empty()) return fenced_statements(impl.names_holder);
    return impl.names_holder ? named_statements(impl.options.mode) : statements(impl.options.mode);
}

}  // namespace pglock::detail
