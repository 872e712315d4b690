# The app's benchmark mode (lockscope --bench-seconds): a stall probe on the GUI thread.
# It drives a ServerSession, not the window: model library.
list(APPEND LOCKSCOPE_MODEL_SOURCES
  ${CMAKE_CURRENT_LIST_DIR}/bench_mode.hpp
  ${CMAKE_CURRENT_LIST_DIR}/bench_mode.cpp)
# lockscope --bench-catalog: the catalog panel at N names.
list(APPEND LOCKSCOPE_WIDGETS_SOURCES
  ${CMAKE_CURRENT_LIST_DIR}/catalog_bench.hpp
  ${CMAKE_CURRENT_LIST_DIR}/catalog_bench.cpp)
