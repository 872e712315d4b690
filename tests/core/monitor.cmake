# The monitor engine (pglock::monitor): one poll over pg_locks ⋈ pg_stat_activity, and the hold
# tracker, against the real server with plain libpq sessions as holders and waiters.
pglock_add_test(test_monitor SOURCES test_monitor.cpp PG LIBS ${_core_test_libs})
