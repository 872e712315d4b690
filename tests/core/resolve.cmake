# The resolver's key-input parsing (decimal, 0x hex, classid/objid pairs): no server.
pglock_add_test(test_resolve SOURCES test_resolve.cpp)
