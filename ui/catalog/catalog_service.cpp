#include "catalog/catalog_service.hpp"

#include <QMetaObject>

#include "catalog/background_priority.hpp"

namespace lockscope {

// The worker thread's state: touched only by jobs, which run on that thread one at a time.
struct CatalogService::Worker {
    const CatalogStore& primary;
    std::unique_ptr<CatalogStore> store;
    bool dirty = true;  // the first load

    // (Re)opens the sibling connection when it is not open: a busy or missing file at start is
    // tried again by the next job (Retry).
    CatalogStore* open(QString* error) {
        if (!store || !store->isOpen()) store = primary.openSibling();
        if (store->isOpen()) return store.get();
        *error = store->errorString();
        return nullptr;
    }
};

CatalogService::CatalogService(CatalogStore& store, QObject* parent)
    : QObject(parent), path_(store.path()), context_(new QObject), worker_(std::make_shared<Worker>(Worker{store, {}, true})) {
    qRegisterMetaType<CatalogSnapshotPtr>("lockscope::CatalogSnapshotPtr");
    qRegisterMetaType<Result>("lockscope::CatalogService::Result");
    qRegisterMetaType<Job>("lockscope::CatalogService::Job");
    thread_.setObjectName(QStringLiteral("catalog"));
    context_->moveToThread(&thread_);
    connect(&thread_, &QThread::finished, context_, &QObject::deleteLater);
    thread_.start();
    QMetaObject::invokeMethod(context_, [] { lowerThisThreadsPriority(); }, Qt::QueuedConnection);
    // Whoever writes through the store this service was made from (a test, --import-names):
    // the snapshot is read again.
    connect(&store, &CatalogStore::changed, this, &CatalogService::reload);
    reload();
}

CatalogService::~CatalogService() {
    shutdown_.request_stop();
    for (std::stop_source& s : cancelable_) s.request_stop();
    // Behind the queued jobs (quit() from here would drop them): the sibling connection is closed
    // on the thread that opened it, then that thread's loop ends.
    QMetaObject::invokeMethod(
        context_,
        [worker = worker_] {
            worker->store.reset();
            QThread::currentThread()->quit();
        },
        Qt::QueuedConnection);
    thread_.wait();
}

void CatalogService::reload() {
    QMetaObject::invokeMethod(context_, [worker = worker_] { worker->dirty = true; }, Qt::QueuedConnection);
    markDirty();
}

// Posts a read of the catalog behind the jobs queued so far: when it runs, every write before it
// is in, and a second one queued behind it finds nothing dirty and reads nothing.
void CatalogService::markDirty() {
    const std::stop_token stop = shutdown_.get_token();
    QMetaObject::invokeMethod(
        context_,
        [this, worker = worker_, stop] {
            if (!worker->dirty || stop.stop_requested()) return;
            QString error;
            CatalogStore* store = worker->open(&error);
            CatalogSnapshotPtr snapshot = store ? CatalogSnapshot::load(*store, stop) : nullptr;
            if (stop.stop_requested()) return;
            if (snapshot) worker->dirty = false;
            else if (store) error = store->errorString();
            // `this` is alive: the destructor waits for this thread, and a call queued to a
            // destroyed object is dropped.
            QMetaObject::invokeMethod(this, [this, snapshot = std::move(snapshot), error] {
                if (!snapshot) {
                    emit loadFailed(error);
                    return;
                }
                snapshot_ = snapshot;
                emit snapshotChanged(snapshot_);
            }, Qt::QueuedConnection);
        },
        Qt::QueuedConnection);
}

quint64 CatalogService::post(Job job, std::function<void(Worker&, Result&, const CatalogProgress&)> work, Result seed,
                             bool cancelable) {
    const quint64 id = nextId_++;
    seed.id = id;
    seed.job = job;
    std::stop_source source;
    if (cancelable) cancelable_.insert(id, source);
    const std::stop_token shutdown = shutdown_.get_token();
    const std::stop_token stop = source.get_token();
    ++inFlight_;
    emit jobsInFlightChanged(inFlight_);
    QMetaObject::invokeMethod(
        context_,
        [this, worker = worker_, work = std::move(work), seed = std::move(seed), shutdown, stop, cancelable, id]() mutable {
            Result result = std::move(seed);
            // Writes of one name are kept at shutdown (a name added just before closing the
            // window is not lost); long jobs are dropped.
            if ((cancelable && shutdown.stop_requested()) || stop.stop_requested()) {
                result.canceled = true;
                result.error = tr("canceled; nothing changed");
            } else if (worker->open(&result.error) != nullptr) {
                CatalogProgress control;
                control.stop = stop;
                if (cancelable) {
                    control.report = [this, id, job = result.job](qint64 done, qint64 total) {
                        QMetaObject::invokeMethod(this, [this, id, job, done, total] { emit progress(id, job, done, total); },
                                                  Qt::QueuedConnection);
                    };
                }
                work(*worker, result, control);
                result.canceled = !result.ok && stop.stop_requested();
            }
            const bool changed = result.ok && (result.added == CatalogStore::AddResult::added || result.job != Job::add) &&
                                 result.job != Job::exportList &&
                                 ((result.job != Job::importList && result.job != Job::scan) || result.report.added > 0);
            if (changed) worker->dirty = true;
            QMetaObject::invokeMethod(this, [this, result, changed] { onFinished(result, changed); }, Qt::QueuedConnection);
        },
        Qt::QueuedConnection);
    return id;
}

void CatalogService::onFinished(const Result& result, bool changed) {
    cancelable_.remove(result.id);
    --inFlight_;
    if (changed) markDirty();
    emit finished(result);
    emit jobsInFlightChanged(inFlight_);
}

void CatalogService::cancel(quint64 id) {
    const auto it = cancelable_.find(id);
    if (it != cancelable_.end()) it->request_stop();
}

quint64 CatalogService::add(const QByteArray& name) {
    Result seed;
    seed.name = name;
    return post(Job::add, [](Worker& w, Result& r, const CatalogProgress&) {
        r.added = w.store->add(r.name);
        r.ok = r.added == CatalogStore::AddResult::added;
        if (!r.ok) r.error = w.store->errorString();
    }, seed, false);
}

quint64 CatalogService::remove(const QByteArray& name) {
    Result seed;
    seed.name = name;
    return post(Job::remove, [](Worker& w, Result& r, const CatalogProgress&) {
        r.ok = w.store->remove(r.name);
        if (!r.ok) r.error = w.store->errorString();
    }, seed, false);
}

quint64 CatalogService::rename(const QByteArray& from, const QByteArray& to) {
    Result seed;
    seed.name = from;
    seed.newName = to;
    return post(Job::rename, [](Worker& w, Result& r, const CatalogProgress&) {
        r.renamed = w.store->rename(r.name, r.newName);
        r.ok = r.renamed == CatalogStore::RenameResult::renamed || r.renamed == CatalogStore::RenameResult::unchanged;
        if (!r.ok) r.error = w.store->errorString();
    }, seed, false);
}

quint64 CatalogService::importList(const QString& path) {
    Result seed;
    seed.path = path;
    return post(Job::importList, [](Worker& w, Result& r, const CatalogProgress& progress) {
        r.report = w.store->importText(r.path, progress);
        r.ok = r.report.ok();
        if (!r.ok) r.error = r.report.errors.join(QStringLiteral("; "));
    }, seed, true);
}

quint64 CatalogService::importScan(const QString& dir, const scan::TreeScan& tree) {
    Result seed;
    seed.path = dir;
    return post(Job::scan, [tree](Worker& w, Result& r, const CatalogProgress& progress) {
        r.report = w.store->importScan(tree, progress);
        r.ok = r.report.ok();
        if (!r.ok) r.error = r.report.errors.join(QStringLiteral("; "));
    }, seed, true);
}

quint64 CatalogService::exportList(const QString& path) {
    Result seed;
    seed.path = path;
    return post(Job::exportList, [](Worker& w, Result& r, const CatalogProgress& progress) {
        qint64 written = 0;
        CatalogProgress counting = progress;
        const auto report = progress.report;
        counting.report = [&written, report](qint64 done, qint64 total) {
            written = done;
            if (report) report(done, total);
        };
        r.ok = w.store->exportText(r.path, counting);
        r.exported = written;
        if (!r.ok) r.error = w.store->errorString();
    }, seed, true);
}

}  // namespace lockscope
