#include "metrics/metrics_scraper.hpp"

#include <QFutureWatcher>
#include <QNetworkAccessManager>
#include <QNetworkReply>
#include <QNetworkRequest>
#include <QRegularExpression>
#include <QTimer>
#include <QtConcurrent>

#include <algorithm>

#include "models/server_text.hpp"

namespace lockscope {

namespace ex = pglock::exposition;

namespace {

std::int64_t steadyNowMs() {
    return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

constexpr qint64 readChunkBytes = 256 * 1024;

QString formatBytes(qint64 bytes) {
    if (bytes >= (qint64(1) << 20) && bytes % (qint64(1) << 20) == 0) return QStringLiteral("%1 MiB").arg(bytes >> 20);
    return QStringLiteral("%1 bytes").arg(bytes);
}

}  // namespace

struct MetricsScraper::Endpoint {
    quint64 id = 0;
    EndpointStatus status;
    EndpointScrape latest;
    // The request in flight (fetch, then parse). serial changes whenever a result must be
    // dropped: a parse that finishes after stop() or after a newer fetch began is stale.
    bool busy = false;
    quint64 serial = 0;
    QPointer<QNetworkReply> reply;
    // The body as it came, in chunks: appending to one array would copy megabytes on the GUI
    // thread each time it grows; the chunks are joined on the thread pool, before parsing.
    QByteArrayList chunks;
    qint64 received = 0;
    QString abortReason;  // set when we abort the reply ourselves (deadline, size cap)
    QElapsedTimer started;
};

struct MetricsScraper::ParsedPage {
    ex::LockParse parse;
    qint64 bytes = 0;
};

void MetricsScraper::clearBody(Endpoint& e) {
    e.chunks.clear();
    e.received = 0;
}

MetricsScraper::MetricsScraper(QObject* parent)
    : QObject(parent), network_(new QNetworkAccessManager(this)), timer_(new QTimer(this)) {
    timer_->setInterval(interval_);
    connect(timer_, &QTimer::timeout, this, &MetricsScraper::scrapeNow);
}

MetricsScraper::~MetricsScraper() {
    // Replies emit finished() when aborted; nothing of ours may run while we are half destroyed.
    for (auto& e : endpoints_) {
        if (e->reply) {
            e->reply->disconnect(this);
            e->reply->abort();
        }
    }
}

QUrl MetricsScraper::endpointFromUserInput(const QString& text, QString* error) {
    const QString trimmed = text.trimmed();
    auto refuse = [error](const QString& why) {
        if (error) *error = why;
        return QUrl();
    };
    if (trimmed.isEmpty()) return refuse(tr("empty URL"));
    // Messages quote the input, but never the password of its user:password@ (up to the last '@').
    static const QRegularExpression userinfoPassword(QStringLiteral("^((?:[A-Za-z][A-Za-z0-9+.-]*://)?[^/:@]*:)[^/]*@"));
    const QString shown = QString(trimmed).replace(userinfoPassword, QStringLiteral("\\1***@"));
    QUrl url = QUrl::fromUserInput(trimmed);
    if (!url.isValid() || url.host().isEmpty()) return refuse(tr("not a URL: %1").arg(shown));
    if (url.scheme() != QLatin1String("http") && url.scheme() != QLatin1String("https")) {
        return refuse(tr("only http and https endpoints can be scraped: %1").arg(shown));
    }
    if (url.path().isEmpty() || url.path() == QLatin1String("/")) url.setPath(QStringLiteral("/metrics"));
    if (error) error->clear();
    return url;
}

QList<QUrl> MetricsScraper::endpoints() const {
    QList<QUrl> out;
    for (const auto& e : endpoints_) out << e->status.url;
    return out;
}

void MetricsScraper::setEndpoints(const QList<QUrl>& urls) {
    for (const QUrl& existing : endpoints()) {
        if (!urls.contains(existing)) removeEndpoint(existing);
    }
    for (const QUrl& url : urls) addEndpoint(url);
}

bool MetricsScraper::addEndpoint(const QUrl& url) {
    if (!url.isValid() || (url.scheme() != QLatin1String("http") && url.scheme() != QLatin1String("https")) ||
        find(url)) {
        return false;
    }
    auto endpoint = std::make_unique<Endpoint>();
    endpoint->id = nextId_++;
    endpoint->status.url = url;
    endpoints_.push_back(std::move(endpoint));
    emit endpointAdded(url, int(endpoints_.size()) - 1);
    if (isRunning()) fetch(*endpoints_.back());
    return true;
}

bool MetricsScraper::removeEndpoint(const QUrl& url) {
    Endpoint* endpoint = find(url);
    if (!endpoint) return false;
    const int index = indexOf(*endpoint);
    if (endpoint->reply) {
        endpoint->reply->disconnect(this);
        endpoint->reply->abort();
        endpoint->reply->deleteLater();
    }
    // A parse still running finds no endpoint with this id and is dropped.
    endpoints_.erase(endpoints_.begin() + index);
    emit endpointRemoved(url, index);
    return true;
}

QList<EndpointStatus> MetricsScraper::statuses() const {
    QList<EndpointStatus> out;
    for (const auto& e : endpoints_) out << e->status;
    return out;
}

EndpointStatus MetricsScraper::status(const QUrl& url) const {
    const Endpoint* e = find(url);
    return e ? e->status : EndpointStatus{};
}

EndpointScrape MetricsScraper::latestScrape(const QUrl& url) const {
    const Endpoint* e = find(url);
    return e ? e->latest : EndpointScrape{};
}

void MetricsScraper::setInterval(std::chrono::milliseconds interval) {
    interval = std::max(interval, std::chrono::milliseconds(100));
    if (interval == interval_) return;
    interval_ = interval;
    timer_->setInterval(interval_);  // a running timer restarts with the new interval
    emit intervalChanged();
}

bool MetricsScraper::isRunning() const { return timer_->isActive(); }

void MetricsScraper::start() {
    timer_->start();
    scrapeNow();
}

void MetricsScraper::stop() {
    timer_->stop();
    for (auto& e : endpoints_) {
        if (!e->busy) continue;
        if (e->reply) {
            e->reply->disconnect(this);
            e->reply->abort();
            e->reply->deleteLater();
        }
        e->busy = false;
        ++e->serial;
        clearBody(*e);
    }
}

void MetricsScraper::scrapeNow() {
    for (auto& e : endpoints_) fetch(*e);
}

MetricsScraper::Endpoint* MetricsScraper::find(const QUrl& url) const {
    for (const auto& e : endpoints_) {
        if (e->status.url == url) return e.get();
    }
    return nullptr;
}

MetricsScraper::Endpoint* MetricsScraper::findById(quint64 id) const {
    for (const auto& e : endpoints_) {
        if (e->id == id) return e.get();
    }
    return nullptr;
}

int MetricsScraper::indexOf(const Endpoint& endpoint) const {
    for (std::size_t i = 0; i < endpoints_.size(); ++i) {
        if (endpoints_[i].get() == &endpoint) return int(i);
    }
    return -1;
}

void MetricsScraper::fetch(Endpoint& e) {
    if (e.busy) return;  // the previous scrape of this endpoint is still running
    e.busy = true;
    ++e.serial;
    clearBody(e);
    e.abortReason.clear();
    e.started.start();
    e.status.lastAttempt = QDateTime::currentDateTime();

    QNetworkRequest request(e.status.url);
    request.setRawHeader("Accept", "text/plain;version=0.0.4;q=1,*/*;q=0.1");
    QNetworkReply* reply = network_->get(request);
    // Back-pressure: the network thread stops reading the socket while this much is unread, so
    // each readyRead hands over a bounded chunk and no single event-loop turn copies megabytes.
    reply->setReadBufferSize(readChunkBytes);
    e.reply = reply;
    const quint64 id = e.id;

    // One deadline for the whole exchange: a transfer timeout alone would let an endpoint that
    // trickles a byte a second hold the request open forever.
    auto* deadline = new QTimer(reply);
    deadline->setSingleShot(true);
    connect(deadline, &QTimer::timeout, this, [this, id, reply] {
        if (Endpoint* ep = findById(id); ep && ep->reply == reply) {
            abortFetch(*ep, tr("timed out: no complete response within %1 s").arg(double(timeout_.count()) / 1000.0));
        }
    });
    deadline->start(timeout_);

    connect(reply, &QNetworkReply::metaDataChanged, this, [this, id, reply] {
        Endpoint* ep = findById(id);
        const QVariant length = reply->header(QNetworkRequest::ContentLengthHeader);
        if (ep && ep->reply == reply && length.isValid() && length.toLongLong() > maxResponseBytes_) {
            abortFetch(*ep, tr("response too large: %1 announced, the limit is %2")
                                .arg(formatBytes(length.toLongLong()), formatBytes(maxResponseBytes_)));
        }
    });
    connect(reply, &QNetworkReply::readyRead, this, [this, id, reply] {
        if (Endpoint* ep = findById(id); ep && ep->reply == reply) takeBody(*ep, reply);
    });
    connect(reply, &QNetworkReply::finished, this, [this, id, reply] { onReplyFinished(id, reply); });
}

void MetricsScraper::takeBody(Endpoint& e, QNetworkReply* reply) {
    if (!e.abortReason.isEmpty()) return;
    QByteArray chunk = reply->readAll();
    e.received += chunk.size();
    if (!chunk.isEmpty()) e.chunks << std::move(chunk);
    if (e.received > maxResponseBytes_) {
        abortFetch(e, tr("response too large: more than %1").arg(formatBytes(maxResponseBytes_)));
    }
}

void MetricsScraper::abortFetch(Endpoint& e, const QString& reason) {
    if (!e.abortReason.isEmpty()) return;
    e.abortReason = reason;
    clearBody(e);
    if (e.reply) e.reply->abort();  // emits finished(), which reports the reason
}

void MetricsScraper::onReplyFinished(quint64 id, QNetworkReply* reply) {
    reply->deleteLater();
    Endpoint* e = findById(id);
    if (!e || e->reply != reply) return;
    e->reply.clear();
    if (!e->abortReason.isEmpty()) return fail(*e, e->abortReason);
    if (reply->error() != QNetworkReply::NoError) return fail(*e, reply->errorString());
    const int status = reply->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt();
    if (status != 200) {
        return fail(*e, tr("HTTP %1 %2")
                            .arg(status)
                            .arg(reply->attribute(QNetworkRequest::HttpReasonPhraseAttribute).toString()));
    }
    takeBody(*e, reply);
    if (!e->abortReason.isEmpty()) return fail(*e, e->abortReason);
    e->received = 0;
    parseInBackground(*e, std::exchange(e->chunks, {}));
}

void MetricsScraper::parseInBackground(Endpoint& e, QByteArrayList chunks) {
    ex::Limits limits;
    limits.max_input_bytes = std::size_t(std::max<qint64>(maxResponseBytes_, 0));
    const quint64 id = e.id;
    const quint64 serial = e.serial;
    auto* watcher = new QFutureWatcher<ParsedPage>(this);
    connect(watcher, &QFutureWatcher<ParsedPage>::finished, this, [this, watcher, id, serial] {
        watcher->deleteLater();
        onParsed(id, serial, watcher->result());
    });
    watcher->setFuture(QtConcurrent::run([chunks = std::move(chunks), limits] {
        const QByteArray body = chunks.size() == 1 ? chunks.front() : chunks.join();
        ParsedPage page;
        page.bytes = body.size();
        page.parse = ex::parse_lock_metrics(std::string_view(body.constData(), std::size_t(body.size())), limits);
        return page;
    }));
}

void MetricsScraper::onParsed(quint64 id, quint64 serial, const ParsedPage& page) {
    Endpoint* e = findById(id);
    if (!e || e->serial != serial || !e->busy) return;  // removed, stopped or superseded meanwhile
    if (page.parse.error) {
        return fail(*e, tr("malformed metrics: %1").arg(QString::fromStdString(page.parse.error->describe())));
    }
    e->busy = false;
    e->latest.data = std::make_shared<const ex::LockScrape>(page.parse.scrape);
    e->latest.steadyMs = steadyNowMs();
    EndpointStatus& s = e->status;
    s.state = EndpointStatus::State::ok;
    s.error.clear();
    s.lastSuccess = QDateTime::currentDateTime();
    s.samples = qsizetype(page.parse.scrape.samples);
    s.locks = qsizetype(page.parse.scrape.locks.size());
    s.bytes = page.bytes;
    s.durationMs = e->started.elapsed();
    const QUrl url = s.url;
    emit statusChanged(url, indexOf(*e));
    emit scraped(url);
}

void MetricsScraper::fail(Endpoint& e, const QString& error) {
    e.busy = false;
    clearBody(e);
    e.status.state = EndpointStatus::State::error;
    // Qt's own messages may quote the URL whole ("Error transferring http://u:secret@host/..."):
    // the basic-auth password is shown nowhere.
    QString shown = error;
    for (const QString& secret : {e.status.url.password(QUrl::FullyEncoded), e.status.url.password(QUrl::FullyDecoded)}) {
        if (!secret.isEmpty()) shown.replace(secret, QStringLiteral("***"));
    }
    // Then one line by the display rule (server_text.hpp): the reason phrase, Qt's message and a
    // parse error's excerpt are the other program's text.
    e.status.error = serverMessage(shown);
    emit statusChanged(e.status.url, indexOf(e));
}

}  // namespace lockscope
