find_package(PostgreSQL REQUIRED)
# The per-server session without a widget, against the real server (linked against the model
# library only: it is the proof that a session needs no widget).
pglock_add_test(test_server_session SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_server_session.cpp PG
                LIBS lockscope_model PostgreSQL::PostgreSQL)
# The layering, as the linker left it: the session test binary (the model library and Qt Test)
# needs no widgets module. The second test runs the same check on lockscope, which must fail it,
# so that the check is known to see a widgets dependency when there is one.
add_test(NAME ui_model_layering COMMAND ${CMAKE_COMMAND} -DBINARY=$<TARGET_FILE:test_server_session>
                                        -P ${CMAKE_CURRENT_LIST_DIR}/check_no_widgets.cmake)
add_test(NAME ui_model_layering_detects COMMAND ${CMAKE_COMMAND} -DBINARY=$<TARGET_FILE:lockscope>
                                                -P ${CMAKE_CURRENT_LIST_DIR}/check_no_widgets.cmake)
set_tests_properties(ui_model_layering_detects PROPERTIES WILL_FAIL TRUE)
