# The palette every custom colour comes from, and the light/dark theme.
list(APPEND LOCKSCOPE_UI_SOURCES
  ${CMAKE_CURRENT_LIST_DIR}/app_palette.hpp
  ${CMAKE_CURRENT_LIST_DIR}/app_palette.cpp)
