// What the library does with a Session beyond its public API: interruptible statements whose
// interruption the caller must interpret (a lock grant can race a cancel), prepared statements.
#pragma once

#include <libpq-fe.h>

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "pglock/context.hpp"
#include "pglock/session.hpp"

namespace pglock::detail {

enum class Interrupt { none, stop, deadline };

// A non-owning callable reference: the send step of every statement, without the heap
// allocation a std::function of a capturing lambda costs on the lock hot path.
class SendRef {
public:
    template <class F>
    SendRef(F& f) noexcept  // NOLINT(google-explicit-constructor): used like a function parameter
        : object_(&f), call_([](void* o, PGconn* c) { return (*static_cast<F*>(o))(c); }) {}
    int operator()(PGconn* conn) const { return call_(object_, conn); }

private:
    void* object_;
    int (*call_)(void*, PGconn*);
};

// A bigint statement parameter in text form. A Lock makes its key's once (LockImpl::key_text):
// the conversion cost more than the rest of building a statement.
struct KeyText {
    explicit KeyText(std::int64_t key) noexcept;
    char text[24];
};

struct Attempt {
    Result result;               // the statement's result; empty when the connection broke
    Interrupt interrupt = Interrupt::none;  // why the wait was cut short (a cancel was sent)
};

// The bound of the statements nobody can stop: the unlock of Guard::release(), the unlock that
// undoes a cancelled grant, the rollback of ~Transaction, pg_is_in_recovery() on servers before
// 14. Past it the connection is closed, which makes the server drop the session's locks and roll
// back its transaction: a server that stopped answering costs the session, never a hang.
inline constexpr std::chrono::seconds kCleanupTimeout{5};

struct SessionOps {
    // While alive, a statement on `session` still running at `limit` is abandoned: the
    // connection is closed at once (no cancel request, no waiting for one) and the statement
    // fails with Error{connection_failed}.
    class CloseAfter {
    public:
        CloseAfter(Session& session, Clock::time_point limit) noexcept
            : session_(session), previous_(std::exchange(session.close_at_, limit)) {}
        ~CloseAfter() { session_.close_at_ = previous_; }
        CloseAfter(const CloseAfter&) = delete;
        CloseAfter& operator=(const CloseAfter&) = delete;

    private:
        Session& session_;
        std::optional<Clock::time_point> previous_;
    };

    // Sends with `send`, then waits for the result. A stop request or the deadline sends a cancel
    // request and waits (bounded) for the statement's outcome, which may still be a success.
    // Throws Error{canceled|deadline_exceeded} only when the context had ended before sending,
    // Error{connection_failed} when sending fails or the connection breaks with no interruption.
    static Attempt run(Session& session, SendRef send, const Context& ctx);

    // Turns an Attempt into a Result, throwing what the public exec() documents.
    static Result finish(Session& session, Attempt attempt);

    // Prepares `sql` as `name` on the session once; later calls are free. {owner} and {fence} in
    // `sql` become the session's owner() and fence_table().
    static void prepare(Session& session, const char* name, const char* sql, int nparams, const Oid* types,
                        const Context& ctx);
    static std::string with_session_names(std::string_view sql, const Session& session);

    // The marker of the client's own backend: the random value of pglock.owner that Pool set there
    // when it connected the session ("" for a session no pool connected).
    static void set_owner(Session& session, std::string owner);
    static const std::string& owner(const Session& session) noexcept;
    // The fence table of the session's fenced locks, quoted and schema-qualified, once resolved.
    static void set_fence_table(Session& session, std::string table);
    static const std::string& fence_table(const Session& session) noexcept;

    // The lock statements' form: one bigint parameter.
    static Attempt run_prepared(Session& session, const char* name, const KeyText& key, const Context& ctx);
    // The named lock statements' form: the bigint key and one text (nullptr: the key alone).
    static Attempt run_prepared(Session& session, const char* name, const KeyText& key, const char* text,
                                const Context& ctx);
    // The fenced lock statements' form: the key, then `text` and `text2`, each left out when nullptr.
    static Attempt run_prepared(Session& session, const char* name, const KeyText& key, const char* text,
                                const char* text2, const Context& ctx);

    // Connects; `attempt_timeout` bounds this attempt on its own (reported as connection_failed,
    // not as the caller's deadline). `overrides` win over the conninfo; the conninfo wins over
    // `defaults`.
    static Session connect(const std::string& conninfo, const Context& ctx, std::chrono::milliseconds attempt_timeout,
                           const Session::Overrides& overrides = {}, const Session::Overrides& defaults = {});

    // Closes the connection at once (the server ends whatever the backend was doing).
    static void close(Session& session) noexcept;

    // Before a pool lends the session again: when statements ran through exec() since the last
    // pg_advisory_unlock_all(), runs that (bounded) on the client's own backend only, and closes
    // the session if it fails or the backend is not its own.
    static void drop_advisory_locks(Session& session) noexcept;
    // The statements run so far took no session-level advisory lock, or a statement of the
    // library just dropped them all (pg_advisory_unlock_all in the unlock statement).
    static void took_no_advisory_lock(Session& session) noexcept;
};

// The SQLSTATE of a result, or "" when it has none.
std::string sqlstate_of(const PGresult* res);

}  // namespace pglock::detail
