#include "metrics/claims_tracker.hpp"

#include <QDateTime>

#include "metrics/metrics_scraper.hpp"
#include "pglock/duration_text.hpp"
#include "stores/name_import.hpp"

namespace lockscope {

using pglock::claims::Disagreement;
using pglock::claims::Kind;

namespace {
std::string keyOf(const QUrl& url) { return url.toString().toStdString(); }
}  // namespace

ClaimsTracker::ClaimsTracker(MetricsScraper* scraper, QObject* parent) : QObject(parent), scraper_(scraper) {
    connect(scraper, &MetricsScraper::scraped, this, [this](const QUrl& url) {
        const EndpointScrape scrape = scraper_->latestScrape(url);
        if (!scrape.data) return;
        join_.scrape(keyOf(url), scrape.data->held, now());
        publish();
    });
    // A failing endpoint's claims are unknown: its disagreements go rather than go stale.
    connect(scraper, &MetricsScraper::statusChanged, this, [this](const QUrl& url, int) {
        if (scraper_->status(url).state != EndpointStatus::State::error) return;
        join_.forget(keyOf(url));
        publish();
    });
    connect(scraper, &MetricsScraper::endpointRemoved, this, [this](const QUrl& url, int) {
        join_.forget(keyOf(url));
        publish();
    });
}

double ClaimsTracker::now() { return static_cast<double>(QDateTime::currentMSecsSinceEpoch()) / 1000.0; }

void ClaimsTracker::onPoll(const pglock::monitor::Snapshot& snapshot) {
    if (scraper_->endpoints().isEmpty()) return;  // nothing to join: no walk over the locks
    join_.poll(snapshot, now());
    polled_ = true;
    publish();
}

void ClaimsTracker::clear() {
    join_ = {};
    polled_ = false;
    publish();
}

void ClaimsTracker::publish() {
    auto next = join_.confirmed();
    const auto same = [](const Disagreement& a, const Disagreement& b) {
        return a.kind == b.kind && a.endpoint == b.endpoint && a.key == b.key && a.pid == b.pid;
    };
    if (std::equal(next.begin(), next.end(), confirmed_.begin(), confirmed_.end(), same)) return;
    confirmed_ = std::move(next);
    emit changed();
}

QString ClaimsTracker::line(const Disagreement& d) const {
    const QString since = QString::fromStdString(pglock::duration_text(now() - d.since));
    // The name as the application's page gives it: shown as every view shows a name.
    const QString name = d.name.empty() ? tr("(unknown) %1").arg(d.key)
                                        : names::printable(QByteArrayView(d.name.data(), static_cast<qsizetype>(d.name.size())));
    if (d.kind == Kind::ghost) {
        return tr("Ghost: %1 claims %2 on pid %3, which does not hold it (for %4)")
            .arg(QString::fromStdString(d.endpoint), name).arg(d.pid).arg(since);
    }
    return tr("Leak: pid %1 of %2 holds %3, which it does not claim (for %4)")
        .arg(d.pid).arg(QString::fromStdString(d.endpoint), name, since);
}

QString ClaimsTracker::summary(const QUrl& endpoint) const {
    if (!polled_ || scraper_->status(endpoint).state != EndpointStatus::State::ok) return {};
    int ghosts = 0, leaks = 0;
    for (const auto& d : confirmed_) {
        if (d.endpoint != keyOf(endpoint)) continue;
        (d.kind == Kind::ghost ? ghosts : leaks) += 1;
    }
    if (ghosts + leaks == 0) return tr("agrees");
    QStringList parts;
    if (ghosts) parts << (ghosts == 1 ? tr("1 ghost") : tr("%1 ghosts").arg(ghosts));
    if (leaks) parts << (leaks == 1 ? tr("1 leak") : tr("%1 leaks").arg(leaks));
    return parts.join(QStringLiteral(", "));
}

QString ClaimsTracker::details(const QUrl& endpoint) const {
    QStringList lines;
    for (const auto& d : confirmed_) {
        if (d.endpoint == keyOf(endpoint)) lines << line(d);
    }
    return lines.join(QLatin1Char('\n'));
}

ClaimsTracker::OrphanEvidence ClaimsTracker::withUnclaimed(OrphanEvidence evidence) const {
    pglock::monitor::add_unclaimed(evidence, confirmed_, now());
    return evidence;
}

QHash<qint64, QString> ClaimsTracker::marksByKey() const {
    QHash<qint64, QString> marks;
    for (const auto& d : confirmed_) {
        QString& text = marks[static_cast<qint64>(d.key)];
        if (!text.isEmpty()) text += QLatin1Char('\n');
        text += line(d);
    }
    return marks;
}

}  // namespace lockscope
