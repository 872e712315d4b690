// LocksModel on a real server: a plain libpq session takes an advisory lock, the monitor polls,
// and the model shows the lock with its holder; a second session waits and shows as a child;
// after release the row goes with rowsRemoved, never a reset.
#include <libpq-fe.h>

#include <QAbstractItemModelTester>
#include <QElapsedTimer>
#include <QSignalSpy>
#include <QUuid>
#include <QtTest>

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "models/locks_model.hpp"
#include "pg_test_env.hpp"
#include "pglock/key.hpp"
#include "pglock/lock.hpp"
#include "pglock/monitor.hpp"
#include "pglock/session.hpp"

using lockscope::LocksModel;
using namespace pglock::monitor;

namespace {

using Conn = std::unique_ptr<PGconn, decltype(&PQfinish)>;
using Res = std::unique_ptr<PGresult, decltype(&PQclear)>;

// A plain libpq session with an application_name; the DSN may be a conninfo string or a URI.
Conn connectAs(const std::string& dsn, const char* app) {
    const char* keys[] = {"dbname", "application_name", nullptr};
    const char* values[] = {dsn.c_str(), app, nullptr};
    return Conn(PQconnectdbParams(keys, values, 1), &PQfinish);
}

bool run(PGconn* c, const char* sql, std::int64_t key) {
    const std::string k = std::to_string(key);
    const char* params[] = {k.c_str()};
    Res r(PQexecParams(c, sql, 1, nullptr, params, nullptr, nullptr, 0), &PQclear);
    return PQresultStatus(r.get()) == PGRES_TUPLES_OK;
}

}  // namespace

class TestLocksModelPg : public QObject {
    Q_OBJECT

private slots:
    void real_lock_appears_and_goes() {
        const auto dsn = pglock::test::test_dsn();
        QVERIFY2(dsn, "no test server: run under ctest (pg fixture) or set PGLOCK_TEST_DSN");
        const std::string name = "lockscope.model-test." + QUuid::createUuid().toString(QUuid::WithoutBraces).toStdString();
        const std::int64_t key = pglock::key_of(name);
        const LockId id{KeyForm::bigint, pglock::tag_of(key)};

        Conn holder = connectAs(*dsn, "lockscope-model-holder");
        QVERIFY2(PQstatus(holder.get()) == CONNECTION_OK, PQerrorMessage(holder.get()));
        QVERIFY2(run(holder.get(), "SELECT pg_advisory_lock($1::bigint)", key), PQerrorMessage(holder.get()));
        const int holderPid = PQbackendPID(holder.get());

        LocksModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        HoldTracker tracker;
        model.setHeldSinceProvider([&tracker](const LockId& lock, int pid) { return tracker.held_since(lock, pid); });
        model.setNamer(lockscope::catalogNamer([&](qint64 k) -> std::optional<QByteArray> {
            if (k == key) return QByteArray::fromStdString(name);
            return std::nullopt;
        }));
        pglock::Session monitor = pglock::Session::connect(*dsn);
        const auto pollOnce = [&] {
            auto snap = std::make_shared<const Snapshot>(poll(monitor));
            tracker.update(*snap);
            model.applySnapshot(snap);
        };
        // Polls until `done` (other tests may hold locks too: only ours is looked at).
        const auto pollUntil = [&](const std::function<bool()>& done) {
            QElapsedTimer t;
            t.start();
            for (;;) {
                pollOnce();
                if (done() || t.hasExpired(10'000)) return done();
                std::this_thread::sleep_for(std::chrono::milliseconds(20));
            }
        };
        QSignalSpy resets(&model, &QAbstractItemModel::modelReset);

        pollOnce();
        QModelIndex row = model.indexOfLock(id);
        QVERIFY2(row.isValid(), "the held lock is not in the model");
        QCOMPARE(row.data(LocksModel::KeyRole).toLongLong(), key);
        QCOMPARE(row.data(LocksModel::PidsRole).value<QList<int>>(), QList<int>{holderPid});
        QCOMPARE(row.data().toString(), QString::fromStdString(name));
        QCOMPARE(model.index(row.row(), LocksModel::Key).data().toString(), QString::number(key));
        QCOMPARE(model.index(row.row(), LocksModel::Holders).data().toString(), QString::number(holderPid));
        QCOMPARE(model.index(row.row(), LocksModel::Mode).data().toString(), QStringLiteral("exclusive"));
        QCOMPARE(model.index(row.row(), LocksModel::State).data().toString(), QStringLiteral("idle"));
        QCOMPARE(model.index(row.row(), LocksModel::Application).data().toString(), QStringLiteral("lockscope-model-holder"));
        QVERIFY(!model.index(row.row(), LocksModel::Client).data().toString().isEmpty());
        QVERIFY(!model.index(row.row(), LocksModel::HeldFor).data().toString().isEmpty());
        QCOMPARE(model.rowCount(row), 0);

        // A second session waits for it: a child row under the lock.
        Conn waiter = connectAs(*dsn, "lockscope-model-waiter");
        QVERIFY2(PQstatus(waiter.get()) == CONNECTION_OK, PQerrorMessage(waiter.get()));
        const std::string k = std::to_string(key);
        const char* params[] = {k.c_str()};
        QVERIFY(PQsendQueryParams(waiter.get(), "SELECT pg_advisory_lock($1::bigint)", 1, nullptr, params, nullptr, nullptr, 0));
        QVERIFY2(pollUntil([&] { return model.rowCount(model.indexOfLock(id)) == 1; }), "the waiter never showed");
        row = model.indexOfLock(id);
        const QModelIndex w = model.index(0, 0, row);
        QCOMPARE(w.data().toString(), QStringLiteral("waiting: pid %1").arg(PQbackendPID(waiter.get())));
        QCOMPARE(model.index(0, LocksModel::Holders, row).data().toString(), QStringLiteral("blocked by %1").arg(holderPid));
        QCOMPARE(model.index(0, LocksModel::Application, row).data().toString(), QStringLiteral("lockscope-model-waiter"));
        QVERIFY(model.index(0, LocksModel::HeldFor, row).data().toString().startsWith("waiting"));
        QCOMPARE(model.index(row.row(), LocksModel::Waiters).data().toString(), QStringLiteral("1"));

        // The waiter gives up (cancel): its child row is removed.
        QSignalSpy removed(&model, &QAbstractItemModel::rowsRemoved);
        {
            std::unique_ptr<PGcancel, decltype(&PQfreeCancel)> cancel(PQgetCancel(waiter.get()), &PQfreeCancel);
            char err[256];
            QVERIFY2(PQcancel(cancel.get(), err, sizeof err), err);
            while (PGresult* r = PQgetResult(waiter.get())) PQclear(r);
        }
        QVERIFY2(pollUntil([&] { return model.rowCount(model.indexOfLock(id)) == 0; }), "the cancelled waiter stayed");
        QVERIFY(std::any_of(removed.begin(), removed.end(), [&](const QList<QVariant>& args) {
            return args[0].value<QModelIndex>() == model.indexOfLock(id);
        }));

        // Release: the row goes with rowsRemoved.
        const QPersistentModelIndex watched(model.indexOfLock(id));
        bool sawOurs = false;
        connect(&model, &QAbstractItemModel::rowsAboutToBeRemoved, this, [&](const QModelIndex& parent, int first, int last) {
            for (int r = first; !parent.isValid() && r <= last; ++r)
                sawOurs = sawOurs || model.index(r, 0).data(LocksModel::KeyRole).toLongLong() == key;
        });
        QVERIFY2(run(holder.get(), "SELECT pg_advisory_unlock($1::bigint)", key), PQerrorMessage(holder.get()));
        QVERIFY2(pollUntil([&] { return !model.indexOfLock(id).isValid(); }), "the released lock stayed");
        QVERIFY(sawOurs);
        QVERIFY(!watched.isValid());
        QCOMPARE(resets.count(), 0);
        QVERIFY(model.invariantsHold());
    }

    // Keys no catalog knows, held through the library over TCP: the name comes from the holder's
    // application_name, verified by its hash; a name cut to fit is a prefix, never verified. The
    // holder's application and address show beside its pid.
    void uncatalogued_key_named_from_its_holder() {
        const auto dsn = pglock::test::test_dsn();
        QVERIFY2(dsn, "no test server: run under ctest (pg fixture) or set PGLOCK_TEST_DSN");
        pglock::PoolOptions po;
        po.overrides = {{"application_name", "model-worker"}, {"host", "127.0.0.1"}};
        pglock::Pool pool(*dsn, po);
        const std::string name = "orders." + QUuid::createUuid().toString(QUuid::Id128).left(8).toStdString();
        std::string longName = "invoices." + QUuid::createUuid().toString(QUuid::Id128).toStdString();
        for (int i = 0; i < 20; ++i) longName += "\xd1\x91";  // "ё": escaped, far beyond 63 bytes
        pglock::Lock lock(pool, name), cutLock(pool, longName);
        pglock::Guard guard = lock.acquire();
        pglock::Guard cutGuard = cutLock.acquire();

        LocksModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        model.setNamer(lockscope::catalogNamer([](qint64) -> std::optional<QByteArray> { return std::nullopt; }));  // an empty catalog
        pglock::Session monitor = pglock::Session::connect(*dsn);
        model.applySnapshot(std::make_shared<const Snapshot>(poll(monitor)));

        const QModelIndex row = model.indexOfLock({KeyForm::bigint, pglock::tag_of(lock.key())});
        QVERIFY2(row.isValid(), "the held lock is not in the model");
        // The name is isolated (FSI ... PDI) so that bidi text in it cannot reorder the suffix.
        QCOMPARE(row.data().toString(), QChar(0x2068) + QString::fromStdString(name) + QChar(0x2069) + " (from holder)");
        QCOMPARE(row.data(LocksModel::NameSourceRole).toString(), QStringLiteral("holder"));
        QCOMPARE(row.data(LocksModel::HolderNameRole).toByteArray(), QByteArray::fromStdString(name));
        QVERIFY(!row.data(LocksModel::IsUnknownRole).toBool());
        QVERIFY(row.data(Qt::ToolTipRole).toString().contains("verified"));
        QCOMPARE(model.index(row.row(), LocksModel::Application).data().toString(),
                 QString::fromStdString("model-worker pglock:" + name));
        QCOMPARE(model.index(row.row(), LocksModel::Client).data().toString(), QStringLiteral("127.0.0.1"));
        const QString who = model.index(row.row(), LocksModel::Holders).data(Qt::ToolTipRole).toString();
        QVERIFY2(who.contains(QStringLiteral("pid %1: model-worker pglock:").arg(guard.backend_pid())), qPrintable(who));
        QVERIFY2(who.contains(QStringLiteral("127.0.0.1")), qPrintable(who));

        const QModelIndex cut = model.indexOfLock({KeyForm::bigint, pglock::tag_of(cutLock.key())});
        QVERIFY(cut.isValid());
        const QString shown = cut.data().toString();
        QVERIFY2(shown.startsWith(QStringLiteral("\u2068invoices.")) && shown.endsWith(QStringLiteral("\u2026\u2069 (from holder, cut)")),
                 qPrintable(shown));
        const QString prefix = shown.mid(1, shown.indexOf(QChar(0x2026)) - 1);
        QVERIFY(QString::fromStdString(longName).startsWith(prefix));
        QVERIFY(prefix.size() < QString::fromStdString(longName).size());
        QCOMPARE(cut.data(LocksModel::NameSourceRole).toString(), QStringLiteral("holder prefix"));
        QVERIFY(cut.data(LocksModel::IsUnknownRole).toBool());
        QVERIFY(model.invariantsHold());
    }
};

QTEST_MAIN(TestLocksModelPg)
#include "test_locks_model_pg.moc"
