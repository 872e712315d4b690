find_package(PostgreSQL REQUIRED)
# The poller against the real server: results, recovery after its session is killed and after a
# server restart (RUN_SERIAL: the restart would disturb other tests).
pglock_add_test(test_poller SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_poller.cpp PG LIBS lockscope_ui PostgreSQL::PostgreSQL)
set_tests_properties(test_poller PROPERTIES RUN_SERIAL TRUE)
# The poller through a silently cut network (a frozen TCP relay in a private network namespace):
# disconnected within its bound, then back with the same rows. RUN_SERIAL: timing bounds.
pglock_add_test(test_poller_faults
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_poller_faults.cpp ${CMAKE_CURRENT_LIST_DIR}/../support/tcp_relay.cpp
  PG LIBS lockscope_ui PostgreSQL::PostgreSQL)
set_tests_properties(test_poller_faults PROPERTIES RUN_SERIAL TRUE)
