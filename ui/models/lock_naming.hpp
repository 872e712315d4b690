// How the app names a lock: one rule, decided here and nowhere else, so that the locks view, the
// session panel, the timeline, the histogram, the history (and its CSV) and the dialogs show the
// same name for the same lock.
//
// The rule, first match wins (bigint keys; an int4-pair lock is no name's key and shows as
// "(a, b) int4 pair"):
//   1. the catalog: its only name for the key ("a | b (collision)" when several share it);
//   2. a name taken by hand in this app ("name (taken here)"): it hashed it itself;
//   3. a lock another library derives from this database and its schemas, with no name at all
//      (pglock/context_locks.hpp: "golang-migrate lock for database app, schema public"). It is
//      computed from what the server says, so it comes before what a holder claims; after the
//      catalog and the app's own locks, which an operator chose;
//   4. the name a holder carries in application_name, verified by hashing it back to the key
//      ("name (from holder)"); a name cut to fit shows as a prefix ("name… (from holder, cut)")
//      and does not count as a name;
//   5. unknown: "(unknown) KEY".
// Step 4 also takes a name remembered from an earlier holder (HolderNames): the timeline and the
// history show a lock after its holder left, under the name it had while held.
#pragma once

#include <QByteArray>
#include <QList>
#include <QString>

#include <cstdint>
#include <functional>
#include <list>
#include <optional>
#include <unordered_map>
#include <vector>

#include "pglock/monitor.hpp"

namespace lockscope {

enum class LockNameSource { none, catalog, collision, takenHere, holder, holderPrefix, context };

// What the history's name_source column and the views' NameSourceRole say: "catalog",
// "collision", "taken here", "holder", "holder prefix", "context", or "" (unknown).
QString nameSourceText(LockNameSource source);
LockNameSource nameSourceFromText(const QString& text);  // unknown text: LockNameSource::none

struct LockName {
    QString text;                   // as every view shows it
    LockNameSource source = LockNameSource::none;
    std::optional<QByteArray> name; // the exact bytes of a whole name (catalog's only name, taken
                                    // here, verified holder) or the holder's prefix; else nullopt
    bool known() const { return source == LockNameSource::catalog || source == LockNameSource::collision ||
                                source == LockNameSource::takenHere || source == LockNameSource::holder ||
                                source == LockNameSource::context; }
};

// What the app knows about one lock's name, gathered by the caller.
struct NameFacts {
    QList<QByteArray> catalog;             // every catalog name whose key it is
    std::optional<QByteArray> takenHere;   // a name this app took the lock under
    std::optional<QByteArray> context;     // the label of a context-derived lock (rule 3)
    std::optional<pglock::monitor::HolderName> holder;  // what a holder carries (now or earlier)
};

LockName decideLockName(const pglock::monitor::LockId& id, std::int64_t key, const NameFacts& facts);

// The text of a decision that was recorded (the history keeps source and bytes): the same text
// decideLockName() gave. A collision keeps no bytes: "(collision) KEY".
QString lockNameText(bool int4Pair, std::int64_t key, LockNameSource source, const std::optional<QByteArray>& name);

// Names learned from holders, kept after the holder leaves. Bounded: past `capacity` keys the
// least recently learned go first. A verified name is never replaced by a prefix.
class HolderNames {
public:
    explicit HolderNames(std::size_t capacity = 100000) : capacity_(capacity) {}
    // Learns every bigint lock's holder name of the snapshot; returns the keys whose remembered
    // name is new or better (their labels may change).
    std::vector<std::int64_t> learn(const pglock::monitor::Snapshot& snapshot);
    bool learn(std::int64_t key, const pglock::monitor::HolderName& name);
    std::optional<pglock::monitor::HolderName> find(std::int64_t key) const;
    std::size_t size() const { return byKey_.size(); }
    void clear();

private:
    std::size_t capacity_;
    std::list<std::int64_t> order_;  // least recently learned first
    struct Entry {
        pglock::monitor::HolderName name;
        std::list<std::int64_t>::iterator at;
    };
    std::unordered_map<std::int64_t, Entry> byKey_;
};

// What every view asks: the name of a lock. `current` is what a holder carries right now, when
// the caller has the lock's snapshot entry; otherwise the namer's memory answers.
using LockNamer = std::function<LockName(const pglock::monitor::LockId& id, std::int64_t key,
                                         const std::optional<pglock::monitor::HolderName>& current)>;

// A namer that knows only a catalog lookup (tests, benchmarks): rules 1 and 3 (current holder).
LockNamer catalogNamer(std::function<std::optional<QByteArray>(std::int64_t key)> catalog);

}  // namespace lockscope
