#include <pglock/pglock.hpp>
using namespace pglock;
void f(pglock::Pool& pool) {
    pglock::Lock lk(pool, "orders.daily-rollup");
    Lock other{pool, u8"unicode-\u00e9"};
    auto p = std::make_unique<pglock::Lock>(pool, R"x(raw "name")x");
    pglock::run_once(pool, "a" "b" "c", {}, [] {});
    run_blocking(pool, "splice\
d", {}, fn);
    /* pglock::Lock(pool, "commented") */
    auto s = pglock::Lock(pool, "std"s);
    char c = '"'; int n = 1'000'000;
}
