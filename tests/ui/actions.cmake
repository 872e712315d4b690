find_package(PostgreSQL REQUIRED)
# The lock and backend controllers against the real server: take/release in every mode, a
# canceled wait that leaves nothing behind, the lost state, read-only refusals, cancel/terminate.
pglock_add_test(test_lock_controller SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_lock_controller.cpp PG
                LIBS lockscope_ui PostgreSQL::PostgreSQL)
# "Terminate holder…": its impact read from the real server off the GUI thread, and the text the
# confirmation shows; the naming rule's place for context-derived locks.
pglock_add_test(test_terminate_impact SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_terminate_impact.cpp PG
                LIBS lockscope_ui PostgreSQL::PostgreSQL)
