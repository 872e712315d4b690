// Fetches the Prometheus /metrics pages of the applications that use the library, on an
// interval, and parses them for the lock series.
//
// Everything is asynchronous on the GUI thread's event loop (QNetworkAccessManager), and pages
// are parsed on the thread pool, so a slow, dead or hostile endpoint costs the GUI nothing:
// each request has an overall deadline and a size cap, and fails visibly in its endpoint's
// status. One request per endpoint at a time: a tick that finds the previous one still running
// skips that endpoint instead of piling up requests.
#pragma once

#include <QByteArrayList>
#include <QElapsedTimer>
#include <QList>
#include <QObject>
#include <QPointer>
#include <QUrl>

#include <chrono>
#include <memory>
#include <vector>

#include "metrics/scrape_types.hpp"

class QNetworkAccessManager;
class QNetworkReply;
class QTimer;

namespace lockscope {

class MetricsScraper : public QObject {
    Q_OBJECT
public:
    static constexpr std::chrono::milliseconds defaultInterval{15000};
    static constexpr std::chrono::milliseconds defaultTimeout{5000};
    static constexpr qint64 defaultMaxResponseBytes = qint64(8) << 20;

    explicit MetricsScraper(QObject* parent = nullptr);
    ~MetricsScraper() override;

    // An endpoint as an operator types it: "host:port" gets http:// and the path /metrics.
    // Returns an invalid QUrl (and the reason in *error) for anything that is not http(s).
    static QUrl endpointFromUserInput(const QString& text, QString* error = nullptr);

    QList<QUrl> endpoints() const;
    // Replaces the list; endpoints already present keep their status and their last scrape.
    void setEndpoints(const QList<QUrl>& urls);
    bool addEndpoint(const QUrl& url);  // false: not http(s), or already there
    bool removeEndpoint(const QUrl& url);

    QList<EndpointStatus> statuses() const;
    EndpointStatus status(const QUrl& url) const;
    EndpointScrape latestScrape(const QUrl& url) const;  // data is null before the first good scrape

    std::chrono::milliseconds interval() const { return interval_; }
    void setInterval(std::chrono::milliseconds interval);
    std::chrono::milliseconds timeout() const { return timeout_; }  // the whole request, connect to last byte
    void setTimeout(std::chrono::milliseconds timeout) { timeout_ = timeout; }
    qint64 maxResponseBytes() const { return maxResponseBytes_; }
    void setMaxResponseBytes(qint64 bytes) { maxResponseBytes_ = bytes; }

    bool isRunning() const;
    void start();  // scrapes every endpoint now, then every interval
    void stop();   // aborts what is in flight; results still being parsed are dropped

public slots:
    void scrapeNow();

signals:
    void endpointAdded(const QUrl& url, int index);
    void endpointRemoved(const QUrl& url, int index);
    void statusChanged(const QUrl& url, int index);
    void scraped(const QUrl& url);  // a good page: latestScrape(url) has it
    void intervalChanged();

private:
    struct Endpoint;
    struct ParsedPage;

    static void clearBody(Endpoint& endpoint);

    Endpoint* find(const QUrl& url) const;
    Endpoint* findById(quint64 id) const;
    int indexOf(const Endpoint& endpoint) const;
    void fetch(Endpoint& endpoint);
    void abortFetch(Endpoint& endpoint, const QString& reason);
    void takeBody(Endpoint& endpoint, QNetworkReply* reply);
    void onReplyFinished(quint64 id, QNetworkReply* reply);
    void parseInBackground(Endpoint& endpoint, QByteArrayList chunks);
    void onParsed(quint64 id, quint64 serial, const ParsedPage& page);
    void fail(Endpoint& endpoint, const QString& error);

    QNetworkAccessManager* network_;
    QTimer* timer_;
    std::vector<std::unique_ptr<Endpoint>> endpoints_;
    quint64 nextId_ = 1;
    std::chrono::milliseconds interval_ = defaultInterval;
    std::chrono::milliseconds timeout_ = defaultTimeout;
    qint64 maxResponseBytes_ = defaultMaxResponseBytes;
};

}  // namespace lockscope
