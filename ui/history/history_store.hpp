// The monitor's history of holds and waits: one SQLite file per server profile, so that what an
// operator saw survives restarts and can be searched and exported later.
//
// Schema (version 3, in table schema_version; an older file is migrated when opened to write:
// version 1 gets `unseen`, versions 1 and 2 get `name_source`, 'catalog' where a name was kept):
//   holds(id INTEGER PRIMARY KEY, name BLOB NULL, key INTEGER, int_pair INTEGER, pid INTEGER,
//         application TEXT, username TEXT, shared INTEGER, started REAL, ended REAL, duration REAL,
//         unseen REAL,                              -- seconds of the hold the monitor could not see
//         name_source TEXT)                         -- nameSourceText(): where `name` came from
//   waits(... the same ..., waited_on TEXT)        -- blocking pids, "123,456"
//   settings(key TEXT PRIMARY KEY, value)           -- retention_days
// - name is the exact bytes, bound as a BLOB as the catalog does (NUL, invalid UTF-8), of the name
//   the app's naming rule (lock_naming.hpp) gave the lock when the row was written; NULL when it
//   knew none. name_source says which rule gave it ('' when none): the history shows a row as
//   the other views showed the lock.
// - started/ended are server epoch seconds; duration = ended - started, stored so it can be sorted.
// - Indexes on ended (time windows, retention, newest first), name, key and pid.
//
// Size is bounded two ways, both enforced on open and by enforceLimits(): rows that ended more
// than retentionDays() ago go (default 7, stored in the file), and each table keeps at most
// maxRowsPerTable() rows (default 1,000,000; the oldest go first).
//
// Every statement is parameterized. A store belongs to the thread that created it (a Qt Sql
// connection cannot move between threads): HistoryRecorder owns the writer on its own thread;
// queries and exports open their own read-only store wherever they run. The file is in WAL mode,
// so readers never wait for the writer.
#pragma once

#include <QString>

#include <algorithm>
#include <vector>

#include "history/history_record.hpp"

class QIODevice;

namespace lockscope::history {

class HistoryStore {
public:
    enum class Mode { readWrite, readOnly };
    static constexpr int kSchemaVersion = 3;
    static constexpr int kDefaultRetentionDays = 7;
    static constexpr int kMaxRetentionDays = 3650;
    static constexpr qint64 kDefaultMaxRowsPerTable = 1'000'000;
    static constexpr int kDefaultQueryLimit = 10'000;

    // readWrite creates the file (and its directory) when needed, then enforces the limits.
    // readOnly never creates or changes anything. Check isOpen(), errorString() says why not.
    explicit HistoryStore(const QString& path, Mode mode = Mode::readWrite,
                          qint64 maxRowsPerTable = kDefaultMaxRowsPerTable);
    ~HistoryStore();
    HistoryStore(const HistoryStore&) = delete;
    HistoryStore& operator=(const HistoryStore&) = delete;

    // QStandardPaths::AppDataLocation + "/history/" + fileNameForProfile(profile).
    static QString pathForProfile(const QString& profileName);
    // A file name safe on any file system for any profile name: the name's letters, digits, '-'
    // and '_' (at most 40), then a hash of the whole name, so that names differing only in the
    // characters left out ("db/1" and "db 1") still get different files.
    static QString fileNameForProfile(const QString& profileName);
    static double currentTime();  // epoch seconds, this machine's clock

    bool isOpen() const { return open_; }
    QString path() const { return path_; }
    QString errorString() const { return error_; }  // the last failure, for a status line

    // All records in one transaction: all of them are stored, or on error none.
    bool insert(const std::vector<Record>& records);

    int retentionDays() const { return retentionDays_; }
    bool setRetentionDays(int days);  // clamped to [1, kMaxRetentionDays], stored in the file
    qint64 maxRowsPerTable() const { return maxRows_; }
    void setMaxRowsPerTable(qint64 rows) { maxRows_ = std::max<qint64>(1, rows); }

    // Deletes what ended before now - retention, then the oldest rows of a table beyond
    // maxRowsPerTable(). Returns how many rows went, or -1 on error.
    qint64 enforceLimits(double now = currentTime());

    // Matching rows, newest end first, at most `limit`, and how many matched in all.
    QueryResult query(const Filter& filter, int limit = kDefaultQueryLimit) const;
    qint64 count(Kind kind) const;  // rows in one table; -1 on error

    // Every matching row (not only the first `limit`), newest first, as CSV (history_csv.hpp).
    // Returns the rows written, or -1 on error. The file variant writes atomically (QSaveFile).
    qint64 exportCsv(const Filter& filter, QIODevice& out) const;
    qint64 exportCsvFile(const Filter& filter, const QString& path) const;

private:
    bool openDatabase(Mode mode);
    bool createSchema();
    bool fail(const QString& what, const QString& detail) const;

    QString path_;
    QString connection_;
    bool open_ = false;
    int retentionDays_ = kDefaultRetentionDays;
    qint64 maxRows_ = kDefaultMaxRowsPerTable;
    mutable QString error_;
};

}  // namespace lockscope::history
