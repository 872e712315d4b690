// What the applications believe they hold (their lock_held_info, from the scraper) against what
// the server holds (the polls): ghosts and leaks per endpoint and per key, by core's join
// (pglock/claims.hpp: two polls and one scrape before anything is reported). Widget-free; the
// join is a walk over one snapshot's locks, done only while some endpoint is scraped.
#pragma once

#include <QHash>
#include <QObject>
#include <QString>
#include <QUrl>

#include <map>
#include <vector>

#include "pglock/claims.hpp"
#include "pglock/orphan.hpp"

namespace lockscope {

class MetricsScraper;

class ClaimsTracker : public QObject {
    Q_OBJECT
public:
    explicit ClaimsTracker(MetricsScraper* scraper, QObject* parent = nullptr);

    // Every poll's snapshot, in order.
    void onPoll(const pglock::monitor::Snapshot& snapshot);
    // Another server: forget every disagreement and what the endpoints claimed.
    void clear();

    // Confirmed disagreements, by endpoint, kind, key, pid.
    const std::vector<pglock::claims::Disagreement>& confirmed() const { return confirmed_; }
    // "1 ghost, 1 leak" / "agrees" / "" before the join could run for that endpoint.
    QString summary(const QUrl& endpoint) const;
    // One plain-text line per disagreement of the endpoint, with how long it has lasted.
    QString details(const QUrl& endpoint) const;
    // Per key: the lines of every disagreement about it (the locks view's marker and tooltip).
    QHash<qint64, QString> marksByKey() const;

    // A poll's orphan evidence with each confirmed leak added as its holder's "unclaimed" sign
    // (pglock::monitor::add_unclaimed): the locks view's State marker and tooltip.
    using OrphanEvidence = std::map<int, std::vector<pglock::monitor::OrphanEvidence>>;
    OrphanEvidence withUnclaimed(OrphanEvidence evidence) const;

signals:
    void changed();

private:
    static double now();
    void publish();
    QString line(const pglock::claims::Disagreement& d) const;

    MetricsScraper* scraper_;
    pglock::claims::Join join_;
    bool polled_ = false;
    std::vector<pglock::claims::Disagreement> confirmed_;
};

}  // namespace lockscope
