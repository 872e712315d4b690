# Fencing tokens: pglock_fence, bumped in the lock statement itself; strictly increasing per lock,
# across holders, lost locks, and crashes and a restart of a cluster of the test's own.
pglock_add_test(test_fencing SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_fencing.cpp PG OWN_CLUSTER LIBS ${_core_test_libs})
