# How a Lock waits (AcquireStrategy), the library behind a transaction-mode pooler (a PgBouncer the
# test starts itself), and a held lock across a server restart and on a standby.
find_package(PostgreSQL REQUIRED)
pglock_add_test(test_strategies SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_strategies.cpp PG LABELS concurrency LIBS PostgreSQL::PostgreSQL)
pglock_add_test(test_pooler SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_pooler.cpp PG LABELS concurrency LIBS PostgreSQL::PostgreSQL)
# RUN_SERIAL: it restarts the shared test cluster.
pglock_add_test(test_failover SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_failover.cpp PG STANDBY LABELS concurrency LIBS PostgreSQL::PostgreSQL)
set_tests_properties(test_failover PROPERTIES RUN_SERIAL TRUE)
# A failover end to end: a pool on host=a,b target_session_attrs=read-write, the standby promoted
# and the old primary stopped, on a primary + standby pair the test starts for itself.
pglock_add_test(test_promote SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_promote.cpp OWN_CLUSTER LABELS concurrency LIBS PostgreSQL::PostgreSQL)
if(PGLOCK_SANITIZE MATCHES "thread")
  # It runs tests/pg/cluster through QProcess (fork + exec) while Qt Test's watchdog and the pool's
  # threads run; the child only execs, so ThreadSanitizer's refusal to fork a threaded process
  # does not apply.
  set_property(TEST test_promote APPEND PROPERTY ENVIRONMENT
    "TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1:die_after_fork=0:suppressions=${CMAKE_CURRENT_LIST_DIR}/tsan.supp")
endif()
