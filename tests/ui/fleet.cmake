# The Fleet tab's model over several server sessions (the model library only), against two
# databases of the test server, a closed port, and a primary + standby pair of its own that it
# fails over.
find_package(PostgreSQL REQUIRED)
pglock_add_test(test_fleet_model SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_fleet_model.cpp PG OWN_CLUSTER
                LIBS lockscope_model PostgreSQL::PostgreSQL Qt6::Network)
# The window's views follow the server picked in the Fleet tab (offscreen, two databases).
pglock_add_test(test_fleet_window SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_fleet_window.cpp PG
                LIBS lockscope_ui PostgreSQL::PostgreSQL)
