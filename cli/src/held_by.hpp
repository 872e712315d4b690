// Who holds a lock the CLI found contended: every message about a contended or timed-out lock
// names the holders, because "which session?" is an operator's next question.
#pragma once

#include <string>

#include "pglock/lock.hpp"

namespace pglock::cli {

// "held by pid 123", "held by pids 123, 456", or "held by another session" when the holder is
// gone by now or the lookup failed: best effort, since a failing diagnostic must not turn
// "contended" into an error.
std::string held_by(Lock& lock);

}  // namespace pglock::cli
