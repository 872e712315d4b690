-- The pair with the statements `pglock bench` sends by default (core/src/lock.cpp,
-- named_statements): the lock statement names the holder in application_name, the unlock puts
-- the name back and runs pg_advisory_unlock_all(); both return pg_backend_pid(). What those
-- statements cost the server, apart from any client library. chr(58) is the colon of
-- "pglock:", which pgbench would read as a variable.
\set k :client_id + 424242
SELECT CASE WHEN pg_try_advisory_lock(:k) THEN set_config('application_name', 'pglock pglock' || chr(58) || 'pglock.bench.pair.' || :client_id, false) IS NOT NULL ELSE false END, pg_backend_pid();
SELECT pg_advisory_unlock(:k), pg_backend_pid(), set_config('application_name', 'pglock', false), pg_advisory_unlock_all();
