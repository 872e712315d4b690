#include "poller/poller.hpp"

#include <QScopeGuard>

#include <algorithm>

#include "poller/poll_worker.hpp"

namespace lockscope {

Poller::Poller(QObject* parent) : QObject(parent) {
    qRegisterMetaType<lockscope::PollResultPtr>();
    qRegisterMetaType<lockscope::PollState>();
    thread_.setObjectName(QStringLiteral("lockscope-poller"));
    worker_ = new PollWorker();
    worker_->moveToThread(&thread_);
    connect(&thread_, &QThread::finished, worker_, &QObject::deleteLater);
    connect(worker_, &PollWorker::result, this, &Poller::onWorkerResult, Qt::QueuedConnection);
    connect(worker_, &PollWorker::state, this, &Poller::onWorkerState, Qt::QueuedConnection);
    thread_.start();
}

Poller::~Poller() {
    worker_->interrupt();  // a connect or query in progress returns at once
    QMetaObject::invokeMethod(worker_, &PollWorker::end, Qt::QueuedConnection);
    thread_.quit();
    thread_.wait();
}

void Poller::start(const QString& conninfo, const QString& password) {
    worker_->interrupt();  // a connect to the previous server must not delay this one
    ++generation_;
    state_ = PollState::connecting;
    const quint64 generation = generation_;
    const qint64 ms = interval_.count();
    QMetaObject::invokeMethod(worker_, [w = worker_, ms] { w->setInterval(ms); }, Qt::QueuedConnection);
    QMetaObject::invokeMethod(
        worker_, [w = worker_, generation, conninfo, password] { w->begin(generation, conninfo, password); },
        Qt::QueuedConnection);
}

void Poller::stop() {
    worker_->interrupt();
    ++generation_;  // anything still in flight is stale
    state_ = PollState::stopped;
    QMetaObject::invokeMethod(worker_, &PollWorker::end, Qt::QueuedConnection);
    emit stateChanged(state_, QStringLiteral("not connected"));
}

void Poller::setInterval(std::chrono::milliseconds interval) {
    interval_ = std::clamp(interval, kMinInterval, kMaxInterval);
    const qint64 ms = interval_.count();
    QMetaObject::invokeMethod(worker_, [w = worker_, ms] { w->setInterval(ms); }, Qt::QueuedConnection);
}

void Poller::setBenchmarkInterval(std::chrono::milliseconds interval) {
    interval_ = std::clamp(interval, std::chrono::milliseconds(1), kMaxInterval);
    const qint64 ms = interval_.count();
    QMetaObject::invokeMethod(worker_, [w = worker_, ms] { w->setInterval(ms); }, Qt::QueuedConnection);
}

void Poller::releaseOffThread(PollResultPtr result) {
    if (!result) return;
    QMetaObject::invokeMethod(worker_, [r = std::move(result)]() mutable { r.reset(); }, Qt::QueuedConnection);
}

void Poller::pollNow() {
    QMetaObject::invokeMethod(worker_, [w = worker_] { w->pollNow(); }, Qt::QueuedConnection);
}

void Poller::setSummaryThresholds(const SummaryThresholds& thresholds) {
    QMetaObject::invokeMethod(worker_, [w = worker_, thresholds] { w->setSummaryThresholds(thresholds); }, Qt::QueuedConnection);
}

void Poller::setPaused(bool paused) {
    paused_ = paused;
    QMetaObject::invokeMethod(worker_, [w = worker_, paused] { w->setPaused(paused); }, Qt::QueuedConnection);
}

void Poller::onWorkerResult(const PollResultPtr& result) {
    // Taken once every slot has run (a stale result is taken too): then the worker may poll again.
    const auto taken = qScopeGuard([w = worker_] { w->delivered(); });
    if (!result || result->generation != generation_) return;  // from a connection since replaced
    emit resultReady(result);
}

void Poller::onWorkerState(quint64 generation, PollState state, const QString& message) {
    if (generation != generation_) return;
    state_ = state;
    emit stateChanged(state, message);
}

}  // namespace lockscope
