# The locks view's model, its filter proxy and the session detail helper.
find_package(PostgreSQL REQUIRED)
# Snapshots built in the test: merge signals, roles, proxy filter/sort, and a 10k-lock timing print.
pglock_add_test(test_locks_model SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_locks_model.cpp LIBS lockscope_ui)
# LocksFilterProxy: order and filter after random polls against a full sort; the view's place kept.
pglock_add_test(test_locks_proxy SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_locks_proxy.cpp LIBS lockscope_ui)
pglock_add_test(test_session_info SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_session_info.cpp LIBS lockscope_ui)
# A real lock on the test server, polled by the monitor, found in the model and gone after release.
pglock_add_test(test_locks_model_pg SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_locks_model_pg.cpp PG
                LIBS lockscope_ui PostgreSQL::PostgreSQL)
# StagedSnapshotFeeder: 6,000 locks reach the model over several turns, at most K new rows a turn;
# a result arriving meanwhile wins; clear() cancels; the view's current row and expansion stay.
pglock_add_test(test_staged_feeder SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_staged_feeder.cpp LIBS lockscope_ui)
# Every cell and role of the locks model for one fixed snapshot, against tests/ui/golden/lock_cells.txt.
pglock_add_test(test_lock_cells SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_lock_cells.cpp LIBS lockscope_ui)
# LockTreeModel: the Tree tab's rows, edge names, the worst root's line, no reset for a same-shape poll.
pglock_add_test(test_lock_tree_model SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_lock_tree_model.cpp LIBS lockscope_ui)
# summarize() (no server): the oldest hold per lock in any order of locks, stale start times ignored.
pglock_add_test(test_lock_summary SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_lock_summary.cpp LIBS lockscope_ui)
