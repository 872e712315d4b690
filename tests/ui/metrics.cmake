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
# Ghosts and leaks: a real process using the library (tests/cli's pglock_claims_holder) whose
# lock is lost unnoticed and whose session holds an unclaimed lock; the session's endpoint row
# and lock rows say so (model library only).
if(PGLOCK_WITH_PROMETHEUS)
  pglock_add_test(test_claims_view SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_claims_view.cpp PG
                  LIBS lockscope_model PostgreSQL::PostgreSQL)
  target_compile_definitions(test_claims_view PRIVATE PGLOCK_CLAIMS_HOLDER_PATH="$<TARGET_FILE:pglock_claims_holder>")
  add_dependencies(test_claims_view pglock_claims_holder)
endif()
