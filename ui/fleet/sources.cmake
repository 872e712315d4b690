# The Fleet tab: a widget-free model of every server session (lockscope_model) and its table with
# a sparkline of waiters (lockscope_widgets).
list(APPEND LOCKSCOPE_MODEL_SOURCES
  ${CMAKE_CURRENT_LIST_DIR}/fleet_model.hpp
  ${CMAKE_CURRENT_LIST_DIR}/fleet_model.cpp)
list(APPEND LOCKSCOPE_WIDGETS_SOURCES
  ${CMAKE_CURRENT_LIST_DIR}/fleet_panel.hpp
  ${CMAKE_CURRENT_LIST_DIR}/fleet_panel.cpp)
