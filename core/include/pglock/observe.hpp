// Optional observability: a logger and a metrics sink. With neither set, a lock does no
// formatting and no bookkeeping for them.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>

namespace pglock {

enum class LogLevel { debug, info, warn, error };

struct LogAttr {
    std::string_view key;
    std::string value;
};

// Messages are the Go package's: debug "lock: acquired", "lock: contended",
// "lock: released" (attr held_ms), warn "lock: acquire failed" (attr err); every event carries
// attr "name". Beyond the seed: warn "lock: release failed", warn "lock: lost",
// debug "lock: acquire canceled", warn "lock: session changed" (attrs lock_pid, pid: the lock's
// statements ran on different backends, i.e. behind a transaction-mode pooler).
class Logger {
public:
    virtual ~Logger() = default;
    virtual bool enabled(LogLevel level) const noexcept { (void)level; return true; }
    virtual void log(LogLevel level, std::string_view message, std::span<const LogAttr> attrs) = 0;
};

// Writes slog-style text lines to stderr: `level=DEBUG msg="lock: acquired" name=...`.
std::shared_ptr<Logger> make_stderr_logger(LogLevel min_level = LogLevel::debug);

enum class Outcome { acquired, contended, error };
std::string_view outcome_string(Outcome outcome) noexcept;

// The histogram buckets of lock_hold_duration_seconds, in seconds (1 ms to 10 min).
inline constexpr double hold_buckets[] = {0.001, 0.005, 0.025, 0.1, 0.5, 1, 5, 30, 120, 600};

// The series of one lock name: lock_acquires_total{name,outcome} and
// lock_hold_duration_seconds{name}. Implementations must be thread-safe.
class LockMetrics {
public:
    virtual ~LockMetrics() = default;
    virtual void count_acquire(Outcome outcome) = 0;
    virtual void observe_hold(double seconds) = 0;
    // lock_session_changes_total{name}: the lock's statements ran on different server backends
    // (Errc::session_changed). Not pure, so sinks written before it still compile.
    virtual void count_session_changed() {}
    // lock_held_info{name,key,pid} = 1: what this process believes it holds. A guard of this lock
    // holds it on backend `pid` (pg_backend_pid() of the lock statement) from the grant until its
    // release, or until it is found lost. One call per guard: a level taken again on the guard's
    // session behind its back is not the guard's, and the guard's unlock drops it anyway. A
    // transaction-level grant (try_acquire_xact) calls it too, and unheld() when the Transaction ends.
    virtual void held(std::int64_t key, int pid) { (void)key; (void)pid; }
    virtual void unheld(int pid) { (void)pid; }
    // lock_lost_total{name}: a guard of this lock found its session dead (Guard::lost()).
    virtual void count_lost() {}
};

// Where locks register their series. Registering a name that is already registered (and whose
// LockMetrics is still alive) throws std::invalid_argument: wire each name to one Lock.
class Metrics {
public:
    virtual ~Metrics() = default;
    virtual std::unique_ptr<LockMetrics> register_lock(std::string_view name) = 0;
};

}  // namespace pglock
