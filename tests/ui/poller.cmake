find_package(PostgreSQL REQUIRED)
# The poller against the real server: results, recovery after its session is killed and after a
# server restart (RUN_SERIAL: the restart would disturb other tests).
pglock_add_test(test_poller SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_poller.cpp PG LIBS lockscope_ui PostgreSQL::PostgreSQL)
set_tests_properties(test_poller PROPERTIES RUN_SERIAL TRUE)
