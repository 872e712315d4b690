#include "pglock/lock.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <condition_variable>
#include <mutex>
#include <random>
#include <stdexcept>

#include "held.hpp"
#include "pglock/fence.hpp"
#include "pglock/sleep.hpp"
#include "pglock/sqlstate.hpp"
#include "pglock/key_collision.hpp"
#include "lock_impl.hpp"
#include "transaction_ops.hpp"
#include "session_ops.hpp"
#include "watcher.hpp"

namespace pglock {
namespace detail {

// Every statement below names pg_catalog's functions, operators and types only: it runs on the
// application's sessions, under whatever search_path the application, its role or its database
// set, and an unqualified name there is resolved in schemas other roles may create objects in
// (docs/security.md). The fence table is the application's own and is named by the schema
// found when the session first used it ({fence}, see fence_table_of()).
//
// Each session-level statement acts only on a backend that carries this connection's marker
// ({owner}: the random pglock.owner the pool set when it connected, SessionOps::owner): behind a
// transaction-mode pooler a statement can reach a backend that another client's session uses,
// and pg_advisory_lock there would be granted again (advisory locks are reentrant per session)
// while pg_advisory_unlock_all would drop the other client's locks. On a backend without the
// marker the lock and unlock functions do not run and the statement's first column is NULL,
// which the library reports as Errc::session_changed.
#define PGLOCK_MINE "pg_catalog.current_setting('pglock.owner', true) OPERATOR(pg_catalog.=) '{owner}'"
#define PGLOCK_PID "pg_catalog.pg_backend_pid()"
#define PGLOCK_SET_APP(is_local) "pg_catalog.set_config('application_name', $2::pg_catalog.text, " is_local ")"

// The unlock statements end with pg_advisory_unlock_all(): advisory locks are reentrant per
// session, so work done on the guard's session (Guard::session()) may have taken this key again,
// or other keys; pg_advisory_unlock() drops one level of one key. Dropping them all in the same
// statement (left to right: the key's own unlock, whose answer the release reports, comes first)
// gives the session back to the pool holding no advisory lock, at no extra round trip.
// The names change with the texts (`_own`): a session-mode pooler that keeps prepared statements
// across clients could otherwise hand us an older statement of the same name.
const Statements& statements(Mode mode) noexcept {
    static const Statements exclusive{
        "pglock_try_own",
        "SELECT CASE WHEN " PGLOCK_MINE " THEN pg_catalog.pg_try_advisory_lock($1::bigint) END, " PGLOCK_PID,
        "pglock_lock_own",
        "SELECT CASE WHEN " PGLOCK_MINE " THEN pg_catalog.pg_advisory_lock($1::bigint) IS NOT NULL END, " PGLOCK_PID,
        "pglock_unlock_all_own",
        "SELECT CASE WHEN " PGLOCK_MINE " THEN pg_catalog.pg_advisory_unlock($1::bigint) END, " PGLOCK_PID ", "
        "CASE WHEN " PGLOCK_MINE " THEN pg_catalog.pg_advisory_unlock_all() END",
        "pglock_xact",
        "SELECT pg_catalog.pg_try_advisory_xact_lock($1::bigint), " PGLOCK_PID,
    };
    static const Statements shared{
        "pglock_try_shared_own",
        "SELECT CASE WHEN " PGLOCK_MINE " THEN pg_catalog.pg_try_advisory_lock_shared($1::bigint) END, " PGLOCK_PID,
        "pglock_lock_shared_own",
        "SELECT CASE WHEN " PGLOCK_MINE " THEN pg_catalog.pg_advisory_lock_shared($1::bigint) IS NOT NULL END, " PGLOCK_PID,
        "pglock_unlock_shared_all_own",
        "SELECT CASE WHEN " PGLOCK_MINE " THEN pg_catalog.pg_advisory_unlock_shared($1::bigint) END, " PGLOCK_PID ", "
        "CASE WHEN " PGLOCK_MINE " THEN pg_catalog.pg_advisory_unlock_all() END",
        "pglock_xact_shared",
        "SELECT pg_catalog.pg_try_advisory_xact_lock_shared($1::bigint), " PGLOCK_PID,
    };
    return mode == Mode::shared ? shared : exclusive;
}

// CASE fixes the order: set_config runs only after the lock function returned true (try) or
// returned at all (the blocking one: void, never NULL), so a session shows the name only once
// it holds the lock. If a cancel turns the statement into an error after the grant, the
// statement's implicit transaction rolls set_config back, and undo_possible_grant's unlock
// restores the name anyway. The transaction-level statements need no marker: a pooler keeps a
// transaction on one backend, and the lock ends with it.
const Statements& named_statements(Mode mode) noexcept {
    static const Statements exclusive{
        "pglock_try_named_own",
        "SELECT CASE WHEN " PGLOCK_MINE " THEN CASE WHEN pg_catalog.pg_try_advisory_lock($1::bigint) "
        "THEN " PGLOCK_SET_APP("false") " IS NOT NULL ELSE false END END, " PGLOCK_PID,
        "pglock_lock_named_own",
        "SELECT CASE WHEN " PGLOCK_MINE " THEN CASE WHEN pg_catalog.pg_advisory_lock($1::bigint) IS NOT NULL "
        "THEN " PGLOCK_SET_APP("false") " IS NOT NULL END END, " PGLOCK_PID,
        "pglock_unlock_named_all_own",
        "SELECT CASE WHEN " PGLOCK_MINE " THEN pg_catalog.pg_advisory_unlock($1::bigint) END, " PGLOCK_PID ", "
        "CASE WHEN " PGLOCK_MINE " THEN " PGLOCK_SET_APP("false") " END, "
        "CASE WHEN " PGLOCK_MINE " THEN pg_catalog.pg_advisory_unlock_all() END",
        "pglock_xact_named",
        "SELECT CASE WHEN pg_catalog.pg_try_advisory_xact_lock($1::bigint) "
        "THEN " PGLOCK_SET_APP("true") " IS NOT NULL ELSE false END, " PGLOCK_PID,
    };
    static const Statements shared{
        "pglock_try_shared_named_own",
        "SELECT CASE WHEN " PGLOCK_MINE " THEN CASE WHEN pg_catalog.pg_try_advisory_lock_shared($1::bigint) "
        "THEN " PGLOCK_SET_APP("false") " IS NOT NULL ELSE false END END, " PGLOCK_PID,
        "pglock_lock_shared_named_own",
        "SELECT CASE WHEN " PGLOCK_MINE " THEN CASE WHEN pg_catalog.pg_advisory_lock_shared($1::bigint) IS NOT NULL "
        "THEN " PGLOCK_SET_APP("false") " IS NOT NULL END END, " PGLOCK_PID,
        "pglock_unlock_shared_named_all_own",
        "SELECT CASE WHEN " PGLOCK_MINE " THEN pg_catalog.pg_advisory_unlock_shared($1::bigint) END, " PGLOCK_PID ", "
        "CASE WHEN " PGLOCK_MINE " THEN " PGLOCK_SET_APP("false") " END, "
        "CASE WHEN " PGLOCK_MINE " THEN pg_catalog.pg_advisory_unlock_all() END",
        "pglock_xact_shared_named",
        "SELECT CASE WHEN pg_catalog.pg_try_advisory_xact_lock_shared($1::bigint) "
        "THEN " PGLOCK_SET_APP("true") " IS NOT NULL ELSE false END, " PGLOCK_PID,
    };
    return mode == Mode::shared ? shared : exclusive;
}

// One statement, one round trip: the CTE `l` takes the lock (volatile, so it is evaluated once
// and not inlined), `f` bumps the key's row only when `l` says granted, and its RETURNING gives
// the token. The token commits with the statement's implicit transaction, before the result
// reaches the client; an error after the grant rolls it back (the caller then undoes the
// session-level grant, which a rollback does not). The last column makes that commit durable
// even under synchronous_commit = off, for this one transaction: a token handed out and then
// lost in a crash would be handed out again after the restart.
#define PGLOCK_FENCE_CTE(lock_expr, name_param)                                                            \
    "WITH l AS (SELECT CASE WHEN " PGLOCK_MINE " THEN " lock_expr " END AS g), "                          \
    "f AS (INSERT INTO {fence} AS t (key, token, name) SELECT $1::bigint, 1, " name_param "::pg_catalog.bytea " \
    "FROM l WHERE l.g ON CONFLICT (key) DO UPDATE SET token = t.token OPERATOR(pg_catalog.+) 1, "          \
    "name = EXCLUDED.name, updated_at = pg_catalog.now() RETURNING t.token) "
#define PGLOCK_FENCE_DURABLE                                                                                \
    "CASE WHEN pg_catalog.current_setting('synchronous_commit') OPERATOR(pg_catalog.=) 'off' "              \
    "THEN pg_catalog.set_config('synchronous_commit', 'on', true) END"
// The token alone, for a session that holds the lock already (after a serialization failure; see
// run_lock_statement). It bumps the row only when the session's pg_locks row says so: this path
// is rare, so the cost of reading pg_locks is paid there only, and a token is never handed out
// without the lock. Column 0 says whether the lock is held.
#define PGLOCK_FENCE_TOKEN(name_param)                                                                      \
    "WITH h AS (SELECT EXISTS (SELECT 1 FROM pg_catalog.pg_locks k "                                       \
    "WHERE k.locktype OPERATOR(pg_catalog.=) 'advisory' AND k.objsubid OPERATOR(pg_catalog.=) 1 "          \
    "AND k.pid OPERATOR(pg_catalog.=) " PGLOCK_PID " AND k.granted "                                        \
    "AND k.mode OPERATOR(pg_catalog.=) 'ExclusiveLock' "                                                   \
    "AND ((k.classid::bigint OPERATOR(pg_catalog.<<) 32) OPERATOR(pg_catalog.|) k.objid::bigint) "         \
    "OPERATOR(pg_catalog.=) $1::bigint) AND " PGLOCK_MINE " AS g), "                                        \
    "f AS (INSERT INTO {fence} AS t (key, token, name) SELECT $1::bigint, 1, " name_param "::pg_catalog.bytea " \
    "FROM h WHERE h.g ON CONFLICT (key) DO UPDATE SET token = t.token OPERATOR(pg_catalog.+) 1, "          \
    "name = EXCLUDED.name, updated_at = pg_catalog.now() RETURNING t.token) "

const Statements& fenced_statements(bool named) noexcept {
    static const Statements plain{
        "pglock_try_fenced_own",
        PGLOCK_FENCE_CTE("pg_catalog.pg_try_advisory_lock($1::bigint)", "$2")
        "SELECT l.g, " PGLOCK_PID ", (SELECT f.token FROM f), " PGLOCK_FENCE_DURABLE " FROM l",
        "pglock_lock_fenced_own",
        PGLOCK_FENCE_CTE("pg_catalog.pg_advisory_lock($1::bigint) IS NOT NULL", "$2")
        "SELECT l.g, " PGLOCK_PID ", (SELECT f.token FROM f), " PGLOCK_FENCE_DURABLE " FROM l",
        statements(Mode::exclusive).unlock_name, statements(Mode::exclusive).unlock_sql,
        statements(Mode::exclusive).xact_name, statements(Mode::exclusive).xact_sql,
        "pglock_token_fenced_own",
        PGLOCK_FENCE_TOKEN("$2")
        "SELECT h.g, " PGLOCK_PID ", (SELECT f.token FROM f), " PGLOCK_FENCE_DURABLE " FROM h",
    };
    static const Statements with_name{
        "pglock_try_named_fenced_own",
        PGLOCK_FENCE_CTE("pg_catalog.pg_try_advisory_lock($1::bigint)", "$3")
        "SELECT CASE WHEN l.g THEN " PGLOCK_SET_APP("false") " IS NOT NULL ELSE l.g END, "
        PGLOCK_PID ", (SELECT f.token FROM f), " PGLOCK_FENCE_DURABLE " FROM l",
        "pglock_lock_named_fenced_own",
        PGLOCK_FENCE_CTE("pg_catalog.pg_advisory_lock($1::bigint) IS NOT NULL", "$3")
        "SELECT CASE WHEN l.g THEN " PGLOCK_SET_APP("false") " IS NOT NULL END, "
        PGLOCK_PID ", (SELECT f.token FROM f), " PGLOCK_FENCE_DURABLE " FROM l",
        named_statements(Mode::exclusive).unlock_name, named_statements(Mode::exclusive).unlock_sql,
        named_statements(Mode::exclusive).xact_name, named_statements(Mode::exclusive).xact_sql,
        "pglock_token_named_fenced_own",
        PGLOCK_FENCE_TOKEN("$3")
        "SELECT CASE WHEN h.g THEN " PGLOCK_SET_APP("false") " IS NOT NULL ELSE false END, "
        PGLOCK_PID ", (SELECT f.token FROM f), " PGLOCK_FENCE_DURABLE " FROM h",
    };
    return named ? with_name : plain;
}
#undef PGLOCK_FENCE_CTE
#undef PGLOCK_FENCE_DURABLE
#undef PGLOCK_FENCE_TOKEN
#undef PGLOCK_SET_APP
#undef PGLOCK_PID
#undef PGLOCK_MINE

std::string current_application_name(Session& session) {
    // Reported by the server on every change (GUC_REPORT): known here without a round trip.
    const char* value = PQparameterStatus(session.native_handle(), "application_name");
    return value ? value : "";
}

const NamedHolder& named_holder(const LockImpl& impl, Session& session) {
    // A handful per thread: a thread taking a few locks in turn keeps all of theirs.
    thread_local std::array<NamedHolder, 4> cache;
    thread_local std::size_t next = 0;
    const char* app = PQparameterStatus(session.native_handle(), "application_name");
    if (!app) app = "";
    for (const auto& entry : cache) {
        if (entry.lock_id == impl.id && entry.app == app) return entry;
    }
    NamedHolder& entry = cache[next++ % cache.size()];
    entry.lock_id = 0;  // until both strings are made: a bad_alloc leaves no half entry behind
    entry.app = app;
    entry.named = holder_identity::application_name(impl.application_name_format, entry.app, impl.name);
    entry.lock_id = impl.id;
    return entry;
}

int statement_pid(const Result& res) { return static_cast<int>(res.get_int64(0, 1)); }

void LockImpl::log(LogLevel level, std::string_view message, std::initializer_list<LogAttr> extra) const noexcept {
    try {
        std::vector<LogAttr> attrs;
        attrs.reserve(1 + extra.size());
        attrs.push_back({"name", name});
        attrs.insert(attrs.end(), extra.begin(), extra.end());
        options.logger->log(level, message, attrs);
    } catch (...) {
        // Logging must never turn a lock operation into a failure.
    }
}

void LockImpl::count(Outcome outcome) const noexcept {
    if (!metrics) return;
    try {
        metrics->count_acquire(outcome);
    } catch (...) {
    }
}

void LockImpl::observe_hold(double seconds) const noexcept {
    if (!metrics) return;
    try {
        metrics->observe_hold(seconds);
    } catch (...) {
    }
}

void LockImpl::claim(int pid) const noexcept {
    if (!metrics) return;
    try {
        metrics->held(key, pid);
    } catch (...) {
    }
}

void LockImpl::unclaim(int pid) const noexcept {
    if (!metrics) return;
    try {
        metrics->unheld(pid);
    } catch (...) {
    }
}

void LockImpl::count_lost() const noexcept {
    if (!metrics) return;
    try {
        metrics->count_lost();
    } catch (...) {
    }
}

void LockImpl::session_changed(int lock_pid, int pid) const noexcept {
    if (metrics) {
        try {
            metrics->count_session_changed();
        } catch (...) {
        }
    }
    // Pids are unknown (0) when a statement failed because the backend changed under it; the
    // acquire failure logs its own warning then.
    if (lock_pid != 0 && logs(LogLevel::warn)) {
        log(LogLevel::warn, "lock: session changed", {{"lock_pid", std::to_string(lock_pid)}, {"pid", std::to_string(pid)}});
    }
}

}  // namespace detail

namespace {

using detail::Interrupt;
using Impl = detail::LockImpl;

Error interrupted(Interrupt why) {
    return why == Interrupt::stop
               ? Error(Errc::canceled, "canceled while taking the lock; the server-side wait was cancelled")
               : Error(Errc::deadline_exceeded,
                       "deadline exceeded while taking the lock; the server-side wait was cancelled");
}

// Records a failure the way the Go package does (outcome error, warn "lock: acquire failed"),
// or a cancellation (debug "lock: acquire canceled", and no outcome: the Go package counts none
// for context errors, and a stop or deadline is the caller's choice, not the lock failing; an
// `error` series must mean the database or the network), and rethrows it typed.
[[noreturn]] void fail(const detail::LockImpl& impl, const Error& e) {
    const bool interruption = e.code() == Errc::canceled || e.code() == Errc::deadline_exceeded;
    if (interruption) {
        if (impl.logs(LogLevel::debug)) impl.log(LogLevel::debug, "lock: acquire canceled", {{"err", e.what()}});
        throw e;
    }
    impl.count(Outcome::error);
    if (impl.logs(LogLevel::warn)) impl.log(LogLevel::warn, "lock: acquire failed", {{"err", e.what()}});
    if (e.code() == Errc::on_standby || e.code() == Errc::acquire_failed || e.code() == Errc::session_changed) throw e;
    throw Error(Errc::acquire_failed, e.what(), e.sqlstate());  // keeps the cause: "connection_failed: ..."
}

void refuse_standby(const detail::LockImpl& impl, Session& session) {
    if (!impl.options.allow_standby && session.in_recovery()) {
        throw Error(Errc::on_standby,
                    "the server is a standby in recovery: advisory locks taken there are local to it and protect nothing");
    }
}

enum class Scope { session, transaction };

// After a cancelled lock statement nobody can tell from its result alone whether the lock was
// granted: the grant can win the race against the cancel, and the cancel can even land after the
// grant and turn the statement into an error while the session keeps the lock. So unlock
// unconditionally (false just means it was not held). The first statement after a cancel may
// itself be hit by that late cancel (57014); one retry then gets the true answer. A session
// whose state stays unknown is closed, which drops its locks.
// `restore`: the application_name to put back (nullptr when the lock does not name its holder).
void undo_possible_grant(const detail::LockImpl& impl, Session& session, const char* restore) noexcept {
    const auto& st = detail::statements_of(impl);
    // Nobody can stop this (the caller's stop already fired): both attempts share one bound, past
    // which the session is closed.
    const auto limit = Clock::now() + detail::kCleanupTimeout;
    for (int attempt = 0; attempt < 2 && session.ok(); ++attempt) {
        try {
            const detail::SessionOps::CloseAfter bound(session, limit);
            const Context none{};
            detail::SessionOps::prepare(session, st.unlock_name, st.unlock_sql, restore ? 2 : 1, nullptr, none);
            const Result res = detail::SessionOps::finish(
                session, detail::SessionOps::run_prepared(session, st.unlock_name, impl.key_text, restore, none));
            if (res.is_null(0, 0)) break;  // not this client's backend: nothing was unlocked there
            return;  // unlocked, or was not held: either way the session holds no lock of ours
        } catch (const Error& e) {
            if (e.sqlstate() != sqlstate::query_canceled) break;  // anything but the late cancel: give up on the session
        } catch (...) {
            break;
        }
    }
    detail::SessionOps::close(session);
}

// What a lock statement reported: granted (always true for the waiting form) and the backend
// that ran it.
struct Granted {
    bool granted = false;
    int pid = 0;
    std::optional<std::int64_t> token;  // the fencing token, when fenced and granted
};

// 42P01 from a fenced lock statement: the table was never created (or search_path misses it).
Error missing_fence_table(const Error& cause) {
    return Error(Errc::acquire_failed,
                 "fencing is on but the table pglock_fence is not found through search_path: create it once per "
                 "database with `pglock fence init` (or pglock::fence::init); no lock was taken. Server said: " +
                     cause.detail().substr(0, cause.detail().find('\n')),
                 cause.sqlstate());
}

// 26000 on a statement this session prepared: the server that runs it has never seen the PREPARE,
// so consecutive statements of this connection reach different backends.
Error vanished_statement(const char* name, const Error& cause) {
    return Error(Errc::session_changed,
                 std::string("prepared statement ") + name +
                     " vanished between two statements of one connection: a transaction-mode pooler (such as "
                     "PgBouncer with pool_mode=transaction) hands this connection's statements to different server "
                     "backends, and session-level advisory locks cannot work through it; connect to PostgreSQL "
                     "directly or use pool_mode=session (PoolOptions::refuse_transaction_pooler checks for this "
                     "when connecting). Server said: " + cause.detail(),
                 cause.sqlstate());
}

// A lock statement found a backend without this connection's marker (PoolOptions): another
// client's, reached through a pooler. Nothing was locked there.
Error not_own_backend(int pid) {
    return Error(Errc::session_changed,
                 "the lock statement reached backend " + std::to_string(pid) +
                     ", which is not this connection's own (it does not carry the marker this connection set when "
                     "it connected): a transaction-mode pooler hands this connection's statements to server "
                     "connections that other clients use (PgBouncer with pool_mode=transaction or statement), and "
                     "session-level advisory "
                     "locks cannot work through it; nothing was locked. Connect to PostgreSQL directly or use "
                     "pool_mode=session");
}

// A fenced lock statement's result. Under repeatable read or serializable (a session's
// default_transaction_isolation, set by a server, role or database), a waiting statement took its
// snapshot before it queued: when the previous holder's token committed after that, the row update
// fails with 40001 although the lock was granted (only a granted statement writes the row, and a
// session-level grant outlives the statement's rollback). Running the lock statement again would
// give up the place in the queue, and with several waiters each retry would be stale again.
// Instead a statement that only takes the token runs on the session that now holds the lock: its
// snapshot is newer than every earlier holder's commit (each committed before letting go), so the
// token is still greater than all before it. It checks pg_locks that the lock is held (this path
// is rare) and takes no token otherwise. Serializable can fail again on a conflict with a reader
// of the table: a few attempts, then the error. Read committed never gets here: no extra cost.
Result finish_fenced(const detail::LockImpl& impl, Session& session, detail::Attempt attempt, const Context& ctx,
                     const char* app, const char* fence) {
    try {
        return detail::SessionOps::finish(session, std::move(attempt));
    } catch (const Error& e) {
        if (e.sqlstate() != sqlstate::serialization_failure) throw;
    }
    constexpr int kAttempts = 5;
    const auto& st = detail::statements_of(impl);
    for (int attempt_no = 1;; ++attempt_no) {
        try {
            detail::SessionOps::prepare(session, st.token_name, st.token_sql, app ? 3 : 2, nullptr, ctx);
            Result res = detail::SessionOps::finish(
                session, detail::SessionOps::run_prepared(session, st.token_name, impl.key_text, app, fence, ctx));
            if (!res.get_bool(0, 0)) {
                throw Error(Errc::acquire_failed,
                            "the fenced lock statement failed with a serialization failure (40001) and the session "
                            "does not hold the lock: no token was taken");
            }
            return res;
        } catch (const Error& e) {
            if (e.sqlstate() != sqlstate::serialization_failure || attempt_no == kAttempts) throw;
        }
    }
}

// One lock statement to run: the prepared statement, how its answer reads, its scope and, with
// holder identity, the application_names to set and to put back.
struct LockStatement {
    const char* name;     // the prepared statement's name (detail::statements_of)
    const char* sql;
    bool returns_bool;    // pg_try_*: false is "contended"; pg_advisory_lock waits and only grants
    Scope scope;
    const char* app;      // the application_name to set once granted, or nullptr
    const char* restore;  // the session's application_name before, put back on an undone grant
};

LockStatement try_statement(const detail::LockImpl& impl, const char* app, const char* restore) {
    const auto& st = detail::statements_of(impl);
    return {st.try_name, st.try_sql, true, Scope::session, app, restore};
}

// Runs a lock statement. On an interrupted wait, a session-level grant that won the race against
// the cancel is undone before the interruption is reported, so nothing stays granted behind the
// caller's back. (A transaction-level one goes with the transaction the caller must end.)
Granted run_lock_statement(const detail::LockImpl& impl, Session& session, const LockStatement& statement,
                           const Context& ctx) {
    const auto& [name, sql, returns_bool, scope, app, restore] = statement;
    // Fencing refuses transaction-level locks, so only session-level statements carry the name.
    const char* fence = scope == Scope::session && !impl.fence_name.empty() ? impl.fence_name.c_str() : nullptr;
    if (fence && detail::SessionOps::fence_table(session).empty())
        detail::SessionOps::set_fence_table(session, fence::table_for_writing(session, ctx));
    try {
        detail::SessionOps::prepare(session, name, sql, 1 + (app ? 1 : 0) + (fence ? 1 : 0), nullptr, ctx);
    } catch (const Error& e) {
        if (fence && e.sqlstate() == sqlstate::undefined_table) throw missing_fence_table(e);  // nothing ran
        throw;
    }
    detail::Attempt attempt = detail::SessionOps::run_prepared(session, name, impl.key_text, app, fence, ctx);
    if (attempt.interrupt != Interrupt::none) {
        if (scope == Scope::session) undo_possible_grant(impl, session, restore);
        throw interrupted(attempt.interrupt);
    }
    try {
        Result res = fence ? finish_fenced(impl, session, std::move(attempt), ctx, app, fence)
                           : detail::SessionOps::finish(session, std::move(attempt));
        if (scope == Scope::session && res.is_null(0, 0)) throw not_own_backend(detail::statement_pid(res));
        Granted got{!returns_bool || res.get_bool(0, 0), detail::statement_pid(res), std::nullopt};
        if (fence && got.granted) {
            if (res.is_null(0, 2)) {
                throw Error(Errc::acquire_failed,
                            "the lock was granted but pglock_fence gave no token (a trigger or rule on the table?)");
            }
            got.token = res.get_int64(0, 2);
        }
        return got;
    } catch (const Error& e) {
        if (e.sqlstate() == sqlstate::invalid_sql_statement_name) throw vanished_statement(name, e);
        // A fenced statement can fail after the grant: the token's update failed (bigint overflow,
        // permissions, a trigger) or the table went away since PREPARE. The rollback takes back
        // the token and application_name but not a session-level lock: unlock (or close).
        if (fence) undo_possible_grant(impl, session, restore);
        if (fence && e.sqlstate() == sqlstate::undefined_table) throw missing_fence_table(e);
        throw;
    }
}

// The pause before the next try of AcquireStrategy::poll; `ceiling` doubles up to the cap.
Clock::duration next_pause(std::chrono::milliseconds& ceiling, const PollBackoff& backoff) {
    thread_local std::minstd_rand rng{std::random_device{}()};
    const auto cap = std::max(backoff.max, std::chrono::milliseconds(1));
    const auto d = std::clamp(ceiling, std::chrono::milliseconds(1), cap);
    ceiling = std::min(cap, d * 2);
    std::uniform_int_distribution<long long> jitter(d.count() * 500, d.count() * 1000);  // microseconds
    return std::chrono::microseconds(jitter(rng));
}

// Sleeps until `until`, or until the context's stop or deadline (then throws as a cancelled wait).
// No statement runs meanwhile: the pooled session stays idle, outside any transaction.
void pause(Clock::time_point until, const Context& ctx) {
    if (ctx.deadline && *ctx.deadline <= until) until = *ctx.deadline;
    if (!sleep_until(until, ctx.stop)) throw Error(Errc::canceled, "canceled while polling for the lock");
    if (ctx.deadline && Clock::now() >= *ctx.deadline) {
        throw Error(Errc::deadline_exceeded, "deadline exceeded while polling for the lock");
    }
}

std::optional<Guard> take(const std::shared_ptr<Impl>& impl, bool wait, const Context& ctx);

}  // namespace

Lock::Lock(Pool* pool, std::string name, LockOptions options) {
    if (!pool) throw Error(Errc::nil_db, "a Lock needs a pool");
    if (name.empty()) throw Error(Errc::empty_name, "a Lock needs a non-empty name (empty names would all collide)");
    if (options.fencing && options.mode != Mode::exclusive) {
        // Shared holders run side by side: a token cannot tell the current one from a stale one.
        throw std::invalid_argument("fencing tokens need an exclusive lock (LockOptions::mode = Mode::exclusive)");
    }
    if (pool->empty()) throw Error(Errc::nil_db, "a Lock needs a pool (this one was moved from)");
    impl_ = std::make_shared<detail::LockImpl>();
    static std::atomic<std::uint64_t> next_id{1};
    impl_->id = next_id.fetch_add(1, std::memory_order_relaxed);
    impl_->pool.emplace(pool->share());
    impl_->key = key_of(name);
    impl_->key_text = detail::KeyText(impl_->key);
    if (options.refuse_key_collision) KeyRegistry::process().claim(name, impl_->key);
    if (options.fencing) impl_->fence_name = fence::bytea_hex(name);
    impl_->name = std::move(name);
    impl_->options = std::move(options);
    impl_->names_holder = pool->options().show_in_application_name && impl_->options.show_in_application_name;
    if (impl_->names_holder) {
        impl_->application_name_format = impl_->options.application_name_format.empty()
                                              ? pool->options().application_name_format
                                              : impl_->options.application_name_format;
    }
    if (impl_->options.metrics) impl_->metrics = impl_->options.metrics->register_lock(impl_->name);
}

Lock::Lock(Lock&&) noexcept = default;
Lock& Lock::operator=(Lock&&) noexcept = default;
Lock::~Lock() = default;

const std::string& Lock::name() const noexcept { return impl_->name; }
std::int64_t Lock::key() const noexcept { return impl_->key; }
Mode Lock::mode() const noexcept { return impl_->options.mode; }

namespace {

// AcquireStrategy::poll: tries on one pooled session until granted; between tries the session
// is idle, so it holds no snapshot and pins no xmin.
Granted poll_until_granted(const detail::LockImpl& impl, Session& session, const Context& ctx, const char* app,
                           const char* restore) {
    std::chrono::milliseconds ceiling = impl.options.poll.initial;
    for (;;) {
        Granted g = run_lock_statement(impl, session, try_statement(impl, app, restore), ctx);
        if (g.granted) return g;
        pause(Clock::now() + next_pause(ceiling, impl.options.poll), ctx);
    }
}

std::optional<Guard> take(const std::shared_ptr<Impl>& impl, bool wait, const Context& ctx) {
    PooledSession session;
    Granted got;
    const detail::NamedHolder* names = nullptr;  // with holder identity (LockImpl::names_holder)
    // A session that sat idle in the pool comes without the pool's liveness poll (a system call
    // per pair): the lock statement is the check. On a session whose backend is gone it fails
    // and nothing of it ran (a backend that dies mid-statement takes its locks with it, and one
    // cut off only from us still holds its lock, so the next try finds it taken, as it should):
    // that session is closed and the lock statement runs again on another. A new connection
    // that fails is an error. Every idle session may be dead (a server restart): up to max_size.
    const std::size_t dead_limit = impl->pool->options().max_size;
    for (std::size_t dead = 0;; ++dead) {
        bool reused = false;
        try {
            session = detail::PoolLend::lend_unchecked(*impl->pool, ctx, reused);
            refuse_standby(*impl, *session);
            const auto& st = detail::statements_of(*impl);
            if (impl->names_holder) names = &detail::named_holder(*impl, *session);
            const char* app = names ? names->named.c_str() : nullptr;
            const char* before = names ? names->app.c_str() : nullptr;
            if (!wait) got = run_lock_statement(*impl, *session, try_statement(*impl, app, before), ctx);
            else if (impl->options.strategy == AcquireStrategy::poll) got = poll_until_granted(*impl, *session, ctx, app, before);
            else got = run_lock_statement(*impl, *session, {st.lock_name, st.lock_sql, false, Scope::session, app, before}, ctx);
            break;
        } catch (const Error& e) {
            const bool interruption = e.code() == Errc::canceled || e.code() == Errc::deadline_exceeded;
            if (reused && session && !session->ok() && !interruption && dead < dead_limit) {
                session.discard();
                continue;
            }
            if (e.code() == Errc::session_changed) {
                session.discard();  // its record of prepared statements is wrong for whatever backend comes next
                impl->session_changed(0, 0);
            }
            fail(*impl, e);
        } catch (const std::exception& e) {
            fail(*impl, Error(Errc::acquire_failed, e.what()));
        }
    }
    if (!got.granted) {
        impl->count(Outcome::contended);
        if (impl->logs(LogLevel::debug)) impl->log(LogLevel::debug, "lock: contended");
        return std::nullopt;
    }
    // Granted: from here on an exception must not leave the lock on a pooled session. Until the
    // Held owns the session, undo the grant here; after that, ~Held releases.
    std::shared_ptr<detail::Held> held;
    try {
        held = std::make_shared<detail::Held>(impl, std::move(session), got.pid, names ? names->app : std::string(),
                                              got.token);
        detail::Watcher::instance().watch_later(held);
    } catch (...) {
        if (!held && session) undo_possible_grant(*impl, *session, names ? names->app.c_str() : nullptr);
        throw;
    }
    impl->count(Outcome::acquired);
    if (impl->logs(LogLevel::debug)) impl->log(LogLevel::debug, "lock: acquired");
    return Guard(std::move(held));
}

}  // namespace

std::optional<Guard> Lock::try_acquire(const Context& ctx) { return take(impl_, false, ctx); }

Guard Lock::acquire(const Context& ctx) { return std::move(*take(impl_, true, ctx)); }

bool Lock::try_acquire_xact(Transaction* tx, const Context& ctx) {
    if (impl_->options.fencing) {
        throw std::invalid_argument("fencing tokens need a session-level lock: try_acquire or acquire, not try_acquire_xact");
    }
    bool granted = false;
    try {
        if (!tx || !tx->active()) throw Error(Errc::acquire_failed, "try_acquire_xact needs an open transaction");
        refuse_standby(*impl_, tx->session());
        const auto& st = detail::statements_of(*impl_);
        // set_config(..., true): the name goes with the lock at commit or rollback, no statement
        // of ours needed. {app} is the name the transaction shows now.
        std::string named;
        if (impl_->names_holder) {
            named = holder_identity::application_name(impl_->application_name_format,
                                                      detail::current_application_name(tx->session()), impl_->name);
        }
        const char* app = impl_->names_holder ? named.c_str() : nullptr;
        const Granted got =
            run_lock_statement(*impl_, tx->session(), {st.xact_name, st.xact_sql, true, Scope::transaction, app, nullptr}, ctx);
        granted = got.granted;
        // The process holds it until the transaction ends: lock_held_info says so, or a monitor
        // joining the claims with the server would take it for a leak of this process.
        if (granted) {
            impl_->claim(got.pid);
            detail::TransactionOps::at_end(*tx, [impl = impl_, pid = got.pid] { impl->unclaim(pid); });
        }
    } catch (const Error& e) {
        fail(*impl_, e);
    } catch (const std::exception& e) {
        fail(*impl_, Error(Errc::acquire_failed, e.what()));
    }
    impl_->count(granted ? Outcome::acquired : Outcome::contended);
    if (impl_->logs(LogLevel::debug)) impl_->log(LogLevel::debug, granted ? "lock: acquired" : "lock: contended");
    return granted;
}

bool Lock::is_held(const Context& ctx) {
    std::optional<Guard> guard = try_acquire(ctx);
    if (!guard) return true;
    guard->release();
    return false;
}

std::vector<int> Lock::holders(const Context& ctx) {
    PooledSession session = impl_->pool->acquire(ctx);
    const LockTag tag = tag_of(impl_->key);
    Result res = session->exec(
        "SELECT l.pid FROM pg_catalog.pg_locks l "
        "WHERE l.locktype OPERATOR(pg_catalog.=) 'advisory' AND l.objsubid OPERATOR(pg_catalog.=) 1 "
        "AND l.classid OPERATOR(pg_catalog.=) $1 AND l.objid OPERATOR(pg_catalog.=) $2 AND l.granted "
        "AND l.database OPERATOR(pg_catalog.=) (SELECT d.oid FROM pg_catalog.pg_database d "
        "WHERE d.datname OPERATOR(pg_catalog.=) pg_catalog.current_database()) ORDER BY l.pid",
        {Param(tag.classid), Param(tag.objid)}, ctx);
    detail::SessionOps::took_no_advisory_lock(*session);  // a read: nothing to drop on the way back
    std::vector<int> pids;
    pids.reserve(static_cast<std::size_t>(res.rows()));
    for (int row = 0; row < res.rows(); ++row) pids.push_back(static_cast<int>(res.get_int64(row, 0)));
    return pids;
}

bool Lock::run_once(const Context& ctx, const std::function<void(Guard&)>& fn) {
    std::optional<Guard> guard = try_acquire(ctx);
    if (!guard) return false;
    fn(*guard);  // the guard's destructor releases on every path, exceptions included
    return true;
}

void Lock::run_blocking(const Context& ctx, const std::function<void(Guard&)>& fn) {
    Guard guard = acquire(ctx);
    fn(guard);
}

bool run_once(Pool& pool, std::string name, const Context& ctx, const std::function<void(Guard&)>& fn,
              LockOptions options) {
    return Lock(pool, std::move(name), std::move(options)).run_once(ctx, fn);
}

void run_blocking(Pool& pool, std::string name, const Context& ctx, const std::function<void(Guard&)>& fn,
                  LockOptions options) {
    Lock(pool, std::move(name), std::move(options)).run_blocking(ctx, fn);
}

}  // namespace pglock
