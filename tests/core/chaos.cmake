# Chaos: random cancels, deadlines and killed holders (test_chaos, bounded), and the soak driver
# (pglock_chaos_soak, run by scripts/soak with server restarts). Both share chaos_driver.cpp.
add_library(pglock_chaos_driver STATIC ${CMAKE_CURRENT_LIST_DIR}/chaos_driver.cpp)
target_link_libraries(pglock_chaos_driver PUBLIC pglock::pglock PostgreSQL::PostgreSQL Threads::Threads
                                          PRIVATE pglock_warnings)
target_include_directories(pglock_chaos_driver PUBLIC ${CMAKE_CURRENT_LIST_DIR})

pglock_add_test(test_chaos SOURCES test_chaos.cpp PG LABELS concurrency LIBS pglock_chaos_driver)

add_executable(pglock_chaos_soak ${PROJECT_SOURCE_DIR}/bench/chaos_soak.cpp)
target_link_libraries(pglock_chaos_soak PRIVATE pglock_chaos_driver pglock_warnings)
# Qt-free: nothing for moc there.
set_target_properties(pglock_chaos_driver pglock_chaos_soak PROPERTIES AUTOMOC OFF)

# Under ThreadSanitizer, the same options as the other concurrency tests (see CMakeLists.txt).
if(PGLOCK_SANITIZE MATCHES "thread")
  set_property(TEST test_chaos APPEND PROPERTY ENVIRONMENT
    "TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1:suppressions=${CMAKE_CURRENT_LIST_DIR}/tsan.supp")
endif()
