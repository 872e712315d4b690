# The monitor engine (pglock::monitor): one poll over pg_locks ⋈ pg_stat_activity, and the hold
# tracker, against the real server with plain libpq sessions as holders and waiters.
pglock_add_test(test_monitor SOURCES test_monitor.cpp PG LIBS ${_core_test_libs})

# Holder identity: application_name names a held lock; the monitor reads it back.
pglock_add_test(test_holder_identity SOURCES test_holder_identity.cpp PG LIBS ${_core_test_libs})

# Locks other libraries derive from the database and its schemas, named with no catalog.
pglock_add_test(test_context_locks SOURCES test_context_locks.cpp PG LIBS ${_core_test_libs})
# Orphan evidence: idle holders with waiters, pooled backends through a real PgBouncer.
pglock_add_test(test_orphan SOURCES test_orphan.cpp PG LIBS ${_core_test_libs})
# What terminating a backend would do, read before doing it.
pglock_add_test(test_backend_impact SOURCES test_backend_impact.cpp PG LIBS ${_core_test_libs})
# The lock tree (pglock::monitor::lock_tree): chains across lock types to the root blocker.
pglock_add_test(test_lock_tree SOURCES test_lock_tree.cpp PG LIBS ${_core_test_libs})
