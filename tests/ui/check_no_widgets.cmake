# cmake -DBINARY=FILE -P check_no_widgets.cmake: fails when FILE was linked against a Qt widgets
# module (its dynamic section names libQt6Widgets or libQt6Charts). Run on the widget-free
# session test, it checks that the model library got by without them at link time.
execute_process(COMMAND readelf -d "${BINARY}" OUTPUT_VARIABLE dynamic RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "readelf -d ${BINARY} failed (${rc})")
endif()
if(NOT dynamic MATCHES "libQt6Core")
  message(FATAL_ERROR "${BINARY} needs no libQt6Core: not the binary this check is about")
endif()
if(dynamic MATCHES "(libQt6Widgets|libQt6Charts)[^ \n]*")
  message(FATAL_ERROR "${BINARY} is linked against ${CMAKE_MATCH_0}: the model library must not need widgets")
endif()
message(STATUS "${BINARY}: no widgets module linked")
