# Bad connection input on the command line: every verb that connects exits 1 with one line that
# names the problem and never repeats a password. The wrong-password case runs against a cluster
# of the test's own with scram-sha-256 (tests/support/own_cluster.hpp), hence `pg` without the
# shared fixture.
pglock_cli_test(test_cli_bad_input SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_cli_bad_input.cpp cli_test_support.hpp
                OWN_CLUSTER LABELS security)
