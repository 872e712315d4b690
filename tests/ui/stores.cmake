# The name catalog (SQLite), its text import/export and the source-tree scanner. No server.
pglock_add_test(test_catalog_store SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_catalog_store.cpp LIBS lockscope_ui Qt6::Sql)
# Names sharing a key: the store's check and the catalog panel's warning (widgets, offscreen).
pglock_add_test(test_catalog_collisions SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_catalog_collisions.cpp LIBS lockscope_ui Qt6::Sql)
