#include "pglock/transaction.hpp"

#include <utility>

#include "pglock/error.hpp"
#include "transaction_ops.hpp"
#include "session_ops.hpp"

namespace pglock {

Transaction::Transaction(Pool& pool, const Context& ctx) : Transaction(pool.acquire(ctx), ctx) {}

Transaction::Transaction(PooledSession session, const Context& ctx) : session_(std::move(session)) {
    if (!session_) throw Error(Errc::connection_failed, "a transaction needs a session");
    session_->exec("BEGIN", {}, ctx);
    active_ = true;
}

Transaction::~Transaction() {
    if (!active_ || !session_) return;
    active_ = false;
    try {
        // Nobody can stop a destructor: bounded, and past the bound the connection is closed
        // (the server rolls back).
        const detail::SessionOps::CloseAfter limit(*session_, Clock::now() + detail::kCleanupTimeout);
        session_->exec("ROLLBACK");
    } catch (...) {
        session_.discard();  // a session we could not roll back must not be reused
    }
    ended();
}

void Transaction::ended() noexcept {
    // Whether the statement worked or the session was discarded, the server no longer holds the
    // transaction's locks.
    for (auto& f : std::exchange(at_end_, {})) f();
}

void Transaction::commit(const Context& ctx) { finish("COMMIT", ctx); }
void Transaction::rollback(const Context& ctx) { finish("ROLLBACK", ctx); }

void Transaction::finish(const char* sql, const Context& ctx) {
    if (!active_) throw Error(Errc::query_failed, "the transaction has already ended");
    active_ = false;
    try {
        session_->exec(sql, {}, ctx);
    } catch (...) {
        session_.discard();
        ended();
        throw;
    }
    ended();
}

}  // namespace pglock
