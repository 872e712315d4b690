#include "history/history_recorder.hpp"

#include <QHash>

namespace lockscope::history {

HistoryRecorder::HistoryRecorder(QObject* parent) : QObject(parent) {
    thread_.setObjectName(QStringLiteral("lockscope-history"));
    writer_ = new HistoryWriter();
    writer_->moveToThread(&thread_);
    connect(&thread_, &QThread::finished, writer_, &QObject::deleteLater);
    connect(writer_, &HistoryWriter::opened, this, &HistoryRecorder::onOpened, Qt::QueuedConnection);
    connect(writer_, &HistoryWriter::written, this, &HistoryRecorder::written, Qt::QueuedConnection);
    connect(writer_, &HistoryWriter::limitsEnforced, this, &HistoryRecorder::limitsEnforced, Qt::QueuedConnection);
    connect(writer_, &HistoryWriter::failed, this, [this](const QString& message) {
        error_ = message;
        emit failed(message);
    }, Qt::QueuedConnection);
    connect(writer_, &HistoryWriter::retentionDaysChanged, this, [this](int days) {
        retentionDays_ = days;
        emit retentionDaysChanged(days);
    }, Qt::QueuedConnection);
    thread_.start();
}

HistoryRecorder::~HistoryRecorder() {
    // Queued after every batch sent so far: they are written, then the file is closed on the
    // writer's thread (its SQLite connection belongs there), then the thread ends.
    QMetaObject::invokeMethod(writer_, [w = writer_] {
        w->close();
        QThread::currentThread()->quit();
    }, Qt::QueuedConnection);
    thread_.wait();
}

void HistoryRecorder::open(const QString& path) {
    path_ = path;
    open_ = false;
    QMetaObject::invokeMethod(writer_, [w = writer_, path] { w->open(path); },
                              Qt::QueuedConnection);
}

void HistoryRecorder::close() {
    path_.clear();
    open_ = false;
    QMetaObject::invokeMethod(writer_, [w = writer_] { w->close(); }, Qt::QueuedConnection);
}

void HistoryRecorder::onOpened(const QString& path, bool ok, const QString& error, int retentionDays) {
    if (path != path_) return;  // a file since replaced by another open()
    open_ = ok;
    error_ = error;
    if (ok && retentionDays != retentionDays_) {
        retentionDays_ = retentionDays;
        emit retentionDaysChanged(retentionDays);
    }
    emit opened(path, ok, error);
}

void HistoryRecorder::setRetentionDays(int days) {
    days = std::clamp(days, 1, HistoryStore::kMaxRetentionDays);
    QMetaObject::invokeMethod(writer_, [w = writer_, days] { w->setRetentionDays(days); }, Qt::QueuedConnection);
}

void HistoryRecorder::setMaxRowsPerTable(qint64 rows) {
    QMetaObject::invokeMethod(writer_, [w = writer_, rows] { w->setMaxRowsPerTable(rows); }, Qt::QueuedConnection);
}

void HistoryRecorder::setEnforceInterval(std::chrono::milliseconds interval) {
    QMetaObject::invokeMethod(writer_, [w = writer_, interval] { w->setEnforceInterval(interval); }, Qt::QueuedConnection);
}

void HistoryRecorder::record(const PollResultPtr& result) {
    if (!result || path_.isEmpty()) return;
    if (result->finished.empty() && result->finished_waits.empty()) return;
    // One lookup per distinct key: a mass release of one lock by many sessions costs one.
    QHash<qint64, LockName> names;
    auto nameOf = [&](const auto& event) -> LockName {
        if (event.lock.form != pglock::monitor::KeyForm::bigint) return decideLockName(event.lock, event.key, {});
        auto it = names.find(event.key);
        if (it == names.end())
            it = names.insert(event.key, namer_ ? namer_(event.lock, event.key, std::nullopt) : decideLockName(event.lock, event.key, {}));
        return *it;
    };
    std::vector<Record> records;
    records.reserve(result->finished.size() + result->finished_waits.size());
    for (const auto& hold : result->finished)
        if (hold.end) records.push_back(fromHold(hold, nameOf(hold)));
    for (const auto& wait : result->finished_waits)
        if (wait.end) records.push_back(fromWait(wait, nameOf(wait)));
    QMetaObject::invokeMethod(writer_, [w = writer_, records = std::move(records)] { w->write(records); },
                              Qt::QueuedConnection);
}

// ---- HistoryWriter, on the recorder's thread ------------------------------------------------

HistoryWriter::~HistoryWriter() = default;

void HistoryWriter::open(const QString& path) {
    store_.reset();  // the previous profile's file first: one writer per file
    store_ = std::make_unique<HistoryStore>(path, HistoryStore::Mode::readWrite, maxRows_);  // enforces the limits
    lastEnforced_ = std::chrono::steady_clock::now();
    if (!store_->isOpen()) {
        const QString error = store_->errorString();
        store_.reset();
        emit opened(path, false, error, HistoryStore::kDefaultRetentionDays);
        return;
    }
    emit opened(path, true, QString(), store_->retentionDays());
}

void HistoryWriter::close() {
    // Kept records get one last try in the file they belong to.
    if (store_ && !pending_.empty()) write({});
    if (!pending_.empty())
        emit failed(tr("History: %n record(s) could not be written and are lost: %1", nullptr, static_cast<int>(pending_.size()))
                        .arg(store_ ? store_->errorString() : tr("the file is closed")));
    pending_.clear();
    store_.reset();
}

void HistoryWriter::write(const std::vector<Record>& records) {
    if (!store_ || (records.empty() && pending_.empty())) return;
    // A failed batch never drops records: they wait in pending_ and go first in the next one.
    std::vector<Record> batch = std::move(pending_);
    pending_.clear();
    batch.insert(batch.end(), records.begin(), records.end());
    if (!store_->insert(batch)) {
        std::size_t dropped = 0;
        if (batch.size() > kMaxPending) {
            dropped = batch.size() - kMaxPending;
            batch.erase(batch.begin(), batch.begin() + static_cast<std::ptrdiff_t>(dropped));
        }
        pending_ = std::move(batch);
        QString message = tr("%1 (%n record(s) kept, written with the next batch)", nullptr, static_cast<int>(pending_.size()))
                              .arg(store_->errorString());
        if (dropped > 0) message += tr("; %n oldest record(s) dropped over the bound", nullptr, static_cast<int>(dropped));
        emit failed(message);
        return;
    }
    int holds = 0;
    for (const Record& r : batch) holds += r.kind == Kind::hold ? 1 : 0;
    emit written(holds, static_cast<int>(batch.size()) - holds);
    if (std::chrono::steady_clock::now() - lastEnforced_ >= enforceInterval_) enforce();
}

void HistoryWriter::setRetentionDays(int days) {
    if (!store_) return;
    if (!store_->setRetentionDays(days)) {
        emit failed(store_->errorString());
        return;
    }
    emit retentionDaysChanged(store_->retentionDays());
    enforce();  // a shorter retention takes effect now, not at the next interval
}

void HistoryWriter::setMaxRowsPerTable(qint64 rows) {
    maxRows_ = rows;
    if (!store_) return;
    store_->setMaxRowsPerTable(rows);
    enforce();
}

void HistoryWriter::enforce() {
    lastEnforced_ = std::chrono::steady_clock::now();
    const qint64 deleted = store_->enforceLimits();
    if (deleted < 0) emit failed(store_->errorString());
    else if (deleted > 0) emit limitsEnforced(deleted);
}

}  // namespace lockscope::history
