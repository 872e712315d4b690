// Records what the poller saw into the history store without ever blocking the GUI thread: the
// store lives on the recorder's own thread (with its own SQLite connection), and each poll's
// finished holds and waits reach it as one queued batch, written in one transaction.
//
// Use: create it on the GUI thread, setNamer(), open(HistoryStore::pathForProfile(name))
// when a profile connects, and connect Poller::resultReady to record(). opened() reports whether
// the file could be opened; written() follows every committed batch (the history tab refreshes on
// it). Retention is a setting of the file (setRetentionDays), enforced on open and after writes
// at most every enforceInterval.
#pragma once

#include <QObject>
#include <QString>
#include <QThread>

#include <QByteArray>

#include <chrono>
#include <functional>
#include <optional>

#include "history/history_record.hpp"
#include "history/history_store.hpp"
#include "poller/poll_result.hpp"

namespace lockscope::history {

class HistoryWriter;

class HistoryRecorder : public QObject {
    Q_OBJECT
public:
    static constexpr std::chrono::milliseconds kDefaultEnforceInterval{60'000};

    explicit HistoryRecorder(QObject* parent = nullptr);
    ~HistoryRecorder() override;  // writes every batch already queued, closes the file, joins
    HistoryRecorder(const HistoryRecorder&) = delete;
    HistoryRecorder& operator=(const HistoryRecorder&) = delete;

    // The app's naming rule (lock_naming.hpp). Called on the recorder's own thread (the GUI
    // thread, in record()), once per distinct lock of a poll's finished holds and waits; each
    // row keeps the name and its source.
    void setNamer(LockNamer namer) { namer_ = std::move(namer); }
    // Switches to `path` (a profile's file): batches recorded after this call go there.
    void open(const QString& path);
    void openProfile(const QString& profileName) { open(HistoryStore::pathForProfile(profileName)); }
    void close();  // records nothing until the next open()

    QString path() const { return path_; }   // the file asked for; empty when closed
    bool isOpen() const { return open_; }    // as the last opened() said
    QString errorString() const { return error_; }
    int retentionDays() const { return retentionDays_; }
    void setRetentionDays(int days);          // stored in the file, enforced at once
    void setMaxRowsPerTable(qint64 rows);     // applies to the next open and enforcement
    void setEnforceInterval(std::chrono::milliseconds interval);

public slots:
    // The finished holds and waits of one poll. Cheap on the calling thread: names are looked
    // up, rows are built and handed to the writer.
    void record(const lockscope::PollResultPtr& result);

signals:
    void opened(const QString& path, bool ok, const QString& error);
    void written(int holds, int waits);        // one batch committed
    void limitsEnforced(qint64 deletedRows);   // retention or the row bound removed rows
    void retentionDaysChanged(int days);
    void failed(const QString& message);       // a write or enforcement failed

private:
    void onOpened(const QString& path, bool ok, const QString& error, int retentionDays);

    QThread thread_;
    HistoryWriter* writer_ = nullptr;  // lives on thread_, deleted when it finishes
    LockNamer namer_;
    QString path_;
    bool open_ = false;
    QString error_;
    int retentionDays_ = HistoryStore::kDefaultRetentionDays;
};

// The recorder's worker: owns the HistoryStore on the recorder's thread. Internal, but a QObject
// of its own so that its signals cross back to the GUI thread queued.
class HistoryWriter : public QObject {
    Q_OBJECT
public:
    HistoryWriter() = default;
    ~HistoryWriter() override;

    void open(const QString& path);
    void close();
    void write(const std::vector<Record>& records);
    void setRetentionDays(int days);
    void setMaxRowsPerTable(qint64 rows);
    void setEnforceInterval(std::chrono::milliseconds interval) { enforceInterval_ = interval; }

signals:
    void opened(const QString& path, bool ok, const QString& error, int retentionDays);
    void written(int holds, int waits);
    void limitsEnforced(qint64 deletedRows);
    void retentionDaysChanged(int days);
    void failed(const QString& message);

private:
    void enforce();

    // Records of batches the file refused (busy, disk full): written with the next batch.
    // Bounded; past the bound the oldest are dropped and counted, and the failure says so.
    static constexpr std::size_t kMaxPending = 100000;
    std::vector<Record> pending_;
    std::unique_ptr<HistoryStore> store_;
    qint64 maxRows_ = HistoryStore::kDefaultMaxRowsPerTable;
    std::chrono::milliseconds enforceInterval_ = HistoryRecorder::kDefaultEnforceInterval;
    std::chrono::steady_clock::time_point lastEnforced_;
};

}  // namespace lockscope::history
