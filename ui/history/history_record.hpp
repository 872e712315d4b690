// One row of the monitor's history: a hold or a wait that ended, as the history store keeps it,
// and the filter the history tab queries with. Plain values, cheap to move between threads.
#pragma once

#include <QByteArray>
#include <QList>
#include <QString>

#include <optional>
#include <vector>

#include "models/lock_naming.hpp"
#include "pglock/monitor.hpp"

namespace lockscope::history {

enum class Kind { hold = 0, wait = 1 };

struct Record {
    Kind kind = Kind::hold;
    qint64 id = 0;                    // the row id in its table (0 before it is stored)
    std::optional<QByteArray> name;   // the exact bytes of the name the app knew the lock by (or
                                      // of a holder's cut name: nameSource says which)
    LockNameSource nameSource = LockNameSource::none;  // where that name came from (lock_naming.hpp)
    qint64 key = 0;
    bool intPair = false;             // pg_advisory_lock(int4, int4): key is classid << 32 | objid
    int pid = 0;
    QString application;
    QString user;
    bool shared = false;
    double started = 0;               // server epoch seconds
    double ended = 0;
    double unseen = 0;                // holds: seconds of it the monitor could not see (reconnecting)
    QList<int> waitedOn;              // waits: every pid that blocked it, sorted
    double duration() const { return ended - started; }
    friend bool operator==(const Record&, const Record&) = default;
};

// Which rows a query returns. Empty fields do not filter.
// (Default member initializers let callers write designated initializers, {.kind = ...}.)
struct Filter {
    QString text{};                   // a substring of the name, application or user (ASCII case-insensitive)
    std::optional<Kind> kind{};
    std::optional<double> since{};    // rows that ended at or after (server epoch seconds)
    std::optional<double> until{};    // rows that started at or before
    std::optional<int> pid{};
    friend bool operator==(const Filter&, const Filter&) = default;
};

struct QueryResult {
    std::vector<Record> rows;         // newest end first, at most the query's limit
    qint64 total = 0;                 // every row that matched
    QString error;                    // non-empty: the query failed, rows is empty
};

// A finished hold or wait as a record, under the name the app's naming rule gave its lock.
Record fromHold(const pglock::monitor::Hold& hold, const LockName& name);
Record fromWait(const pglock::monitor::Wait& wait, const LockName& name);

}  // namespace lockscope::history
