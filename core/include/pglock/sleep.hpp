// Waiting that a std::stop_token ends early: the poll loops, the CLI's watch and demo, the lock's
// retry pause. A plain sleep would keep a stopping program (SIGTERM, a cancelled context) waiting
// out the whole interval.
#pragma once

#include <chrono>
#include <stop_token>

namespace pglock {

// Sleeps until `until`; true when the time came, false when `stop` was requested first (or was
// already requested).
bool sleep_until(std::chrono::steady_clock::time_point until, std::stop_token stop);

// Sleeps for `duration`; true when it passed, false when `stop` was requested first.
bool sleep_for(std::chrono::steady_clock::duration duration, std::stop_token stop);

// Blocks until `stop` is requested (a service that runs until SIGTERM).
void wait_for_stop(std::stop_token stop);

}  // namespace pglock
