#include "exporter_series.hpp"

#include <algorithm>
#include <map>
#include <tuple>

#include "pglock_cli/text.hpp"

namespace pglock::cli {

namespace {

bool idle_in_transaction(const monitor::Snapshot& snapshot, int pid) {
    const auto b = snapshot.backends.find(pid);
    return b != snapshot.backends.end() && b->second.state.starts_with("idle in transaction");
}

LockSeries series_of(const monitor::Snapshot& snapshot, const monitor::LockEntry& lock,
                     const monitor::HoldTracker& holds, const monitor::WaitTracker& waits) {
    LockSeries s;
    s.locks = 1;
    s.holders = lock.holders.size();
    s.waiters = lock.waiters.size();
    const double now = snapshot.server_now;
    const monitor::LockId id = monitor::id_of(lock);
    for (const monitor::Holder& h : lock.holders) {
        if (idle_in_transaction(snapshot, h.pid)) ++s.idle_in_transaction_holders;
        if (auto since = holds.held_since(id, h.pid)) s.oldest_hold_seconds = std::max(s.oldest_hold_seconds, now - *since);
    }
    for (const monitor::Waiter& w : lock.waiters) {
        std::optional<double> start = w.wait_start;
        if (!start) {
            if (auto it = waits.open().find({id, w.pid}); it != waits.open().end()) start = it->second.start;
        }
        if (start) s.oldest_wait_seconds = std::max(s.oldest_wait_seconds, now - *start);
        if (auto pinned = monitor::xmin_pinned_seconds(w, now))
            s.waiter_xmin_pin_seconds = std::max(s.waiter_xmin_pin_seconds, *pinned);
    }
    return s;
}

void fold_into(LockSeries& into, const LockSeries& s) {
    into.locks += s.locks;
    into.holders += s.holders;
    into.waiters += s.waiters;
    into.idle_in_transaction_holders += s.idle_in_transaction_holders;
    into.oldest_wait_seconds = std::max(into.oldest_wait_seconds, s.oldest_wait_seconds);
    into.oldest_hold_seconds = std::max(into.oldest_hold_seconds, s.oldest_hold_seconds);
    into.waiter_xmin_pin_seconds = std::max(into.waiter_xmin_pin_seconds, s.waiter_xmin_pin_seconds);
}

// Which locks keep a series of their own when there are more than the cap: the ones an operator
// is paged about first (waiters, then the longest wait, then the longest hold), ties by label so
// that the choice is the same from scrape to scrape.
bool more_urgent(const LockSeries& a, const LockSeries& b) {
    return std::tuple(a.waiters > 0, a.oldest_wait_seconds, a.oldest_hold_seconds) >
               std::tuple(b.waiters > 0, b.oldest_wait_seconds, b.oldest_hold_seconds) ||
           (std::tuple(a.waiters > 0, a.oldest_wait_seconds, a.oldest_hold_seconds) ==
                std::tuple(b.waiters > 0, b.oldest_wait_seconds, b.oldest_hold_seconds) &&
            std::tie(a.name, a.key) < std::tie(b.name, b.key));
}

// Keeps the `cap` most urgent of `all` and folds the rest into one series labelled `fold_name`;
// returns how many were folded.
std::size_t cap_series(std::vector<LockSeries>& all, std::size_t cap, const char* fold_name,
                       std::vector<LockSeries>& out) {
    if (all.size() > cap) {
        std::nth_element(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(cap), all.end(), more_urgent);
    }
    const std::size_t kept = std::min(cap, all.size());
    for (std::size_t i = 0; i < kept; ++i) out.push_back(std::move(all[i]));
    if (kept == all.size()) return 0;
    LockSeries folded;
    folded.kind = fold_name == other_name ? LockSeries::Kind::other : LockSeries::Kind::unknown;
    folded.name = fold_name;
    for (std::size_t i = kept; i < all.size(); ++i) fold_into(folded, all[i]);
    out.push_back(std::move(folded));
    return all.size() - kept;
}

}  // namespace

ServerSeries summarize(const monitor::Snapshot& snapshot, const Catalog& catalog, const monitor::HoldTracker& holds,
                       const monitor::WaitTracker& waits, const SeriesLimits& limits) {
    ServerSeries out;
    out.advisory_locks = snapshot.locks.size();
    // By name: two entries could carry one name only through a catalog collision, which the
    // catalog already warns about; their numbers are then summed.
    std::map<std::string, LockSeries> named;
    std::vector<LockSeries> unknown;
    for (const monitor::LockEntry& lock : snapshot.locks) {
        LockSeries s = series_of(snapshot, lock, holds, waits);
        const std::string* name = nullptr;
        if (lock.form == monitor::KeyForm::bigint) {
            name = catalog.find(lock.key);
            if (!name && lock.holder_name && lock.holder_name->verified) name = &lock.holder_name->name;
        }
        if (name) {
            auto [it, inserted] = named.try_emplace(*name);
            if (inserted) {
                s.name = *name;
                it->second = std::move(s);
            } else {
                fold_into(it->second, s);
            }
            continue;
        }
        ++out.unknown_keys;
        s.kind = LockSeries::Kind::unknown;
        s.name = unknown_name;
        s.key = lock.form == monitor::KeyForm::bigint
                    ? std::to_string(lock.key)
                    : std::to_string(lock.pair_first) + "," + std::to_string(lock.pair_second);
        unknown.push_back(std::move(s));
    }
    std::vector<LockSeries> by_name;
    by_name.reserve(named.size());
    for (auto& [name, s] : named) by_name.push_back(std::move(s));
    out.folded_names = cap_series(by_name, limits.max_names, other_name, out.locks);
    out.folded_unknown_keys = cap_series(unknown, limits.max_unknown_keys, unknown_name, out.locks);
    std::sort(out.locks.begin(), out.locks.end(), [](const LockSeries& a, const LockSeries& b) {
        return std::tie(a.name, a.key, a.kind) < std::tie(b.name, b.key, b.kind);
    });
    return out;
}

std::string name_label(const std::string& name) {
    const bool as_is = is_display_safe(name) && !name.starts_with("hex:") && name != unknown_name && name != other_name;
    return as_is ? name : "hex:" + hex_bytes(name);
}

std::string name_label(const LockSeries& series) {
    return series.kind == LockSeries::Kind::named ? name_label(series.name) : series.name;
}

}  // namespace pglock::cli
