# The palette every custom colour comes from, and the light/dark theme.
list(APPEND LOCKSCOPE_MODEL_SOURCES
  ${CMAKE_CURRENT_LIST_DIR}/app_palette.hpp
  ${CMAKE_CURRENT_LIST_DIR}/app_palette.cpp)
# theme::apply(): the application's widget style (lockscope_widgets).
list(APPEND LOCKSCOPE_WIDGETS_SOURCES
  ${CMAKE_CURRENT_LIST_DIR}/app_style.cpp)
