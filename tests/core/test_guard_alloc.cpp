// Allocation failures around a grant: whichever allocation of try_acquire() fails, the caller
// gets the exception and no lock stays behind, neither on a pooled session nor on a closed one.
// This binary replaces the global operator new (its own executable for that reason) so that the
// n-th allocation of the calling thread throws std::bad_alloc.
#include <QtTest>

#include <cstdlib>
#include <new>
#include <string>

#include "core_test_util.hpp"

namespace {
// -1: off; otherwise the number of allocations of this thread that still succeed.
thread_local long allocations_left = -1;
}  // namespace

void* operator new(std::size_t size) {
    if (allocations_left >= 0 && allocations_left-- == 0) throw std::bad_alloc();
    if (void* p = std::malloc(size ? size : 1)) return p;
    throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }

using namespace std::chrono_literals;
using pgt::granted_pids;
using pgt::guarded;
using pgt::RawConn;

class TestGuardAlloc : public QObject {
    Q_OBJECT

    std::string dsn_;

private slots:
    void initTestCase() { PGT_REQUIRE_DSN(dsn_); }

    void no_lock_survives_a_failed_allocation() {
        guarded([&] {
            RawConn obs(dsn_);
            pglock::Pool pool(dsn_, pglock::PoolOptions{2});
            pglock::Lock lk(pool, pgt::unique_name());
            { auto warm = lk.try_acquire(); }  // statements prepared, session pooled
            int failed = 0;
            for (long n = 0;; ++n) {
                QVERIFY2(n < 2000, "try_acquire makes more than 2000 allocations?");
                bool threw = false;
                allocations_left = n;
                try {
                    auto g = lk.try_acquire();
                    allocations_left = -1;
                    QVERIFY(g.has_value());
                    QVERIFY(!g->release());
                } catch (const std::exception&) {
                    allocations_left = -1;
                    threw = true;
                    ++failed;
                }
                const auto holders = granted_pids(obs, lk.key());
                if (!holders.empty()) {
                    QFAIL(qPrintable(QStringLiteral("allocation %1 failed (%2): the lock is still held by backend %3 "
                                                    "(open sessions: %4, idle: %5)")
                                         .arg(n)
                                         .arg(threw ? "threw" : "no throw")
                                         .arg(holders.front())
                                         .arg(pool.open_count())
                                         .arg(pool.idle_count())));
                }
                if (!threw) break;  // try_acquire made fewer than n allocations: every one was tried
            }
            qInfo("%d allocation failures tried", failed);
            QVERIFY(failed > 0);
        });
    }
};

QTEST_GUILESS_MAIN(TestGuardAlloc)
#include "test_guard_alloc.moc"
