# Charts: the hold-duration histogram and the hold timeline, their models and the panel that holds
# both.
list(APPEND LOCKSCOPE_MODEL_SOURCES
  ${CMAKE_CURRENT_LIST_DIR}/chart_models.hpp
  ${CMAKE_CURRENT_LIST_DIR}/chart_models.cpp
  ${CMAKE_CURRENT_LIST_DIR}/hold_histogram_math.hpp
  ${CMAKE_CURRENT_LIST_DIR}/hold_histogram_math.cpp
  ${CMAKE_CURRENT_LIST_DIR}/lock_label.hpp
  ${CMAKE_CURRENT_LIST_DIR}/lock_label.cpp
  ${CMAKE_CURRENT_LIST_DIR}/hold_stats_model.hpp
  ${CMAKE_CURRENT_LIST_DIR}/hold_stats_model.cpp
  ${CMAKE_CURRENT_LIST_DIR}/timeline_model.hpp
  ${CMAKE_CURRENT_LIST_DIR}/timeline_model.cpp)
# The widgets that draw them (lockscope_widgets).
list(APPEND LOCKSCOPE_WIDGETS_SOURCES
  ${CMAKE_CURRENT_LIST_DIR}/chart_style.hpp
  ${CMAKE_CURRENT_LIST_DIR}/chart_style.cpp
  ${CMAKE_CURRENT_LIST_DIR}/png_export.hpp
  ${CMAKE_CURRENT_LIST_DIR}/png_export.cpp
  ${CMAKE_CURRENT_LIST_DIR}/hold_histogram_chart.hpp
  ${CMAKE_CURRENT_LIST_DIR}/hold_histogram_chart.cpp
  ${CMAKE_CURRENT_LIST_DIR}/timeline_bars_item.hpp
  ${CMAKE_CURRENT_LIST_DIR}/timeline_bars_item.cpp
  ${CMAKE_CURRENT_LIST_DIR}/timeline_chart.hpp
  ${CMAKE_CURRENT_LIST_DIR}/timeline_chart.cpp
  ${CMAKE_CURRENT_LIST_DIR}/charts_panel.hpp
  ${CMAKE_CURRENT_LIST_DIR}/charts_panel.cpp)
