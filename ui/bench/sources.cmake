# The app's benchmark mode (lockscope --bench-seconds): a stall probe on the GUI thread.
list(APPEND LOCKSCOPE_WIDGETS_SOURCES
  ${CMAKE_CURRENT_LIST_DIR}/bench_mode.hpp
  ${CMAKE_CURRENT_LIST_DIR}/bench_mode.cpp
  # lockscope --bench-catalog: the catalog panel at N names.
  ${CMAKE_CURRENT_LIST_DIR}/catalog_bench.hpp
  ${CMAKE_CURRENT_LIST_DIR}/catalog_bench.cpp)
