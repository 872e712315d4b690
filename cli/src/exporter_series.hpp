// What `pglock exporter` reports about one server: a monitor snapshot folded into one series per
// lock name, with the number of series bounded whatever the server holds.
//
// A lock's name is its catalog name, else the name its holder's application_name gives and that
// hashes to its key (holder identity), else it is unknown. Named locks beyond `max_names` fold
// into name="(other)"; unknown locks carry their key as a label up to `max_unknown_keys`, the
// rest fold into name="(unknown)" without a key. So one target never exposes more than
// max_names + max_unknown_keys + 2 series per metric. PIDs, users and query text are never labels.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "catalog_file.hpp"
#include "pglock/monitor.hpp"

namespace pglock::cli {

struct SeriesLimits {
    std::size_t max_names = 1000;
    std::size_t max_unknown_keys = 20;
};

inline constexpr const char* unknown_name = "(unknown)";
inline constexpr const char* other_name = "(other)";

struct LockSeries {
    enum class Kind { named, unknown, other };
    Kind kind = Kind::named;  // a lock name, or one of the two series without one
    std::string name;  // the lock name; unknown_name or other_name for the other kinds
    std::string key;   // an unknown lock's key within the cap ("-42", or "1,2" for an int4 pair); else ""
    std::size_t locks = 0;  // how many locks the series stands for (more than one only when folded)
    std::size_t holders = 0;
    std::size_t waiters = 0;
    std::size_t idle_in_transaction_holders = 0;
    double oldest_wait_seconds = 0;      // the longest current wait (0: nobody waits)
    double oldest_hold_seconds = 0;      // the longest current hold, since the exporter first saw it
    double waiter_xmin_pin_seconds = 0;  // the longest a waiter's snapshot has held back the xmin horizon
};

struct ServerSeries {
    std::vector<LockSeries> locks;  // sorted by name, then key
    std::size_t advisory_locks = 0;
    std::size_t unknown_keys = 0;   // locks without a name (int4 pairs included)
    std::size_t folded_names = 0;   // named locks counted in "(other)" because of max_names
    std::size_t folded_unknown_keys = 0;  // unknown locks counted in "(unknown)" without a key
};

// A series' `name` label. A lock name goes as it is when it is valid UTF-8 (Prometheus refuses
// a whole scrape with a label that is not) and cannot be taken for anything else; otherwise it
// is "hex:" and its bytes in lowercase hex (hex_bytes, as `key --json` gives name_hex). So a name that is
// not UTF-8, one that starts with "hex:" and the names "(other)" and "(unknown)" are all written
// in hex, and no two series ever share a label: a label that starts with "hex:" is always an
// encoding, "(other)" and "(unknown)" are always the folded series.
std::string name_label(const LockSeries& series);
std::string name_label(const std::string& lock_name);

// `holds` and `waits` must have been updated with `snapshot`: they give when each hold was first
// seen and when waits began on servers older than PostgreSQL 14 (which have no waitstart).
ServerSeries summarize(const monitor::Snapshot& snapshot, const Catalog& catalog, const monitor::HoldTracker& holds,
                       const monitor::WaitTracker& waits, const SeriesLimits& limits);

}  // namespace pglock::cli
