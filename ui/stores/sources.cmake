# The stores: the name catalog (SQLite) and the name-list parser feeding it.
list(APPEND LOCKSCOPE_UI_SOURCES
  ${CMAKE_CURRENT_LIST_DIR}/catalog_store.cpp
  ${CMAKE_CURRENT_LIST_DIR}/catalog_name_cache.cpp
  ${CMAKE_CURRENT_LIST_DIR}/name_import.cpp
)
