// What the library may do to a Transaction beyond its public API.
#pragma once

#include <functional>
#include <utility>

#include "pglock/transaction.hpp"

namespace pglock::detail {

struct TransactionOps {
    // `f` runs once when `tx` ends: commit, rollback, or the destructor's rollback. Must not throw.
    static void at_end(Transaction& tx, std::function<void()> f) { tx.at_end_.push_back(std::move(f)); }
};

}  // namespace pglock::detail
