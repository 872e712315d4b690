find_package(PostgreSQL REQUIRED)
# The monitor's history: the SQLite store (round trip, retention, row bound, filters), RFC 4180
# CSV, the history model under QAbstractItemModelTester, the recorder's thread, and one test on
# the real server: a hold and a wait seen by the poller end up in the store.
pglock_add_test(test_history_store SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_history_store.cpp PG
                LIBS lockscope_ui Qt6::Sql PostgreSQL::PostgreSQL)
