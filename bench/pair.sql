-- One try_lock + unlock pair, as pgbench runs it (-M prepared, one transaction per pair): the
-- two round trips `pglock bench --no-holder-identity` makes, the ceiling for a client library.
-- One key per client. Used by bench/pgbench-compare, bench/pair-costs and bench/monitor-price.
\set k :client_id + 424242
SELECT pg_try_advisory_lock(:k);
SELECT pg_advisory_unlock(:k);
