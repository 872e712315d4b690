# The name catalog (SQLite), its text import/export and the source-tree scanner. No server.
pglock_add_test(test_catalog_store SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_catalog_store.cpp LIBS lockscope_ui Qt6::Sql)
