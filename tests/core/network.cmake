# Network faults through a local TCP relay: a silent cut (in a private network namespace, where
# the relay can make packets vanish) and a reset, under held guards, the monitor and acquire.
# RUN_SERIAL: its timing bounds (a few seconds) should not compete with a loaded machine.
pglock_add_test(test_network_faults
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_network_faults.cpp ${CMAKE_CURRENT_LIST_DIR}/../support/tcp_relay.cpp
  PG LABELS concurrency LIBS ${_core_test_libs})
set_tests_properties(test_network_faults PROPERTIES RUN_SERIAL TRUE)
