// Ghosts and leaks in lockscope, end to end: a real process using the library
// (pglock_claims_holder) holds two locks with its metrics scraped by a ServerSession. Its first
// lock is lost while the guard cannot be told (its session is leased) and a third lock is taken
// on its second guard's session behind its back: the App metrics tab's endpoint row says
// "1 ghost, 1 leak", and the locks view marks the leaked lock's row with a tooltip that says so.
#include <QGuiApplication>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QUuid>
#include <QtTest>

#include <string>

#include "claims_holder_process.hpp"
#include "metrics/claims_tracker.hpp"
#include "metrics/endpoint_status_model.hpp"
#include "metrics/metrics_scraper.hpp"
#include "models/locks_model.hpp"
#include "pg_conn.hpp"
#include "pg_test_env.hpp"
#include "pglock/key.hpp"
#include "session/server_session.hpp"
#include "stores/catalog_name_cache.hpp"

using lockscope::EndpointStatusModel;
using lockscope::LocksModel;

namespace {

QModelIndex lockRow(LocksModel& model, qint64 key) {
    for (int row = 0; row < model.rowCount(); ++row) {
        const QModelIndex i = model.index(row, LocksModel::Name);
        if (i.data(LocksModel::KeyRole).toLongLong() == key) return i;
    }
    return {};
}

}  // namespace

class TestClaimsView : public QObject {
    Q_OBJECT

private slots:
    void initTestCase() { QStandardPaths::setTestModeEnabled(true); }

    void ghost_and_leak_shown_per_endpoint_and_per_lock() {
        try {
            const auto dsn = pglock::test::test_dsn();
            QVERIFY2(dsn.has_value(), "no test server");
            const QString name = QStringLiteral("ui.claims.") + QUuid::createUuid().toString(QUuid::Id128).left(8);
            pglock::test::ClaimsHolder holder(QStringLiteral(PGLOCK_CLAIMS_HOLDER_PATH), QString::fromStdString(*dsn), name);

            lockscope::CatalogNameCache names;
            lockscope::ServerSession session(names);
            session.poller().setInterval(std::chrono::milliseconds(250));
            session.metricsScraper().setInterval(std::chrono::milliseconds(500));
            EndpointStatusModel endpoints(&session.metricsScraper());
            endpoints.setClaimsTracker(&session.claimsTracker());
            session.connectTo(QString::fromStdString(*dsn), {}, QStringLiteral("claims"), true, {QUrl(holder.url())});
            const QModelIndex cell = endpoints.index(0, EndpointStatusModel::ClaimsColumn);

            // Believed and held agree first.
            QTRY_COMPARE_WITH_TIMEOUT(cell.data().toString(), QStringLiteral("agrees"), 20000);
            const qint64 extraKey = pglock::key_of((name + ".extra").toStdString());

            holder.lease();
            pglock::test::PgConn admin(*dsn);
            QCOMPARE(admin.one("SELECT pg_terminate_backend(" + std::to_string(holder.ghostPid()) + ")"), std::string("t"));

            QTRY_COMPARE_WITH_TIMEOUT(cell.data().toString(), QStringLiteral("1 ghost, 1 leak"), 20000);
            const QString details = cell.data(Qt::ToolTipRole).toString();
            QVERIFY2(details.contains(QStringLiteral("Ghost: ")) && details.contains(name + ".ghost") &&
                         details.contains(QStringLiteral("pid %1").arg(holder.ghostPid())),
                     qPrintable(details));
            QVERIFY2(details.contains(QStringLiteral("Leak: pid %1").arg(holder.leakPid())), qPrintable(details));

            // Per lock: the leaked key's row carries the marker and says why.
            LocksModel& model = session.locksModel();
            QTRY_VERIFY_WITH_TIMEOUT(lockRow(model, extraKey).data(LocksModel::ClaimsRole).isValid(), 10000);
            const QModelIndex row = lockRow(model, extraKey);
            QVERIFY(row.data(Qt::DecorationRole).isValid());
            QVERIFY2(row.data(Qt::ToolTipRole).toString().contains(QStringLiteral("Leak: pid %1").arg(holder.leakPid())),
                     qPrintable(row.data(Qt::ToolTipRole).toString()));
            // And its holder is probably orphaned: the State cell's marker, and the evidence names
            // the application's endpoint.
            const QModelIndex state = row.siblingAtColumn(LocksModel::State);
            QTRY_VERIFY_WITH_TIMEOUT(state.data(Qt::DecorationRole).isValid(), 10000);
            const QString stateTip = state.data(Qt::ToolTipRole).toString();
            QVERIFY2(stateTip.contains(QStringLiteral("PID %1 is probably orphaned:").arg(holder.leakPid())) &&
                         stateTip.contains(QStringLiteral("its application (%1) does not claim key %2").arg(holder.url()).arg(extraKey)),
                     qPrintable(stateTip));
            // The guard's own lock on that backend is claimed: no marker.
            const qint64 leakKey = pglock::key_of((name + ".leak").toStdString());
            QVERIFY(lockRow(model, leakKey).isValid());
            QVERIFY(!lockRow(model, leakKey).data(LocksModel::ClaimsRole).isValid());
            // Nor an orphan triangle: the unclaimed evidence speaks of the leaked key only.
            QVERIFY(!lockRow(model, leakKey).siblingAtColumn(LocksModel::State).data(Qt::DecorationRole).isValid());
            session.disconnect();
        } catch (const std::exception& e) {
            QFAIL(e.what());
        }
    }
};

QTEST_MAIN(TestClaimsView)  // a QGuiApplication: the marker is a palette colour
#include "test_claims_view.moc"
