# Other libraries' key schemes against Python's hashlib/zlib/hmac (no server), and the SQL forms
# (pglock-v1's, pg-boss's, GoodJob's) and the pair form's pg_locks row on a real server.
pglock_add_test(test_key_schemes SOURCES test_key_schemes.cpp)
pglock_add_test(test_key_schemes_sql SOURCES test_key_schemes_sql.cpp PG LIBS PostgreSQL::PostgreSQL Threads::Threads)
