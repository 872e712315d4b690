-- The pair with the statements `pglock bench` sends by default (core/src/lock.cpp,
-- named_statements): each acts only on a backend that carries the connection's pglock.owner mark
-- (the runners set it for pgbench's connections with PGOPTIONS='-c pglock.owner=bench'); the lock
-- statement names the holder in application_name, the unlock puts the name back and runs
-- pg_advisory_unlock_all(); both return pg_backend_pid(). What those statements cost the
-- server, apart from any client library. chr(58) is the colon of "pglock:", which pgbench would
-- read as a variable.
\set k :client_id + 424242
SELECT CASE WHEN pg_catalog.current_setting('pglock.owner', true) OPERATOR(pg_catalog.=) 'bench' THEN CASE WHEN pg_catalog.pg_try_advisory_lock(:k) THEN pg_catalog.set_config('application_name', 'pglock pglock' || chr(58) || 'pglock.bench.pair.' || :client_id, false) IS NOT NULL ELSE false END END, pg_catalog.pg_backend_pid();
SELECT CASE WHEN pg_catalog.current_setting('pglock.owner', true) OPERATOR(pg_catalog.=) 'bench' THEN pg_catalog.pg_advisory_unlock(:k) END, pg_catalog.pg_backend_pid(), CASE WHEN pg_catalog.current_setting('pglock.owner', true) OPERATOR(pg_catalog.=) 'bench' THEN pg_catalog.set_config('application_name', 'pglock', false) END, CASE WHEN pg_catalog.current_setting('pglock.owner', true) OPERATOR(pg_catalog.=) 'bench' THEN pg_catalog.pg_advisory_unlock_all() END;
