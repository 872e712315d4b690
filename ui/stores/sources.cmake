# The stores: the name catalog (SQLite) and the Qt-free-ish parsers feeding it.
list(APPEND LOCKSCOPE_UI_SOURCES
  ${CMAKE_CURRENT_LIST_DIR}/catalog_store.cpp
  ${CMAKE_CURRENT_LIST_DIR}/catalog_name_cache.cpp
  ${CMAKE_CURRENT_LIST_DIR}/name_import.cpp
  ${CMAKE_CURRENT_LIST_DIR}/source_scanner.cpp
)
