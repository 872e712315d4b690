// The per-server session without a widget (a QCoreApplication, linked against the model library
// only), against the real server: a lock held by another connection shows up in its locks model
// named from the catalog, and one named by its holder's identity; after the server terminates the
// session's monitor backend its rows turn stale and come back by themselves; disconnect() and
// reconnect() do the same by hand; a new connectTo() forgets the previous server; and the
// session's read-only switch refuses taking a lock and terminating a backend.
#include <QCoreApplication>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QUuid>
#include <QtTest>

#include <cstdlib>
#include <string>

#include "actions/backend_actions.hpp"
#include "actions/lock_controller.hpp"
#include "actions/read_only_switch.hpp"
#include "catalog/catalog_service.hpp"
#include "history/history_recorder.hpp"
#include "models/locks_model.hpp"
#include "pg_conn.hpp"
#include "pg_test_env.hpp"
#include "pglock/key.hpp"
#include "pglock/lock.hpp"
#include "pglock/pool.hpp"
#include "session/server_session.hpp"
#include "stores/catalog_name_cache.hpp"
#include "stores/catalog_store.hpp"

namespace {

using Conn = pglock::test::PgConn;
using lockscope::LocksModel;
using lockscope::PollState;

// The row of `key` in the session's locks model (invalid when absent).
QModelIndex lockRow(LocksModel& model, qint64 key) {
    for (int row = 0; row < model.rowCount(); ++row) {
        const QModelIndex i = model.index(row, LocksModel::Name);
        if (i.data(LocksModel::KeyRole).toLongLong() == key) return i;
    }
    return {};
}

int rowsWithKey(LocksModel& model, qint64 key) {
    int n = 0;
    for (int row = 0; row < model.rowCount(); ++row) n += model.index(row, 0).data(LocksModel::KeyRole).toLongLong() == key ? 1 : 0;
    return n;
}

std::string unique(const char* prefix) { return prefix + QUuid::createUuid().toString(QUuid::Id128).left(8).toStdString(); }

// A session wired to a catalog as the window wires it: the service reads the catalog on its
// worker, the shared name cache answers from its snapshots, the session renames on each one.
struct World {
    QTemporaryDir dir;
    lockscope::CatalogStore catalog{dir.filePath(QStringLiteral("catalog.sqlite"))};
    lockscope::CatalogService service{catalog};
    lockscope::CatalogNameCache names;
    lockscope::ServerSession session{names};
    World() {
        QObject::connect(&service, &lockscope::CatalogService::snapshotChanged, &session, [this](const lockscope::CatalogSnapshotPtr& s) {
            names.setSnapshot(s);
            session.refreshNames();
        });
        session.poller().setInterval(std::chrono::milliseconds(250));
    }
};

}  // namespace

class TestServerSession : public QObject {
    Q_OBJECT
    std::string dsn_;

private slots:
    void initTestCase() {
        auto dsn = pglock::test::test_dsn();
        QVERIFY2(dsn.has_value(), "no test server");
        dsn_ = *dsn;
        QStandardPaths::setTestModeEnabled(true);  // the history files go to a scratch place
    }

    void names_locks_and_recovers_after_its_monitor_backend_is_terminated() {
        World w;
        const std::string catalogued = unique("orders.session-");
        const qint64 catalogKey = pglock::key_of(catalogued);
        QCOMPARE(w.catalog.add(QByteArray::fromStdString(catalogued)), lockscope::CatalogStore::AddResult::added);
        w.service.reload();

        const std::string appName = unique("lockscope-session-test-");
        w.session.connectTo(QString::fromStdString(dsn_ + " application_name=" + appName), {}, QString::fromStdString(appName));
        LocksModel& model = w.session.locksModel();

        // Another application holds the catalogued lock (plain libpq: no identity of its own).
        Conn holder(dsn_);
        QVERIFY(holder.ok());
        holder.one("SELECT pg_advisory_lock(" + std::to_string(catalogKey) + ")");
        const int holderPid = std::atoi(holder.one("SELECT pg_backend_pid()").c_str());
        QTRY_VERIFY_WITH_TIMEOUT(lockRow(model, catalogKey).isValid(), 10000);
        QTRY_COMPARE_WITH_TIMEOUT(lockRow(model, catalogKey).data(LocksModel::NameSourceRole).toString(), QStringLiteral("catalog"), 10000);
        QCOMPARE(lockRow(model, catalogKey).data().toString(), QString::fromStdString(catalogued));
        QVERIFY(lockRow(model, catalogKey).siblingAtColumn(LocksModel::Holders).data().toString().contains(QString::number(holderPid)));
        // The hold's start comes with the poll result the model was fed.
        QTRY_VERIFY_WITH_TIMEOUT(!lockRow(model, catalogKey).siblingAtColumn(LocksModel::HeldFor).data().toString().isEmpty(), 5000);

        // A lock in no catalog, named by its holder's identity (the library's application_name).
        const std::string adhoc = unique("adhoc.session-");
        const qint64 adhocKey = pglock::key_of(adhoc);
        pglock::PoolOptions po;
        po.overrides = {{"application_name", "adhoc"}};
        pglock::Pool pool(dsn_, po);
        pglock::Lock lock(pool, adhoc);
        pglock::Guard guard = lock.acquire();
        QTRY_VERIFY_WITH_TIMEOUT(lockRow(model, adhocKey).isValid(), 10000);
        QCOMPARE(lockRow(model, adhocKey).data(LocksModel::NameSourceRole).toString(), QStringLiteral("holder"));
        QVERIFY2(lockRow(model, adhocKey).data().toString().contains(QString::fromStdString(adhoc)),
                 qPrintable(lockRow(model, adhocKey).data().toString()));
        // The rule is the session's: its nameOf() says the same as the model.
        const pglock::monitor::LockId adhocId{pglock::monitor::KeyForm::bigint, pglock::tag_of(adhocKey)};
        QCOMPARE(w.session.nameOf(adhocId, adhocKey, std::nullopt).source, lockscope::LockNameSource::holder);

        // The server ends the session's monitor backend: stale rows meanwhile, then back by itself.
        bool sawStale = false;
        QSignalSpy states(&w.session, &lockscope::ServerSession::stateChanged);
        connect(&w.session, &lockscope::ServerSession::stateChanged, this, [&](PollState state) {
            if (state == PollState::disconnected) sawStale = sawStale || model.stale();
        });
        Conn admin(dsn_);
        QCOMPARE(admin.one("SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE application_name = '" + appName + "'"),
                 std::string("1"));
        QTRY_VERIFY_WITH_TIMEOUT(std::any_of(states.begin(), states.end(),
                                             [](const QList<QVariant>& a) { return a.at(0).value<PollState>() == PollState::disconnected; }),
                                 10000);
        QVERIFY2(sawStale, "the rows were not stale while the session was disconnected");
        QTRY_VERIFY_WITH_TIMEOUT(w.session.poller().state() == PollState::connected && !model.stale(), 20000);
        QTRY_COMPARE_WITH_TIMEOUT(rowsWithKey(model, catalogKey), 1, 10000);  // no duplicate after the reconnect
        QCOMPARE(rowsWithKey(model, adhocKey), 1);

        // By hand: disconnect keeps the rows, greyed; reconnect polls again with the same connection.
        w.session.disconnect();
        QCOMPARE(w.session.poller().state(), PollState::stopped);
        QVERIFY(model.stale());
        QCOMPARE(rowsWithKey(model, catalogKey), 1);
        const quint64 before = w.session.latest() ? w.session.latest()->generation : 0;
        w.session.reconnect();
        QTRY_VERIFY_WITH_TIMEOUT(w.session.latest() && w.session.latest()->generation != before && !model.stale(), 15000);
        QCOMPARE(rowsWithKey(model, catalogKey), 1);

        // A new connection forgets the previous one's rows at once.
        QSignalSpy cleared(&w.session, &lockscope::ServerSession::cleared);
        w.session.connectTo(QString::fromStdString(dsn_), {}, QStringLiteral("again"));
        QCOMPARE(cleared.size(), 1);
        QCOMPARE(model.rowCount(), 0);
        QVERIFY(!w.session.latest());
        QTRY_COMPARE_WITH_TIMEOUT(rowsWithKey(model, catalogKey), 1, 10000);
        QVERIFY(!guard.release());
    }

    void read_only_refuses_take_and_terminate() {
        World w;
        Conn holder(dsn_);
        QVERIFY(holder.ok());
        const std::string name = unique("orders.read-only-");
        const qint64 key = pglock::key_of(name);
        holder.one("SELECT pg_advisory_lock(" + std::to_string(key) + ")");
        const std::string holderPid = holder.one("SELECT pg_backend_pid()");
        w.session.connectTo(QString::fromStdString(dsn_), {}, QString::fromStdString(unique("read-only-")), /*readOnly=*/true);
        QVERIFY(w.session.readOnlySwitch().on());
        QTRY_VERIFY_WITH_TIMEOUT(lockRow(w.session.locksModel(), key).isValid(), 10000);

        const lockscope::ActionOutcome take = w.session.lockController().take(QByteArray::fromStdString(unique("orders.never-")),
                                                                               lockscope::TakeMode::Try, false);
        QVERIFY2(!take.refusal.isEmpty(), "a read-only session took a lock");
        QCOMPARE(w.session.lockController().activeCount(), 0);
        const lockscope::ActionOutcome terminate = w.session.backendActions().terminate(std::atoi(holderPid.c_str()));
        QVERIFY2(!terminate.refusal.isEmpty(), "a read-only session terminated a backend");
        QTest::qWait(500);  // anything sent off would have ended the holder by now
        QCOMPARE(holder.one("SELECT pg_backend_pid()"), holderPid);

        // The switch is the session's: off, the same terminate goes through.
        w.session.readOnlySwitch().set(false);
        QSignalSpy finished(&w.session.backendActions(), &lockscope::BackendActions::finished);
        QVERIFY(w.session.backendActions().terminate(std::atoi(holderPid.c_str())).refusal.isEmpty());
        QTRY_COMPARE_WITH_TIMEOUT(finished.size(), 1, 10000);
        QVERIFY2(finished.first().at(2).toBool(), qPrintable(finished.first().at(3).toString()));
        QTRY_VERIFY_WITH_TIMEOUT(!lockRow(w.session.locksModel(), key).isValid(), 10000);
    }
};

QTEST_GUILESS_MAIN(TestServerSession)
#include "test_server_session.moc"
