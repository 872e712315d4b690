# Bad connection input on the command line: every verb that connects exits 1 with one line that
# names the problem and never repeats a password. The wrong-password case runs against a cluster
# of the test's own with scram-sha-256 (tests/support/own_cluster.hpp), hence `pg` without the
# shared fixture.
pglock_cli_test(test_cli_bad_input SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_cli_bad_input.cpp cli_test_support.hpp
                OWN_CLUSTER LABELS security)
# Text a tenant controls (its role, database, schema and table names, the error its trigger
# raises) and a hostile server's refusal, in every text path of the CLI: shown by the one display
# rule, nothing a terminal obeys (tests/support/hostile_tenant.hpp, a cluster of the test's own).
pglock_cli_test(test_cli_hostile_text SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_cli_hostile_text.cpp cli_test_support.hpp
                OWN_CLUSTER LABELS security)
