# The monitor's history: the SQLite store of finished holds and waits, the recorder that writes it
# on its own thread, the history tab's model and panel, and the CSV export.
list(APPEND LOCKSCOPE_MODEL_SOURCES
  ${CMAKE_CURRENT_LIST_DIR}/history_record.hpp
  ${CMAKE_CURRENT_LIST_DIR}/history_record.cpp
  ${CMAKE_CURRENT_LIST_DIR}/history_csv.hpp
  ${CMAKE_CURRENT_LIST_DIR}/history_csv.cpp
  ${CMAKE_CURRENT_LIST_DIR}/history_store.hpp
  ${CMAKE_CURRENT_LIST_DIR}/history_store.cpp
  ${CMAKE_CURRENT_LIST_DIR}/history_recorder.hpp
  ${CMAKE_CURRENT_LIST_DIR}/history_recorder.cpp
  ${CMAKE_CURRENT_LIST_DIR}/history_model.hpp
  ${CMAKE_CURRENT_LIST_DIR}/history_model.cpp)
# The widgets that draw them (lockscope_widgets).
list(APPEND LOCKSCOPE_WIDGETS_SOURCES
  ${CMAKE_CURRENT_LIST_DIR}/history_panel.hpp
  ${CMAKE_CURRENT_LIST_DIR}/history_panel.cpp)
