// Every catalog operation of the app, off the GUI thread. The service owns a worker thread with a
// connection of its own to the catalog file (CatalogStore::openSibling); each call here posts a
// job to it and returns at once, and the outcome comes back as a signal on the GUI thread:
//
// - load: the whole catalog read into a CatalogSnapshot, published by snapshotChanged. After
//   every write that changed something (and after CatalogStore::changed of the store it was made
//   with, whoever wrote) the snapshot is read again; writes queued together are read once.
// - add, remove, rename, import (a text list, up to 16 MiB, with progress), export (with
//   progress): finished(Result) says what happened; a failure carries the store's message (a
//   catalog another program is writing is reported as busy, after the 5 s busy timeout).
//
// Jobs run one at a time, in the order posted. An import or export can be canceled (cancel(id),
// std::stop_token): it then changes nothing. Destroying the service cancels imports, exports and
// loads not yet done, lets queued adds, removes and renames finish, and joins the thread.
#pragma once

#include <QByteArray>
#include <QHash>
#include <QObject>
#include <QString>
#include <QThread>

#include <memory>
#include <stop_token>

#include "catalog/catalog_snapshot.hpp"
#include "stores/catalog_store.hpp"

namespace lockscope {

class CatalogService : public QObject {
    Q_OBJECT
public:
    enum class Job { add, remove, rename, importList, scan, exportList };

    struct Result {
        quint64 id = 0;
        Job job = Job::add;
        bool ok = false;
        bool canceled = false;
        QString error;                 // why not ok, for the operator
        QByteArray name, newName;      // add, remove, rename
        QString path;                  // import, export, scan (the tree)
        CatalogStore::AddResult added = CatalogStore::AddResult::failed;
        CatalogStore::RenameResult renamed = CatalogStore::RenameResult::failed;
        ImportReport report;           // import
        qint64 exported = 0;           // export: names written
    };

    // `store` gives the file (and its kind, see openSibling) and its changed() signal; the service
    // never calls it otherwise. It must outlive the service.
    explicit CatalogService(CatalogStore& store, QObject* parent = nullptr);
    ~CatalogService() override;
    CatalogService(const CatalogService&) = delete;
    CatalogService& operator=(const CatalogService&) = delete;

    // The latest snapshot; nullptr until the first load is done.
    CatalogSnapshotPtr snapshot() const { return snapshot_; }
    QString path() const { return path_; }

    quint64 add(const QByteArray& name);
    quint64 remove(const QByteArray& name);
    quint64 rename(const QByteArray& from, const QByteArray& to);
    quint64 importList(const QString& path);
    quint64 exportList(const QString& path);
    // Adds what a source scan (scan::scanTree, run elsewhere: it reads files) found.
    quint64 importScan(const QString& dir, const scan::TreeScan& tree);
    // Cancels that import or export (queued or running); no-op for any other job.
    void cancel(quint64 id);
    // Reads the catalog again (it is read at start and after each change on its own).
    void reload();
    // Jobs posted and not finished yet (the panel's "saving…").
    int jobsInFlight() const { return inFlight_; }

signals:
    void snapshotChanged(const lockscope::CatalogSnapshotPtr& snapshot);
    // The catalog could not be read (the previous snapshot stays).
    void loadFailed(const QString& error);
    void progress(quint64 id, lockscope::CatalogService::Job job, qint64 done, qint64 total);
    void finished(const lockscope::CatalogService::Result& result);
    void jobsInFlightChanged(int count);

private:
    struct Worker;
    quint64 post(Job job, std::function<void(Worker&, Result&, const CatalogProgress&)> work, Result seed, bool cancelable);
    void markDirty();
    void onFinished(const Result& result, bool changed);

    QString path_;
    QThread thread_;
    QObject* context_;             // lives on thread_: jobs are posted to it
    std::shared_ptr<Worker> worker_;  // used on thread_ only
    std::stop_source shutdown_;
    QHash<quint64, std::stop_source> cancelable_;
    quint64 nextId_ = 1;
    int inFlight_ = 0;
    CatalogSnapshotPtr snapshot_;
};

}  // namespace lockscope

Q_DECLARE_METATYPE(lockscope::CatalogService::Result)
