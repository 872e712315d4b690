// A chaos driver for pglock (test support, not part of the library): worker threads take and drop
// advisory locks on a few contended names and some uncontended ones, with random cancels and
// deadlines, while a killer terminates the backends of random holders (and some waiters) and,
// optionally, the server is restarted. Used by tests/core/test_chaos.cpp (bounded) and bench/chaos_soak.cpp (soak).
//
// What is asserted (every check is made from the driver's own records and plain libpq sessions,
// never from what pglock says about itself, except the lost notice whose latency is measured):
//
//  * overlap: two critical sections of one name never overlap. A section is the time between
//    acquire returning and release() being called, on the process-wide steady clock. An unlock
//    happens after the holder's section ends and a grant before the next section starts, so for
//    locks that were really held the server's order is the clock's order. A lock whose backend
//    died is no longer held from the moment of the fault: another worker may legitimately get it
//    before the lost notice arrives. So a section counts only up to the fault that could have
//    ended it (the kill of its backend, the start of a server restart) - unless its release()
//    succeeded, which proves the lock was held to the end (pg_advisory_unlock returned true).
//  * lost notice: every section whose release() did not succeed and that a fault could explain
//    must have had its on_lost callback within `lost_notice_bound` of max(fault, section start).
//    A guard reported lost (or whose release failed) with no injected fault that could explain it
//    is a violation too.
//  * pool: sessions lent by Pool::acquire are checked with `SELECT 1`. A failure counts only when
//    no fault explains it: a kill of that backend or a restart that was not yet visible to the
//    client when the session was lent (the backend still in pg_stat_activity, or gone less than
//    `visible_grace` earlier; a restart not finished `visible_grace` before).
//  * leak: once everything stopped, no pg_locks row of the run's keys remains (polled briefly).
//  * recovery: after each restart, locks are acquired again within 10 s.
//
// Backend pids are matched to sections by time (a kill within 5 s before the call up to the end of
// the release): PIDs are reused only after pid_max process creations, far more than a run makes
// within seconds.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace pglock::chaos {

struct Config {
    std::string dsn;
    int workers = 10;
    int hot_names = 3;                 // shared by all workers: they contend
    int unique_names_per_worker = 2;   // one worker's own: uncontended
    std::chrono::milliseconds duration{15000};
    std::chrono::milliseconds kill_every{200};     // mean interval of the killer; 0 = no kills
    std::chrono::milliseconds restart_every{0};    // 0 = no restarts
    std::string restart_command;                   // run with /bin/sh -c; must restart the server
    std::chrono::milliseconds lost_notice_bound{1000};
    std::chrono::milliseconds visible_grace{250};  // a dead backend's EOF reaches the client by then
    std::chrono::milliseconds progress_every{0};   // 0 = no progress lines
    std::uint64_t seed = 0;                        // 0 = random
    std::function<void(const std::string&)> log;   // progress and restart lines; may be empty
};

struct Report {
    double seconds = 0;
    long acquisitions = 0;
    std::map<std::string, long> acquisitions_by_op;  // try, deadline, stop, run_once
    long contended = 0;          // try_acquire / run_once found it held
    long cancels = 0;            // Errc::canceled
    long deadlines = 0;          // Errc::deadline_exceeded
    std::map<std::string, long> errors;      // other failures by code (expected near faults)
    std::vector<std::string> error_samples;  // a few distinct messages
    long kills = 0;              // pg_terminate_backend that found its backend
    long kills_hitting_guard = 0;  // ... while a section's guard was on that backend
    long restarts = 0;
    long lost_notices = 0;
    double lost_median_ms = 0, lost_p99_ms = 0, lost_max_ms = 0;
    long released_before_fault = 0;  // a fault hit the guard, but its unlock had already won
    double max_overrun_ms = 0;       // how long a section went on after its lost notice
    long pool_probes = 0, pool_probe_failures_explained = 0;
    double max_recovery_ms = 0;      // restart done -> first acquisition
    std::map<std::string, long> violations;  // kind -> count
    std::vector<std::string> violation_samples;

    long total_violations() const;
    std::string summary() const;  // multi-line, human-readable counters
};

// Runs the chaos for config.duration, waits for every thread, checks the invariants.
// Throws std::runtime_error when the server cannot be reached at all.
Report run(const Config& config);

}  // namespace pglock::chaos
