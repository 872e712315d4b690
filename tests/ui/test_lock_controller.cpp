// The operator's lock and backend controllers against a real server. Another libpq session
// (PgConn) plays the other application; pg_locks and pg_stat_activity are the judges.
#include <QAbstractItemModelTester>
#include <QElapsedTimer>
#include <QSignalSpy>
#include <QTest>
#include <QUuid>

#include <memory>

#include "actions/backend_actions.hpp"
#include "actions/lock_controller.hpp"
#include "actions/my_locks_model.hpp"
#include "actions/read_only_switch.hpp"
#include "pg_conn.hpp"
#include "pg_test_env.hpp"
#include "pglock/key.hpp"

using namespace lockscope;
using pglock::test::PgConn;

namespace {

constexpr int kWaitMs = 10000;

QByteArray uniqueName(const char* what) {
    return QByteArray("lockscope-test.") + what + "." + QUuid::createUuid().toByteArray(QUuid::WithoutBraces);
}

std::string keyText(const QByteArray& name) {
    return std::to_string(pglock::key_of(std::string_view(name.constData(), static_cast<std::size_t>(name.size()))));
}

// "pid:granted,pid:granted" of the advisory rows of `name`'s key, ordered.
std::string rowsOf(PgConn& conn, const QByteArray& name) {
    const std::string key = keyText(name);
    return conn.one("SELECT coalesce(string_agg(pid || ':' || CASE WHEN granted THEN 't' ELSE 'f' END, ',' ORDER BY pid, granted), '') FROM pg_locks "
                    "WHERE locktype = 'advisory' AND objsubid = 1 AND database = (SELECT oid FROM pg_database "
                    "WHERE datname = current_database()) AND ((classid::bigint << 32) | objid::bigint) = " + key);
}

}  // namespace

class TestLockController : public QObject {
    Q_OBJECT

    std::string dsn_;
    std::unique_ptr<PgConn> judge_;
    std::unique_ptr<ReadOnlySwitch> readOnly_;
    std::unique_ptr<LockController> locks_;

    OwnLockState stateOf(quint64 id) const { return locks_->find(id) ? locks_->find(id)->state : OwnLockState::Failed; }

private slots:
    void initTestCase() {
        auto dsn = pglock::test::test_dsn();
        QVERIFY2(dsn, "no test server: run under ctest (pg fixture) or set PGLOCK_TEST_DSN");
        dsn_ = *dsn;
        judge_ = std::make_unique<PgConn>(dsn_);
        QVERIFY(judge_->ok());
    }

    void init() {
        readOnly_ = std::make_unique<ReadOnlySwitch>();
        locks_ = std::make_unique<LockController>(*readOnly_);
        locks_->setConnection(QString::fromStdString(dsn_));
    }

    void cleanup() {
        locks_.reset();
        readOnly_.reset();
    }

    void tryTakeAndRelease() {
        MyLocksModel model(*locks_);
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        const QByteArray name = uniqueName("try");
        const auto taken = locks_->take(name, TakeMode::Try, false);
        QVERIFY2(taken.accepted(), qPrintable(taken.refusal));
        QCOMPARE(model.rowCount(), 1);
        QTRY_COMPARE_WITH_TIMEOUT(stateOf(taken.id), OwnLockState::Held, kWaitMs);
        const int pid = locks_->find(taken.id)->pid;
        QVERIFY(pid > 0);
        QCOMPARE(rowsOf(*judge_, name), std::to_string(pid) + ":t");
        QVERIFY(locks_->ownPids().contains(pid));
        // Other operators see who holds it, and which lock (the library's holder identity).
        // (The name is long, so "lockscope (by hand)" is shortened first to fit 63 bytes.)
        const std::string held =
            judge_->one("SELECT application_name FROM pg_stat_activity WHERE pid = " + std::to_string(pid));
        QVERIFY2(held.ends_with("pglock:" + name.toStdString()), held.c_str());

        QVERIFY(locks_->release(taken.id).accepted());
        QTRY_COMPARE_WITH_TIMEOUT(stateOf(taken.id), OwnLockState::Released, kWaitMs);
        QCOMPARE(rowsOf(*judge_, name), std::string());
        // The release gave the session its own name back (unless the controller closed it).
        const std::string after =
            judge_->one("SELECT application_name FROM pg_stat_activity WHERE pid = " + std::to_string(pid));
        QVERIFY2(after.empty() || after == "lockscope (by hand)", after.c_str());
        QVERIFY(locks_->ownPids().isEmpty());
        QVERIFY(!locks_->release(taken.id).accepted());  // nothing left to release

        locks_->dismissFinished();
        QCOMPARE(model.rowCount(), 0);
    }

    void tryContendedNamesTheHolder() {
        const QByteArray name = uniqueName("contended");
        PgConn other(dsn_);
        QCOMPARE(other.one("SELECT pg_advisory_lock(" + keyText(name) + ")::text"), std::string(""));
        const std::string otherPid = other.one("SELECT pg_backend_pid()");
        const auto taken = locks_->take(name, TakeMode::Try, false);
        QVERIFY(taken.accepted());
        QTRY_COMPARE_WITH_TIMEOUT(stateOf(taken.id), OwnLockState::Contended, kWaitMs);
        QVERIFY2(locks_->find(taken.id)->message.contains(QString::fromStdString(otherPid)),
                 qPrintable(locks_->find(taken.id)->message));
        QCOMPARE(rowsOf(*judge_, name), otherPid + ":t");
    }

    void blockingWaitIsGrantedWhenReleased() {
        const QByteArray name = uniqueName("blocking");
        PgConn other(dsn_);
        other.one("SELECT pg_advisory_lock(" + keyText(name) + ")");
        const auto taken = locks_->take(name, TakeMode::Blocking, false);
        QVERIFY(taken.accepted());
        // The wait is on the server: a granted=false row appears beside the holder's.
        QTRY_VERIFY_WITH_TIMEOUT(rowsOf(*judge_, name).find(":f") != std::string::npos, kWaitMs);
        QCOMPARE(stateOf(taken.id), OwnLockState::Waiting);
        other.one("SELECT pg_advisory_unlock(" + keyText(name) + ")");
        QTRY_COMPARE_WITH_TIMEOUT(stateOf(taken.id), OwnLockState::Held, kWaitMs);
        QCOMPARE(rowsOf(*judge_, name), std::to_string(locks_->find(taken.id)->pid) + ":t");
    }

    void blockingCancelLeavesNothingWaiting() {
        const QByteArray name = uniqueName("cancel");
        PgConn other(dsn_);
        other.one("SELECT pg_advisory_lock(" + keyText(name) + ")");
        const std::string otherPid = other.one("SELECT pg_backend_pid()");
        const auto taken = locks_->take(name, TakeMode::Blocking, false);
        QTRY_VERIFY_WITH_TIMEOUT(rowsOf(*judge_, name).find(":f") != std::string::npos, kWaitMs);
        QElapsedTimer sinceCancel;
        sinceCancel.start();
        QVERIFY(locks_->cancelWait(taken.id).accepted());
        QTRY_COMPARE_WITH_TIMEOUT(stateOf(taken.id), OwnLockState::Canceled, kWaitMs);
        qInfo("wait canceled %lld ms after Cancel", static_cast<long long>(sinceCancel.elapsed()));
        // Nothing waits for the lock any more, in pg_locks or in pg_stat_activity.
        QCOMPARE(rowsOf(*judge_, name), otherPid + ":t");
        QCOMPARE(judge_->one("SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND wait_event = "
                             "'advisory' AND application_name = 'lockscope (by hand)'"),
                 std::string("0"));
        // And no late grant: once the other side lets go, nobody holds it.
        other.one("SELECT pg_advisory_unlock(" + keyText(name) + ")");
        QTest::qWait(200);
        QCOMPARE(rowsOf(*judge_, name), std::string());
        QCOMPARE(stateOf(taken.id), OwnLockState::Canceled);
    }

    void transactionLockLastsUntilCommitOrRollback_data() {
        QTest::addColumn<bool>("commit");
        QTest::newRow("commit") << true;
        QTest::newRow("rollback") << false;
    }
    void transactionLockLastsUntilCommitOrRollback() {
        QFETCH(bool, commit);
        const QByteArray name = uniqueName("xact");
        const auto taken = locks_->take(name, TakeMode::Transaction, false);
        QTRY_COMPARE_WITH_TIMEOUT(stateOf(taken.id), OwnLockState::Held, kWaitMs);
        const int pid = locks_->find(taken.id)->pid;
        QCOMPARE(rowsOf(*judge_, name), std::to_string(pid) + ":t");
        QCOMPARE(judge_->one("SELECT state FROM pg_stat_activity WHERE pid = " + std::to_string(pid)),
                 std::string("idle in transaction"));
        QVERIFY(!locks_->commit(12345).accepted());
        QVERIFY(commit ? locks_->commit(taken.id).accepted() : locks_->rollback(taken.id).accepted());
        QTRY_COMPARE_WITH_TIMEOUT(stateOf(taken.id), OwnLockState::Released, kWaitMs);
        QCOMPARE(locks_->find(taken.id)->message, commit ? QStringLiteral("committed") : QStringLiteral("rolled back"));
        QCOMPARE(rowsOf(*judge_, name), std::string());
    }

    void transactionContended() {
        const QByteArray name = uniqueName("xact-contended");
        PgConn other(dsn_);
        other.one("SELECT pg_advisory_lock(" + keyText(name) + ")");
        const auto taken = locks_->take(name, TakeMode::Transaction, false);
        QTRY_COMPARE_WITH_TIMEOUT(stateOf(taken.id), OwnLockState::Contended, kWaitMs);
        // The transaction it opened was rolled back: no session of ours is left in one.
        QCOMPARE(judge_->one("SELECT count(*) FROM pg_stat_activity WHERE application_name = 'lockscope (by hand)' "
                             "AND state LIKE 'idle in transaction%'"),
                 std::string("0"));
    }

    void sharedLocksCoexistButExcludeExclusive() {
        const QByteArray name = uniqueName("shared");
        const auto a = locks_->take(name, TakeMode::Try, true);
        const auto b = locks_->take(name, TakeMode::Blocking, true);
        QTRY_COMPARE_WITH_TIMEOUT(stateOf(a.id), OwnLockState::Held, kWaitMs);
        QTRY_COMPARE_WITH_TIMEOUT(stateOf(b.id), OwnLockState::Held, kWaitMs);
        QVERIFY(locks_->find(a.id)->pid != locks_->find(b.id)->pid);
        QCOMPARE(judge_->one("SELECT string_agg(DISTINCT mode, ',') FROM pg_locks WHERE locktype = 'advisory' AND "
                             "((classid::bigint << 32) | objid::bigint) = " + keyText(name)),
                 std::string("ShareLock"));
        const auto exclusive = locks_->take(name, TakeMode::Try, false);
        QTRY_COMPARE_WITH_TIMEOUT(stateOf(exclusive.id), OwnLockState::Contended, kWaitMs);
    }

    void terminatedSessionTurnsLost_data() {
        QTest::addColumn<int>("mode");
        QTest::newRow("session lock") << static_cast<int>(TakeMode::Try);
        QTest::newRow("transaction lock") << static_cast<int>(TakeMode::Transaction);
    }
    void terminatedSessionTurnsLost() {
        QFETCH(int, mode);
        const QByteArray name = uniqueName("lost");
        QSignalSpy pidsChanged(locks_.get(), &LockController::ownPidsChanged);
        const auto taken = locks_->take(name, static_cast<TakeMode>(mode), false);
        QTRY_COMPARE_WITH_TIMEOUT(stateOf(taken.id), OwnLockState::Held, kWaitMs);
        const int pid = locks_->find(taken.id)->pid;
        QElapsedTimer sinceKill;
        sinceKill.start();
        // With a timeout it returns once the backend has exited: a terminated backend keeps its
        // pg_locks rows until then, which a loaded machine made visible to the check below.
        QCOMPARE(judge_->one("SELECT pg_terminate_backend(" + std::to_string(pid) + ", 5000)"), std::string("t"));
        // "At once": the library's watcher (or the socket notifier) reports it well within a second.
        QTRY_COMPARE_WITH_TIMEOUT(stateOf(taken.id), OwnLockState::Lost, 1000);
        qInfo("lost state %lld ms after pg_terminate_backend", static_cast<long long>(sinceKill.elapsed()));
        QVERIFY(locks_->find(taken.id)->message.contains(QString::number(pid)));
        QVERIFY(!locks_->ownPids().contains(pid));
        QVERIFY(pidsChanged.count() >= 2);
        QVERIFY(!locks_->release(taken.id).accepted());
        QCOMPARE(rowsOf(*judge_, name), std::string());
    }

    void readOnlyRefusesEveryChange() {
        const QByteArray name = uniqueName("readonly");
        const auto held = locks_->take(name, TakeMode::Try, false);
        const auto xact = locks_->take(uniqueName("readonly-xact"), TakeMode::Transaction, false);
        QTRY_COMPARE_WITH_TIMEOUT(stateOf(held.id), OwnLockState::Held, kWaitMs);
        QTRY_COMPARE_WITH_TIMEOUT(stateOf(xact.id), OwnLockState::Held, kWaitMs);

        PgConn victim(dsn_);
        const std::string victimPid = victim.one("SELECT pg_backend_pid()");
        BackendActions backends(*readOnly_);
        backends.setConnection(QString::fromStdString(dsn_));
        QSignalSpy backendDone(&backends, &BackendActions::finished);

        readOnly_->set(true);
        const int locksBefore = static_cast<int>(locks_->locks().size());
        for (const auto mode : {TakeMode::Try, TakeMode::Blocking, TakeMode::Transaction}) {
            const auto refused = locks_->take(uniqueName("refused"), mode, false);
            QVERIFY(!refused.accepted());
            QVERIFY(refused.refusal.contains(QStringLiteral("Read-only")));
        }
        QCOMPARE(static_cast<int>(locks_->locks().size()), locksBefore);
        // Each refused by the read-only rule itself, not for another reason (not held, no PID).
        for (const auto& refused : {locks_->release(held.id), locks_->commit(xact.id), locks_->rollback(xact.id),
                                    backends.cancelQuery(std::stoi(victimPid)), backends.terminate(std::stoi(victimPid))}) {
            QVERIFY(!refused.accepted());
            QVERIFY2(refused.refusal.startsWith(QStringLiteral("Read-only mode: ")), qPrintable(refused.refusal));
        }
        QTest::qWait(200);
        QCOMPARE(backendDone.count(), 0);
        QCOMPARE(stateOf(held.id), OwnLockState::Held);
        QCOMPARE(stateOf(xact.id), OwnLockState::Held);
        QCOMPARE(rowsOf(*judge_, name), std::to_string(locks_->find(held.id)->pid) + ":t");
        QCOMPARE(victim.one("SELECT 1"), std::string("1"));

        // Leaving is always allowed: releaseAll lets go of everything, read-only or not.
        QSignalSpy settled(locks_.get(), &LockController::allSettled);
        locks_->releaseAll();
        QTRY_COMPARE_WITH_TIMEOUT(settled.count(), 1, kWaitMs);
        QCOMPARE(locks_->activeCount(), 0);
        QCOMPARE(rowsOf(*judge_, name), std::string());
        readOnly_->set(false);
        QVERIFY(locks_->take(uniqueName("writable-again"), TakeMode::Try, false).accepted());
    }

    // A blocking take that was already waiting when read-only mode went on must not be granted
    // later: switching read-only on cancels it, and the server shows no waiter and no late grant.
    void readOnlyCancelsWaitsInFlight() {
        const QByteArray name = uniqueName("readonly-wait");
        PgConn other(dsn_);
        other.one("SELECT pg_advisory_lock(" + keyText(name) + ")");
        const std::string otherPid = other.one("SELECT pg_backend_pid()");
        const auto held = locks_->take(uniqueName("readonly-held"), TakeMode::Try, false);
        const auto taken = locks_->take(name, TakeMode::Blocking, false);
        QTRY_COMPARE_WITH_TIMEOUT(stateOf(held.id), OwnLockState::Held, kWaitMs);
        QTRY_VERIFY_WITH_TIMEOUT(rowsOf(*judge_, name).find(":f") != std::string::npos, kWaitMs);
        readOnly_->set(true);
        QTRY_COMPARE_WITH_TIMEOUT(stateOf(taken.id), OwnLockState::Canceled, kWaitMs);
        QVERIFY2(locks_->find(taken.id)->message.contains(QStringLiteral("read-only")),
                 qPrintable(locks_->find(taken.id)->message));
        QCOMPARE(stateOf(held.id), OwnLockState::Held);  // what is held stays held
        QCOMPARE(rowsOf(*judge_, name), otherPid + ":t");
        other.one("SELECT pg_advisory_unlock(" + keyText(name) + ")");
        QTest::qWait(200);
        QCOMPARE(rowsOf(*judge_, name), std::string());
        QCOMPARE(stateOf(taken.id), OwnLockState::Canceled);
        QSignalSpy settled(locks_.get(), &LockController::allSettled);
        locks_->releaseAll();
        QTRY_COMPARE_WITH_TIMEOUT(settled.count(), 1, kWaitMs);
        readOnly_->set(false);
    }

    void releaseAllCancelsWaitsAndReleases() {
        const QByteArray a = uniqueName("all-a"), b = uniqueName("all-b");
        PgConn other(dsn_);
        other.one("SELECT pg_advisory_lock(" + keyText(b) + ")");
        const auto held = locks_->take(a, TakeMode::Try, false);
        const auto waiting = locks_->take(b, TakeMode::Blocking, false);
        QTRY_COMPARE_WITH_TIMEOUT(stateOf(held.id), OwnLockState::Held, kWaitMs);
        QTRY_VERIFY_WITH_TIMEOUT(rowsOf(*judge_, b).find(":f") != std::string::npos, kWaitMs);
        QSignalSpy settled(locks_.get(), &LockController::allSettled);
        locks_->releaseAll();
        QTRY_COMPARE_WITH_TIMEOUT(settled.count(), 1, kWaitMs);
        QCOMPARE(stateOf(held.id), OwnLockState::Released);
        QCOMPARE(stateOf(waiting.id), OwnLockState::Canceled);
        QCOMPARE(rowsOf(*judge_, a), std::string());
        QCOMPARE(rowsOf(*judge_, b), other.one("SELECT pg_backend_pid()") + ":t");
    }

    void backendCancelAndTerminate() {
        BackendActions backends(*readOnly_);
        backends.setConnection(QString::fromStdString(dsn_));
        QSignalSpy done(&backends, &BackendActions::finished);

        // Cancel: a long statement of the other session ends with 57014, the session stays.
        PgConn busy(dsn_);
        const int busyPid = std::stoi(busy.one("SELECT pg_backend_pid()"));
        QVERIFY(PQsendQuery(busy.c, "SELECT pg_sleep(30)") == 1);
        QTRY_COMPARE_WITH_TIMEOUT(judge_->one("SELECT state FROM pg_stat_activity WHERE pid = " + std::to_string(busyPid)),
                                  std::string("active"), kWaitMs);
        QVERIFY(backends.cancelQuery(busyPid).accepted());
        QTRY_COMPARE_WITH_TIMEOUT(done.count(), 1, kWaitMs);
        QCOMPARE(done.at(0).at(2).toBool(), true);
        PGresult* r = PQgetResult(busy.c);
        QCOMPARE(QByteArray(PQresultErrorField(r, PG_DIAG_SQLSTATE)), QByteArray("57014"));
        PQclear(r);
        while ((r = PQgetResult(busy.c))) PQclear(r);
        QCOMPARE(busy.one("SELECT 1"), std::string("1"));

        // Terminate: the session is gone.
        QVERIFY(backends.terminate(busyPid).accepted());
        QTRY_COMPARE_WITH_TIMEOUT(done.count(), 2, kWaitMs);
        QCOMPARE(done.at(1).at(2).toBool(), true);
        QTRY_COMPARE_WITH_TIMEOUT(judge_->one("SELECT count(*) FROM pg_stat_activity WHERE pid = " + std::to_string(busyPid)),
                                  std::string("0"), kWaitMs);

        // No such PID: a clear "not a backend" message, not a failure of the app.
        QVERIFY(backends.terminate(busyPid).accepted());
        QTRY_COMPARE_WITH_TIMEOUT(done.count(), 3, kWaitMs);
        QCOMPARE(done.at(2).at(2).toBool(), false);
        QVERIFY2(done.at(2).at(3).toString().contains(QStringLiteral("not a PostgreSQL backend")),
                 qPrintable(done.at(2).at(3).toString()));
        QVERIFY(!backends.terminate(0).accepted());
    }

    void insufficientPrivilegeIsExplained() {
        // A role without pg_signal_backend may not signal a superuser's session.
        const std::string role = "lockscope_test_nopriv";
        judge_->one("DO $$ BEGIN IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '" + role + "') THEN CREATE ROLE " +
                    role + " LOGIN; END IF; END $$");
        QCOMPARE(judge_->one("SELECT count(*) FROM pg_roles WHERE rolname = '" + role + "'"), std::string("1"));
        const int judgePid = std::stoi(judge_->one("SELECT pg_backend_pid()"));
        BackendActions backends(*readOnly_);
        backends.setConnection(QString::fromStdString(dsn_ + " user=" + role));
        QSignalSpy done(&backends, &BackendActions::finished);
        QVERIFY(backends.terminate(judgePid).accepted());
        QTRY_COMPARE_WITH_TIMEOUT(done.count(), 1, kWaitMs);
        QCOMPARE(done.at(0).at(2).toBool(), false);
        const QString message = done.at(0).at(3).toString();
        QVERIFY2(message.contains(QStringLiteral("Insufficient privilege")), qPrintable(message));
        QCOMPARE(judge_->one("SELECT 1"), std::string("1"));  // still alive
    }
};

QTEST_MAIN(TestLockController)
#include "test_lock_controller.moc"
