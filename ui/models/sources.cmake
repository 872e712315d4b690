# The locks view's model, its sort/filter proxy, the staged feeder of big snapshots, the session detail helper
# and how every view shows server text.
list(APPEND LOCKSCOPE_MODEL_SOURCES
  ${CMAKE_CURRENT_LIST_DIR}/lock_naming.hpp
  ${CMAKE_CURRENT_LIST_DIR}/lock_naming.cpp
  ${CMAKE_CURRENT_LIST_DIR}/lock_facts.hpp
  ${CMAKE_CURRENT_LIST_DIR}/lock_facts.cpp
  ${CMAKE_CURRENT_LIST_DIR}/lock_cells.hpp
  ${CMAKE_CURRENT_LIST_DIR}/lock_cells.cpp
  ${CMAKE_CURRENT_LIST_DIR}/lock_columns.hpp
  ${CMAKE_CURRENT_LIST_DIR}/lock_columns.cpp
  ${CMAKE_CURRENT_LIST_DIR}/locks_model.hpp
  ${CMAKE_CURRENT_LIST_DIR}/locks_model.cpp
  ${CMAKE_CURRENT_LIST_DIR}/locks_model_gather.cpp
  ${CMAKE_CURRENT_LIST_DIR}/locks_filter_proxy.hpp
  ${CMAKE_CURRENT_LIST_DIR}/locks_filter_proxy.cpp
  ${CMAKE_CURRENT_LIST_DIR}/staged_snapshot_feeder.hpp
  ${CMAKE_CURRENT_LIST_DIR}/staged_snapshot_feeder.cpp
  ${CMAKE_CURRENT_LIST_DIR}/lock_summary.hpp
  ${CMAKE_CURRENT_LIST_DIR}/lock_summary.cpp
  ${CMAKE_CURRENT_LIST_DIR}/plain_text.hpp
  ${CMAKE_CURRENT_LIST_DIR}/server_text.hpp
  ${CMAKE_CURRENT_LIST_DIR}/server_text.cpp
  ${CMAKE_CURRENT_LIST_DIR}/session_info.hpp
  ${CMAKE_CURRENT_LIST_DIR}/session_info.cpp
  ${CMAKE_CURRENT_LIST_DIR}/lock_tree_model.hpp
  ${CMAKE_CURRENT_LIST_DIR}/lock_tree_model.cpp)
