# The stores: the name catalog (SQLite) and its list import (the list format is core's).
list(APPEND LOCKSCOPE_MODEL_SOURCES
  ${CMAKE_CURRENT_LIST_DIR}/catalog_store.cpp
  ${CMAKE_CURRENT_LIST_DIR}/catalog_name_cache.cpp
  ${CMAKE_CURRENT_LIST_DIR}/name_import.cpp
)
# The app's settings and the connection profiles (QSettings).
list(APPEND LOCKSCOPE_MODEL_SOURCES
  ${CMAKE_CURRENT_LIST_DIR}/app_settings.cpp
  ${CMAKE_CURRENT_LIST_DIR}/profile_store.cpp
)
