find_package(PostgreSQL REQUIRED)
# Security: each test starts a PostgreSQL cluster of its own (tests/support/own_cluster.hpp), since
# it changes the server's TLS and authentication settings; hence the `pg` label without the
# shared fixture. test_tls: verify-full with a CA made at test time, and a wrong CA refused with a
# clear message. test_passwords: scram-sha-256 passwords from PGPASSWORD, ~/.pgpass and
# the typed field never reach a file the app writes; ProfileStore strips them; a wrong one is
# refused clearly. test_connect_errors (no server): bad connection input gives clear messages.
pglock_add_test(test_tls SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_tls.cpp OWN_CLUSTER LABELS security
                LIBS lockscope_ui PostgreSQL::PostgreSQL)
pglock_add_test(test_passwords SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_passwords.cpp OWN_CLUSTER LABELS security
                LIBS lockscope_ui PostgreSQL::PostgreSQL Qt6::Widgets)
pglock_add_test(test_connect_errors SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_connect_errors.cpp LABELS security
                LIBS lockscope_ui Qt6::Widgets)
# Server-supplied text full of HTML (application_name, query, a catalogued name) is shown as
# typed in every tooltip and label of the window (offscreen, the shared server); a tenant's names
# full of controls, bidi overrides and bytes that are not UTF-8 (a cluster of the test's own) and a
# hostile server's refusal are shown by the one display rule in every cell, tooltip and label.
pglock_add_test(test_hostile_text SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_hostile_text.cpp PG OWN_CLUSTER LABELS security
                LIBS lockscope_ui PostgreSQL::PostgreSQL Qt6::Widgets)
# lockscope's command line: a bad --tab, an unparsable --dsn and an --import-names file with
# unusable lines are each said once, with a non-zero exit, before any window shows. No server.
pglock_add_test(test_app_options SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_app_options.cpp LABELS security)
target_compile_definitions(test_app_options PRIVATE LOCKSCOPE_APP_PATH="$<TARGET_FILE:lockscope>")
add_dependencies(test_app_options lockscope)
