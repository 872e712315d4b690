list(APPEND LOCKSCOPE_WIDGETS_SOURCES
  ${CMAKE_CURRENT_LIST_DIR}/main_window.cpp
  ${CMAKE_CURRENT_LIST_DIR}/locks_view_layout.cpp
  ${CMAKE_CURRENT_LIST_DIR}/locks_tree_view.cpp
  ${CMAKE_CURRENT_LIST_DIR}/summary_strip.cpp
  ${CMAKE_CURRENT_LIST_DIR}/shortcuts_dialog.cpp
  ${CMAKE_CURRENT_LIST_DIR}/main_window_keys.cpp
  ${CMAKE_CURRENT_LIST_DIR}/main_window_sessions.cpp
  ${CMAKE_CURRENT_LIST_DIR}/settings_dialog.cpp
  ${CMAKE_CURRENT_LIST_DIR}/plain_message_box.hpp
  ${CMAKE_CURRENT_LIST_DIR}/connection_dialog.cpp
  ${CMAKE_CURRENT_LIST_DIR}/resolver_panel.cpp
  ${CMAKE_CURRENT_LIST_DIR}/session_panel.cpp
  ${CMAKE_CURRENT_LIST_DIR}/catalog_panel.cpp
  ${CMAKE_CURRENT_LIST_DIR}/name_input.cpp
  ${CMAKE_CURRENT_LIST_DIR}/lock_tree_panel.cpp)
# Operator actions: the take-lock dialog and the "My locks" panel (they talk to ui/actions).
list(APPEND LOCKSCOPE_WIDGETS_SOURCES
  ${CMAKE_CURRENT_LIST_DIR}/main_window_actions.cpp
  ${CMAKE_CURRENT_LIST_DIR}/take_lock_dialog.cpp
  ${CMAKE_CURRENT_LIST_DIR}/my_locks_panel.cpp)
