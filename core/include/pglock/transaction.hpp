// An explicit transaction on a pooled session, for transaction-level advisory locks.
#pragma once

#include <functional>
#include <vector>

#include "pglock/context.hpp"
#include "pglock/pool.hpp"

namespace pglock {

namespace detail {
struct TransactionOps;
}

class Transaction {
public:
    // Takes a session from the pool and runs BEGIN on it.
    explicit Transaction(Pool& pool, const Context& ctx = {});
    // Runs BEGIN on a session the caller already has.
    explicit Transaction(PooledSession session, const Context& ctx = {});
    Transaction(Transaction&&) noexcept = default;
    Transaction& operator=(Transaction&&) noexcept = delete;
    // Rolls back when neither commit() nor rollback() ran; bounded (5 s), past which the session
    // is closed (the server rolls back) instead of given back.
    ~Transaction();

    Session& session() { return *session_; }
    bool active() const noexcept { return active_; }

    void commit(const Context& ctx = {});
    void rollback(const Context& ctx = {});

private:
    friend struct detail::TransactionOps;
    void finish(const char* sql, const Context& ctx);
    void ended() noexcept;
    PooledSession session_;
    bool active_ = false;
    // Run once when the transaction ends (commit, rollback, or the destructor's rollback): what
    // its transaction-level locks published (lock_held_info) goes with them.
    std::vector<std::function<void()>> at_end_;
};

}  // namespace pglock
