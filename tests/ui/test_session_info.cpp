// SessionInfo: what the session detail panel shows for one pid of a snapshot.
#include <QDateTime>
#include <QRegularExpression>
#include <QtTest>

#include <cstdlib>
#include <ctime>

#include "models/session_info.hpp"

using lockscope::formatTimestamp;
using lockscope::SessionInfo;
using namespace pglock::monitor;

namespace {

LockEntry entry(std::int64_t key) {
    LockEntry e;
    e.key = key;
    e.tag = pglock::tag_of(key);
    return e;
}

Snapshot sample() {
    Snapshot s;
    s.server_now = 1'700'000'100;
    Backend b;
    b.pid = 4242;
    b.state = "idle in transaction";
    b.application_name = "billing";
    b.usename = "bob";
    b.client_addr = "10.1.2.3";
    b.client_hostname = "app1.example";
    b.query = "UPDATE invoices\n   SET paid = true WHERE id = 7";
    b.wait_event_type = "Client";
    b.wait_event = "ClientRead";
    b.backend_start = 1'700'000'000;
    b.xact_start = 1'700'000'040;
    b.state_change = 1'700'000'095;
    b.backend_xmin_age = 12;
    s.backends[4242] = b;
    Backend other;
    other.pid = 99;
    other.state = "active";
    s.backends[99] = other;

    LockEntry held = entry(7);
    held.holders.push_back({4242, true});
    LockEntry wanted = entry(-8);
    wanted.holders.push_back({99, false});
    wanted.waiters.push_back({4242, false, 1'700'000'090.0, {99}});
    s.locks = {held, wanted};
    return s;
}

}  // namespace

class TestSessionInfo : public QObject {
    Q_OBJECT

private slots:
    void initTestCase() {
        // A fixed zone (POSIX rule, no tz database needed): UTC+1 all year.
        qputenv("TZ", "XYZ-1");
        tzset();
    }

    void every_field_of_a_session() {
        const SessionInfo info = SessionInfo::from(sample(), 4242);
        QVERIFY(info.found);
        QCOMPARE(info.pid, 4242);
        QStringList labels;
        for (const auto& f : info.fields) labels << f.label;
        QCOMPARE(labels, (QStringList{"PID", "State", "Application", "User", "Client", "Backend start", "Transaction start",
                                      "State change", "Wait event", "Backend xmin age", "Holds", "Waits for", "Query"}));
        QCOMPARE(info.value("PID"), QStringLiteral("4242"));
        QCOMPARE(info.value("State"), QStringLiteral("idle in transaction"));
        QCOMPARE(info.value("Application"), QStringLiteral("billing"));
        QCOMPARE(info.value("User"), QStringLiteral("bob"));
        QCOMPARE(info.value("Client"), QStringLiteral("10.1.2.3 (app1.example)"));
        // 1'700'000'000 is 2023-11-14T22:13:20Z.
        QCOMPARE(info.value("Backend start"), QStringLiteral("2023-11-14T23:13:20+01:00 (1m40s ago)"));
        QCOMPARE(info.value("Transaction start"), QStringLiteral("2023-11-14T23:14:00+01:00 (1m ago)"));
        QCOMPARE(info.value("State change"), QStringLiteral("2023-11-14T23:14:55+01:00 (5s ago)"));
        QCOMPARE(info.value("Wait event"), QStringLiteral("Client: ClientRead"));
        QCOMPARE(info.value("Backend xmin age"), QStringLiteral("12 transactions"));
        QCOMPARE(info.value("Holds"), QStringLiteral("(unknown) 7 (shared)"));
        QCOMPARE(info.value("Waits for"), QStringLiteral("(unknown) -8 (blocked by 99)"));
        QCOMPARE(info.value("Query"), QStringLiteral("UPDATE invoices SET paid = true WHERE id = 7"));  // in full, one line
        QVERIFY(info.toText().startsWith("PID: 4242\nState: idle in transaction\n"));
    }

    void sparse_session() {
        const SessionInfo info = SessionInfo::from(sample(), 99);
        QVERIFY(info.found);
        QCOMPARE(info.value("Client"), QStringLiteral("local (unix socket)"));  // visible, no address
        QCOMPARE(info.value("Backend start"), QString());
        QCOMPARE(info.value("Wait event"), QString());
        QCOMPARE(info.value("Backend xmin age"), QString());
        QCOMPARE(info.value("Holds"), QStringLiteral("(unknown) -8"));
        QCOMPARE(info.value("Waits for"), QString());
    }

    void pid_not_in_the_snapshot() {
        const SessionInfo info = SessionInfo::from(sample(), 1);
        QVERIFY(!info.found);
        QCOMPARE(info.fields.size(), 1);
        QCOMPARE(info.value("PID"), QStringLiteral("1"));
    }

    void timestamps_are_local_iso_8601() {
        const QString t = formatTimestamp(1'700'000'000.4);
        QVERIFY2(QRegularExpression("^\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d[+-]\\d\\d:\\d\\d$").match(t).hasMatch(), qPrintable(t));
        QCOMPARE(QDateTime::fromString(t, Qt::ISODate).toSecsSinceEpoch(), 1'700'000'000);
        QCOMPARE(QDateTime::fromString(t, Qt::ISODate).time(), QDateTime::fromSecsSinceEpoch(1'700'000'000).time());
    }
};

QTEST_MAIN(TestSessionInfo)
#include "test_session_info.moc"
