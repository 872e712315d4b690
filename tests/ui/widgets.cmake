find_package(PostgreSQL REQUIRED)
# The main window offscreen against the real server (RUN_SERIAL: it restarts the server).
pglock_add_test(test_main_window SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_main_window.cpp PG LIBS lockscope_ui PostgreSQL::PostgreSQL)
set_tests_properties(test_main_window PROPERTIES RUN_SERIAL TRUE)
