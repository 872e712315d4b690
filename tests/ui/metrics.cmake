# The /metrics scraper, its models and panel: end to end against the real CLI's --metrics
# endpoint (prometheus-cpp output, so PG), and against servers made in the test that are dead,
# slow, huge, malformed or changing between scrapes.
find_package(PostgreSQL REQUIRED)
find_package(Qt6 6.4 REQUIRED COMPONENTS Network)
pglock_add_test(test_metrics_scraper SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_metrics_scraper.cpp PG
                LIBS lockscope_ui Qt6::Network PostgreSQL::PostgreSQL)
target_include_directories(test_metrics_scraper PRIVATE ${CMAKE_CURRENT_LIST_DIR}/../cli)   # cli_test_support.hpp
if(TARGET pglock_cli_app)
  target_compile_definitions(test_metrics_scraper PRIVATE PGLOCK_CLI_PATH="$<TARGET_FILE:pglock_cli_app>")
  add_dependencies(test_metrics_scraper pglock_cli_app)
else()
  target_compile_definitions(test_metrics_scraper PRIVATE PGLOCK_CLI_PATH="")
endif()
