// What a lock of a monitor snapshot shows, worked out from the snapshot alone: its holders'
// sessions, their worst state, its mode, how long a holder has sat idle in transaction, and
// whether two snapshots of one lock agree on those. Qt-free, so that it can be tested (and
// reasoned about) without a model; the locks model and its column table build on it.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "pglock/monitor.hpp"

namespace lockscope::facts {

using pglock::monitor::Backend;
using pglock::monitor::LockEntry;
using pglock::monitor::Snapshot;

// The pg_stat_activity row of `pid`; null when the snapshot has none.
const Backend* backendOf(const Snapshot& snap, int pid);

// "idle in transaction" or "idle in transaction (aborted)".
inline bool isIdleInTx(std::string_view state) { return state.starts_with("idle in transaction"); }

// How bad a holder's state is for the lock: a session sitting idle inside a transaction keeps its
// locks (and the xmin horizon) for nothing, an idle session holding a session lock may have leaked
// it, an active one is working. Unknown states (not visible, "disabled") rank lowest.
int stateRank(std::string_view state);

// "" for a session we cannot see (no privilege: pg_stat_activity shows NULL state and address);
// "local" for a unix-socket client, whose client_addr is NULL too.
std::string_view clientOf(const Backend* b);

// The session fields a lock row shows, joined over its holders.
enum class Field { application, user, client, host };

// `f` of a session; "" for none (clientOf() for Field::client).
std::string_view fieldOf(const Backend* b, Field f);

// The distinct non-empty values of a field over the holders, in holder (pid) order: what the
// Application / User / Client cells show. Used both by data() and by the merge's comparison, so
// that "changed" means exactly "shows something else".
void distinctValues(const LockEntry& e, const Snapshot& s, Field f, std::vector<std::string_view>& out);

// distinctValues() of `f` agree for the two entries.
bool sameDistinct(const LockEntry& a, const Snapshot& sa, const LockEntry& b, const Snapshot& sb, Field f);

// The state of the holder whose state is worst (stateRank()); "" without holders.
std::string_view worstState(const LockEntry& e, const Snapshot& s);

// How the holders hold the lock; none without holders.
enum class LockMode { none, exclusive, shared, mixed };

LockMode modeOf(const LockEntry& e);

// The same holder pids in the same order (each entry's holders are sorted by pid).
bool samePids(const LockEntry& a, const LockEntry& b);

// samePids(), and each holder holds in the same mode.
bool sameHolders(const LockEntry& a, const LockEntry& b);

// The Holders tooltip lists each holder's query, the State tooltip each holder's state. For two
// entries with the same holder pids: does `member` of every holder's session agree?
bool sameHolderField(const LockEntry& a, const Snapshot& sa, const LockEntry& b, const Snapshot& sb,
                     std::string Backend::*member);

// Some holder's session is idle in transaction.
bool anyIdleInTx(const LockEntry& e, const Snapshot& s);

// The longest time a holder has been idle in transaction, by the snapshot's own clock; < 0 if none.
double idleSecondsOf(const LockEntry& e, const Snapshot& s);

// The two rows of one session agree on everything a locks view shows of it.
// state_change is left out: the model shows it only as the idle-in-transaction time of a
// holder, which the merge compares for every row with such a holder anyway. Counting it here
// would make every lock of an active session (whose state_change moves with each query) "dirty"
// and worth a full comparison on every poll.
bool sameBackendForDisplay(const Backend& a, const Backend& b);

// The pids whose pg_stat_activity row changed in a way the model shows, sorted. One linear walk
// over the two pid-ordered maps: a lock row whose holders did not change only needs a look here.
std::vector<int> changedPids(const std::map<int, Backend>& before, const std::map<int, Backend>& after);

}  // namespace lockscope::facts
