# Actions an operator takes on the server: locks by hand, cancel/terminate other backends. All
# round trips on worker threads; a read-only switch the controllers enforce themselves.
list(APPEND LOCKSCOPE_MODEL_SOURCES
  ${CMAKE_CURRENT_LIST_DIR}/own_lock.hpp
  ${CMAKE_CURRENT_LIST_DIR}/action_outcome.hpp
  ${CMAKE_CURRENT_LIST_DIR}/read_only_switch.hpp
  ${CMAKE_CURRENT_LIST_DIR}/lock_controller.hpp
  ${CMAKE_CURRENT_LIST_DIR}/lock_controller.cpp
  ${CMAKE_CURRENT_LIST_DIR}/backend_actions.hpp
  ${CMAKE_CURRENT_LIST_DIR}/backend_actions.cpp
  ${CMAKE_CURRENT_LIST_DIR}/terminate_impact.hpp
  ${CMAKE_CURRENT_LIST_DIR}/terminate_impact.cpp
  ${CMAKE_CURRENT_LIST_DIR}/my_locks_model.hpp
  ${CMAKE_CURRENT_LIST_DIR}/my_locks_model.cpp)
