// "Terminate holder…" shows the impact first: BackendActions reads it off the GUI thread from a
// real server, and terminateImpactText() is exactly what the confirmation says. Also the naming
// rule's place for context-derived locks (after the catalog, before a holder's name).
#include <libpq-fe.h>

#include <QSignalSpy>
#include <QTest>

#include <memory>

#include "actions/backend_actions.hpp"
#include "actions/read_only_switch.hpp"
#include "actions/terminate_impact.hpp"
#include "models/lock_naming.hpp"
#include "pg_conn.hpp"
#include "pg_test_env.hpp"
#include "pglock/key.hpp"

using namespace lockscope;
using pglock::test::PgConn;
namespace mon = pglock::monitor;

class TestTerminateImpact : public QObject {
    Q_OBJECT
    std::string dsn_;

private slots:
    void initTestCase() {
        auto dsn = pglock::test::test_dsn();
        QVERIFY2(dsn, "no test server: run under ctest (pg fixture) or set PGLOCK_TEST_DSN");
        dsn_ = *dsn;
        PgConn setup(dsn_);
        QVERIFY(setup.ok());
        setup.one("CREATE TABLE IF NOT EXISTS impact_ui_rows (id int PRIMARY KEY)");
    }

    void impact_is_loaded_off_the_gui_thread_and_shown_before_confirming() {
        const std::int64_t key = pglock::key_of("impact.ui." + QUuid::createUuid().toString().toStdString());
        PgConn holder(dsn_), waiter(dsn_);
        QVERIFY(holder.ok() && waiter.ok());
        holder.one("SELECT pg_advisory_lock(" + std::to_string(key) + ")");
        holder.one("BEGIN");
        holder.one("INSERT INTO impact_ui_rows VALUES ((random() * 1e9)::int)");
        QVERIFY(PQsendQuery(waiter.c, ("SELECT pg_advisory_lock(" + std::to_string(key) + ")").c_str()));
        PgConn obs(dsn_);
        QTRY_VERIFY_WITH_TIMEOUT(obs.one("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted AND pid = " +
                                         std::to_string(PQbackendPID(waiter.c))) == "1",
                                 10000);

        ReadOnlySwitch readOnly;
        readOnly.set(true);  // reading the impact changes nothing: allowed in read-only mode
        BackendActions actions(readOnly);
        actions.setConnection(QString::fromStdString(dsn_));
        QSignalSpy loaded(&actions, &BackendActions::impactLoaded);
        const int pid = PQbackendPID(holder.c);
        QVERIFY(actions.loadImpact(pid).accepted());
        QTRY_COMPARE_WITH_TIMEOUT(loaded.count(), 1, 15000);
        QCOMPARE(loaded.at(0).at(0).toInt(), pid);
        const auto impact = loaded.at(0).at(1).value<std::shared_ptr<const mon::BackendImpact>>();
        QVERIFY2(impact, qPrintable(loaded.at(0).at(2).toString()));
        // Terminating itself stays refused in read-only mode, as before.
        QVERIFY(!actions.terminate(pid).accepted());

        const std::vector<mon::OrphanEvidence> evidence{
            {mon::OrphanSign::pooled_backend, "one backend (same pid and start) served several applications: \"a\", \"b\""}};
        const QString text = terminateImpactText({*impact, &evidence, [](std::int64_t) { return QStringLiteral("billing:invoice-run"); }});
        const QStringList lines = text.split('\n');
        QVERIFY2(lines.value(0).startsWith("It holds ") && lines.value(0).endsWith(" locks:"), qPrintable(text));
        QVERIFY2(lines.value(1) == QString("  \u2022 advisory billing:invoice-run (key %1), ExclusiveLock").arg(key), qPrintable(text));
        QVERIFY2(text.contains("\n  \u2022 relation public.impact_ui_rows, RowExclusiveLock\n"), qPrintable(text));
        QVERIFY2(text.contains(QString("1 session is waiting on it (PID %1): they get its locks once it is gone.").arg(PQbackendPID(waiter.c))),
                 qPrintable(text));
        QVERIFY2(text.contains("A pooled backend: a connection pooler may be serving other clients on it"), qPrintable(text));
        QVERIFY2(text.contains("served several applications: \"a\", \"b\""), qPrintable(text));
        QVERIFY2(text.contains("Its transaction has been open for ") && text.endsWith(" and has written: terminating rolls its changes back."),
                 qPrintable(text));

        holder.one("ROLLBACK");
        holder.one("SELECT pg_advisory_unlock_all()");
    }

    void an_idle_session_without_pooler_rolls_back_nothing() {
        mon::BackendImpact impact;
        impact.found = true;
        impact.pid = 42;
        impact.state = "idle";
        impact.application_name = "cron";
        impact.locks.push_back({"advisory", "ExclusiveLock", true, "advisory key 7", 7});
        const QString text = terminateImpactText({impact, nullptr, [](std::int64_t) { return QStringLiteral("(unknown) 7"); }});
        QCOMPARE(text, QStringLiteral("It holds 1 lock:\n"
                                      "  \u2022 advisory (unknown) 7 (key 7), ExclusiveLock\n"
                                      "No session waits on it.\n"
                                      "No sign of a connection pooler in front of it.\n"
                                      "No transaction is open: no work is rolled back; its session-level locks are released."));
        // A lock its application does not claim (a confirmed leak) says the lock may be forgotten,
        // not that a pooler serves the backend.
        const std::vector<mon::OrphanEvidence> unclaimed{
            {mon::OrphanSign::unclaimed, "its application (http://app:9/metrics) does not claim key 7, which this backend holds (for 5s)"}};
        const QString leaked = terminateImpactText({impact, &unclaimed, [](std::int64_t) { return QStringLiteral("(unknown) 7"); }});
        QVERIFY2(leaked.contains("No sign of a connection pooler in front of it.\n"
                                 "Probably orphaned: its application (http://app:9/metrics) does not claim key 7"),
                 qPrintable(leaked));
        impact.application_name = "pgbouncer";
        QVERIFY(terminateImpactText({impact, nullptr, {}}).contains("A pooled backend"));
        impact.found = false;
        QCOMPARE(terminateImpactText({impact, nullptr, {}}),
                 QStringLiteral("PID 42 is no backend of this server any more: there is nothing to terminate."));
    }

    void context_names_come_after_the_catalog_and_before_a_holder() {
        const mon::LockId id{mon::KeyForm::bigint, pglock::tag_of(99)};
        NameFacts facts;
        facts.context = QByteArray("golang-migrate lock for database app, schema public");
        facts.holder = mon::HolderName{"some.name", true, 1};
        LockName n = decideLockName(id, 99, facts);
        QCOMPARE(n.source, LockNameSource::context);
        QCOMPARE(n.text, QStringLiteral("golang-migrate lock for database app, schema public"));
        QVERIFY(n.known());
        QCOMPARE(nameSourceFromText(nameSourceText(LockNameSource::context)), LockNameSource::context);
        facts.catalog = {QByteArray("catalogued")};
        QCOMPARE(decideLockName(id, 99, facts).source, LockNameSource::catalog);
    }
};

QTEST_MAIN(TestTerminateImpact)
#include "test_terminate_impact.moc"
