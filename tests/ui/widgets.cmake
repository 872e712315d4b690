find_package(PostgreSQL REQUIRED)
# The main window offscreen against the real server (RUN_SERIAL: it restarts the server).
pglock_add_test(test_main_window SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_main_window.cpp PG LIBS lockscope_ui PostgreSQL::PostgreSQL)
set_tests_properties(test_main_window PROPERTIES RUN_SERIAL TRUE)
# Names and keys as typed or pasted (no server, offscreen): long names hashed whole and shown
# elided; every notation the views display read back by the resolver.
pglock_add_test(test_name_inputs SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_name_inputs.cpp LIBS lockscope_ui Qt6::Widgets Qt6::Sql)
# The locks view during an outage (a cluster of its own, stopped by the test): stale rows greyed,
# timers frozen, "as of" shown. Leaves stale-view.png in the build dir.
pglock_add_test(test_stale_view SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_stale_view.cpp OWN_CLUSTER
                LIBS lockscope_ui PostgreSQL::PostgreSQL)
# How the views write text (no server): bidi overrides escaped, the catalog sorted A→Z, singulars.
pglock_add_test(test_view_text SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_view_text.cpp LIBS lockscope_ui Qt6::Widgets Qt6::Sql)
# The first screen at 1440×780 (offscreen, real server): layout, summary strip, keyboard.
pglock_add_test(test_first_screen SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_first_screen.cpp PG LIBS lockscope_ui PostgreSQL::PostgreSQL)
# One lock, one name (offscreen, real server): a lock named by its holder shows the same name in
# the locks view, the session panel, the timeline, the histogram, the history and its CSV.
pglock_add_test(test_one_name SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_one_name.cpp PG LIBS lockscope_ui PostgreSQL::PostgreSQL)
# The locks view (no server, offscreen): a change under a collapsed lock looks up no row (the
# 50,000-lock view's once-a-second scan); one under an expanded lock repaints its cell.
pglock_add_test(test_locks_tree_view SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_locks_tree_view.cpp LIBS lockscope_ui Qt6::Widgets)
