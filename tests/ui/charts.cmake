# Charts: histogram bucket/quantile maths, the hold-stats and timeline models under
# QAbstractItemModelTester, and the charts panel rendered offscreen (5,000 holds, PNG export).
# LOCKSCOPE_CHART_SCREENSHOT=/tmp/charts.png makes the test also write screenshots of both tabs.
# Qt6::Charts is imported per directory: find it here too (ui/ found it for the library).
find_package(Qt6 6.4 REQUIRED COMPONENTS Charts)
pglock_add_test(test_charts SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_charts.cpp LIBS lockscope_ui Qt6::Charts)
