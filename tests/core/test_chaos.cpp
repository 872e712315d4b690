// Chaos: workers take and drop locks with random cancels and deadlines while a killer terminates
// the backends of random holders. The invariants (no overlapping holders, a lost notice within
// 1 s for every guard whose backend died, no dead session lent by the pool, no lock left behind)
// are described and checked in chaos_driver.hpp; this asserts that none was broken and that the
// faults really happened, so that the test can fail.
#include <QtTest>

#include <chrono>
#include <string>

#include "chaos_driver.hpp"
#include "core_test_util.hpp"

using namespace std::chrono_literals;

class TestChaos : public QObject {
    Q_OBJECT

    std::string dsn_;

private slots:
    void initTestCase() { PGT_REQUIRE_DSN(dsn_); }

    void kills_cancels_and_deadlines() {
        pgt::guarded([&] {
            pglock::chaos::Config cfg;
            cfg.dsn = dsn_;
            cfg.workers = 10;
            cfg.duration = 15s;
            cfg.kill_every = 200ms;
            cfg.log = [](const std::string& line) { qInfo("%s", line.c_str()); };
            const auto rep = pglock::chaos::run(cfg);
            qInfo("%s", rep.summary().c_str());

            QVERIFY2(rep.total_violations() == 0, rep.summary().c_str());
            // The faults must have happened, or the run proved nothing.
            QVERIFY2(rep.acquisitions > 100, "too few acquisitions");
            QVERIFY2(rep.kills > 0, "the killer killed no holder");
            QVERIFY2(rep.lost_notices > 0, "no guard was lost");
            QVERIFY2(rep.cancels > 0, "no acquire was cancelled");
            QVERIFY2(rep.deadlines > 0, "no deadline expired");
            QVERIFY2(rep.contended > 0, "no contention");
        });
    }
};

QTEST_GUILESS_MAIN(TestChaos)
#include "test_chaos.moc"
