# The name catalog (SQLite), its text import/export and the source-tree scanner. No server.
pglock_add_test(test_catalog_store SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_catalog_store.cpp LIBS lockscope_ui Qt6::Sql)
# Names sharing a key: the store's check and the catalog panel's warning (widgets, offscreen).
pglock_add_test(test_catalog_collisions SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_catalog_collisions.cpp LIBS lockscope_ui Qt6::Sql)
# The catalog panel at 200,000 names (offscreen): filtering and importing never stall the GUI thread.
pglock_add_test(test_catalog_scale SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_catalog_scale.cpp LIBS lockscope_ui Qt6::Widgets Qt6::Sql)
# The catalog service (worker thread, jobs, progress, cancel, busy file), the filtered list model
# and the panel's selection across a refilter. Label concurrency: the tsan preset runs it.
pglock_add_test(test_catalog_service SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_catalog_service.cpp LABELS concurrency
                LIBS lockscope_ui Qt6::Widgets Qt6::Sql)
if(PGLOCK_SANITIZE MATCHES "thread")
  # Qt's event queue and thread pool hand the jobs over with locks TSan cannot see (tests/core/tsan.supp).
  set_property(TEST test_catalog_service APPEND PROPERTY ENVIRONMENT
    "TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1:suppressions=${CMAKE_CURRENT_LIST_DIR}/../core/tsan.supp")
endif()
