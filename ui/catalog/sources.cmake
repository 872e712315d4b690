# The catalog off the GUI thread: its service (worker thread + SQLite connection of its own), the
# immutable snapshot it publishes, and the filtered list model of the catalog panel.
list(APPEND LOCKSCOPE_MODEL_SOURCES
  ${CMAKE_CURRENT_LIST_DIR}/background_priority.hpp
  ${CMAKE_CURRENT_LIST_DIR}/catalog_snapshot.cpp
  ${CMAKE_CURRENT_LIST_DIR}/catalog_service.cpp
  ${CMAKE_CURRENT_LIST_DIR}/catalog_list_model.cpp)
