// Allocations around a grant. Whichever allocation of try_acquire() fails, the caller gets the
// exception and no lock stays behind, neither on a pooled session nor on a closed one. And a
// released hold leaves nothing allocated behind it. This binary replaces the global operator new
// (its own executable for that reason) so that the n-th allocation of the calling thread throws
// std::bad_alloc, and counts the blocks that are live.
#include <QtTest>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <new>
#include <thread>
#include <string>

#include "core_test_util.hpp"

namespace {
// -1: off; otherwise the number of allocations of this thread that still succeed.
thread_local long allocations_left = -1;
// Blocks from operator new not yet deleted, all threads.
std::atomic<long> live_blocks{0};
}  // namespace

void* operator new(std::size_t size) {
    if (allocations_left >= 0 && allocations_left-- == 0) throw std::bad_alloc();
    if (void* p = std::malloc(size ? size : 1)) {
        live_blocks.fetch_add(1, std::memory_order_relaxed);
        return p;
    }
    throw std::bad_alloc();
}
void operator delete(void* p) noexcept {
    if (p) live_blocks.fetch_sub(1, std::memory_order_relaxed);
    std::free(p);
}
void operator delete(void* p, std::size_t) noexcept { operator delete(p); }

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

    // A hold released before its lost-lock watch was due (the watch starts 20 ms after the
    // grant) takes its pending watch back out of the watcher: its memory is freed by the
    // release, on the releasing thread, not some 20 ms later on the watcher's. Before, every
    // short hold of a busy service stayed allocated that long and was freed by another thread.
    void a_released_hold_leaves_nothing_allocated() {
        guarded([&] {
            pglock::Pool pool(dsn_, pglock::PoolOptions{2});
            pglock::Lock lk(pool, pgt::unique_name());
            const auto pair = [&] {
                auto g = lk.try_acquire();
                QVERIFY(g.has_value());
                QVERIFY(!g->release());
            };
            for (int i = 0; i < 3; ++i) pair();  // statements prepared, session pooled, queues grown
            std::this_thread::sleep_for(100ms);   // the warm-up's own watches have fallen due
            constexpr int kPairs = 50;
            const long before = live_blocks.load();
            for (int i = 0; i < kPairs; ++i) pair();
            const long left = live_blocks.load() - before;
            qInfo("%ld blocks still allocated after %d released holds", left, kPairs);
            QVERIFY2(left < 5, qPrintable(QStringLiteral("%1 blocks still allocated after %2 released holds")
                                              .arg(left)
                                              .arg(kPairs)));
        });
    }
};

QTEST_GUILESS_MAIN(TestGuardAlloc)
#include "test_guard_alloc.moc"
