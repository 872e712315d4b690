# Prometheus /metrics of the applications that use the library: the scraper, its models and panel.
list(APPEND LOCKSCOPE_MODEL_SOURCES
  ${CMAKE_CURRENT_LIST_DIR}/scrape_types.hpp
  ${CMAKE_CURRENT_LIST_DIR}/metrics_scraper.hpp
  ${CMAKE_CURRENT_LIST_DIR}/metrics_scraper.cpp
  ${CMAKE_CURRENT_LIST_DIR}/metrics_model.hpp
  ${CMAKE_CURRENT_LIST_DIR}/metrics_model.cpp
  ${CMAKE_CURRENT_LIST_DIR}/endpoint_status_model.hpp
  ${CMAKE_CURRENT_LIST_DIR}/endpoint_status_model.cpp
  ${CMAKE_CURRENT_LIST_DIR}/claims_tracker.hpp
  ${CMAKE_CURRENT_LIST_DIR}/claims_tracker.cpp)
# The widgets that draw them (lockscope_widgets).
list(APPEND LOCKSCOPE_WIDGETS_SOURCES
  ${CMAKE_CURRENT_LIST_DIR}/metrics_panel.hpp
  ${CMAKE_CURRENT_LIST_DIR}/metrics_panel.cpp)
