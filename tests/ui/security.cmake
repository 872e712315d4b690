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
