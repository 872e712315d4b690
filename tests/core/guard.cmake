# The guard side: lost-lock notices under polling, callbacks, leases on the guard's own thread,
# bounded cleanup statements, allocation failures around a grant, and a stress run with backend
# terminations.
pglock_add_test(test_guard SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_guard.cpp PG LABELS concurrency LIBS ${_core_test_libs})
pglock_add_test(test_guard_stress SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_guard_stress.cpp PG LABELS concurrency LIBS ${_core_test_libs})
pglock_add_test(test_guard_alloc SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_guard_alloc.cpp PG LIBS ${_core_test_libs})
if(PGLOCK_SANITIZE MATCHES "thread")
  foreach(_t test_guard test_guard_stress)
    set_property(TEST ${_t} APPEND PROPERTY ENVIRONMENT
      "TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1:suppressions=${CMAKE_CURRENT_LIST_DIR}/tsan.supp")
  endforeach()
endif()
