// What the "Terminate session" confirmation says before anything is done: every lock the session
// holds (by the app's names), who waits on it, whether it is a pooled backend that serves other
// clients, how old its transaction is and whether terminating rolls back work. Widget-free, so a
// test reads exactly the text the dialog shows.
#pragma once

#include <QString>

#include <cstdint>
#include <functional>
#include <vector>

#include "pglock/backend_impact.hpp"
#include "pglock/orphan.hpp"

namespace lockscope {

struct TerminateImpactFacts {
    const pglock::monitor::BackendImpact& impact;
    // The monitor's orphan evidence for the pid (null: none): a pooled backend shows only over
    // several polls (the same backend under several application names).
    const std::vector<pglock::monitor::OrphanEvidence>* evidence = nullptr;
    // The app's name for a bigint advisory key (lock_naming.hpp's rule).
    std::function<QString(std::int64_t key)> nameOfKey;
};

// Pooled: the impact's own session shows a pooler (pglock::monitor::pooler_hint), or the
// monitor's evidence says so.
bool isPooledBackend(const TerminateImpactFacts& facts);

// Several lines, no trailing newline; plain text (server strings are never HTML).
QString terminateImpactText(const TerminateImpactFacts& facts);

}  // namespace lockscope
