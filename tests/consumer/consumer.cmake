# Installs the built library into a scratch prefix, builds tests/consumer/project against it with
# find_package(pglock CONFIG), and runs the library example it builds (examples/quickstart.cpp,
# shown in README.md and docs/library.md) against the test server.
foreach(var BUILD_DIR SOURCE_DIR WORK_DIR DSN_FILE)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "consumer.cmake needs -D${var}=...")
  endif()
endforeach()
file(REMOVE_RECURSE ${WORK_DIR})
# A sanitized library (asan/tsan presets) needs its consumer built with the same sanitizer, as any
# real consumer of such a build would; otherwise the link misses the sanitizer runtime.
set(sanitize_flags "")
if(SANITIZE)
  set(sanitize_flags -DCMAKE_CXX_FLAGS=-fsanitize=${SANITIZE} -DCMAKE_EXE_LINKER_FLAGS=-fsanitize=${SANITIZE})
endif()
set(prefix ${WORK_DIR}/prefix)
execute_process(COMMAND ${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${prefix} --component dev
                RESULT_VARIABLE rc OUTPUT_QUIET)
if(rc)
  message(FATAL_ERROR "cmake --install failed: ${rc}")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} -S ${SOURCE_DIR}/tests/consumer/project -B ${WORK_DIR}/build -G Ninja
                        -DCMAKE_PREFIX_PATH=${prefix} -DEXAMPLE_SOURCE=${SOURCE_DIR}/examples/quickstart.cpp
                        ${sanitize_flags}
                RESULT_VARIABLE rc)
if(rc)
  message(FATAL_ERROR "configuring the consumer project failed: ${rc}")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} --build ${WORK_DIR}/build RESULT_VARIABLE rc)
if(rc)
  message(FATAL_ERROR "building the consumer project failed: ${rc}")
endif()
if(DEFINED ENV{PGLOCK_TEST_DSN})
  set(dsn "$ENV{PGLOCK_TEST_DSN}")
else()
  file(STRINGS ${DSN_FILE} dsn LIMIT_COUNT 1)
endif()
execute_process(COMMAND ${WORK_DIR}/build/quickstart "${dsn}" RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
message(STATUS "quickstart printed:\n${out}${err}")
if(rc)
  message(FATAL_ERROR "the installed quickstart example failed: ${rc}")
endif()
foreach(expected "rolling up under key -7132652647757890940" "warming up" "lost: false" "objsubid OPERATOR(pg_catalog.=) 1"
                 "msg=\"lock: acquired\" name=session.warmup")
  string(FIND "${out}${err}" "${expected}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "quickstart output lacks '${expected}'")
  endif()
endforeach()
