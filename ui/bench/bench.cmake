# Client-side benchmarks of the app: they print numbers and are not tests (see docs/performance.md,
# "The app's work per poll"). Built with the app, run by hand.
add_executable(lockscope_bench_merge
  ${CMAKE_CURRENT_LIST_DIR}/lockscope_bench_merge.cpp
  ${CMAKE_CURRENT_LIST_DIR}/snapshot_generator.hpp
  ${CMAKE_CURRENT_LIST_DIR}/snapshot_generator.cpp)
target_link_libraries(lockscope_bench_merge PRIVATE lockscope_ui pglock_warnings)
