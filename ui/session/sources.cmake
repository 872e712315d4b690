# One monitored server without a widget: its poller, models, recorder, scraper and controllers,
# and the routing of each poll result to them (the window is a view over these).
list(APPEND LOCKSCOPE_MODEL_SOURCES
  ${CMAKE_CURRENT_LIST_DIR}/server_session.hpp
  ${CMAKE_CURRENT_LIST_DIR}/server_session.cpp)
