# The source scanner: finds lock names in a source tree (lexer, call matcher, tree walk).
list(APPEND LOCKSCOPE_MODEL_SOURCES
  ${CMAKE_CURRENT_LIST_DIR}/source_lexer.cpp
  ${CMAKE_CURRENT_LIST_DIR}/call_matcher.cpp
  ${CMAKE_CURRENT_LIST_DIR}/source_scanner.cpp
)
