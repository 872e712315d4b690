# Fencing tokens: pglock_fence, bumped in the lock statement itself; strictly increasing per lock.
# (Across a server restart: test_failover, which restarts the shared cluster.)
pglock_add_test(test_fencing SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_fencing.cpp PG LIBS ${_core_test_libs})
