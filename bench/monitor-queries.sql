-- The lock queries other monitoring tools run, for bench/monitor-price: what each costs the
-- server it watches, beside lockscope's poll. Each block starts with "-- name: ID" and its
-- source; bench/monitor-price runs one block at a time on one connection, as the tool would.
-- They are written out here with the same tables, joins, functions and filters as the source
-- (template parameters filled as a tool's default run fills them), which is what the server pays.

-- name: pgadmin4
-- pgAdmin 4's dashboard "Locks" tab, refreshed by the dashboard on a timer.
-- Source: pgadmin-org/pgadmin4, web/pgadmin/dashboard/templates/dashboard/sql/default/locks.sql
-- (commit 4dc9fb146ab47a8fdff8b7db3ecf773690e5625f), the server-wide form (no database chosen).
SELECT pid, locktype, datname, relation::regclass, page, tuple, virtualxid AS transactionid,
       classid::regclass, objid, objsubid, virtualtransaction, mode, granted, fastpath
  FROM pg_locks l LEFT OUTER JOIN pg_database d ON l.database = d.oid
 ORDER BY pid, locktype;

-- name: pg_activity
-- pg_activity's "blocking" view for PostgreSQL 14+: three unions of pg_locks joined to itself
-- (transaction id, virtual xid, relation) and to pg_stat_activity.
-- Source: dalibo/pg_activity, pgactivity/queries/get_blocking_post_140000.sql
-- (commit 2906474927b04e611dca224e54227f0fe78fc482), duration column query_start, no minimum
-- duration, no database filter.
SELECT pid, application_name, sq.datname AS database, usename AS "user", client, relation, mode,
       locktype AS type, duration, state, sq.query AS query,
       pg_catalog.pg_encoding_to_char(b.encoding) AS encoding, wait_event AS wait, query_id
  FROM (
        SELECT blocking.pid, a.application_name, a.query, blocking.mode, a.datname, a.datid,
               a.usename, a.client_addr AS client, blocking.locktype,
               extract(epoch FROM now() - a.query_start) AS duration, a.state,
               blocking.relation::regclass AS relation, a.wait_event, a.query_id
          FROM pg_locks AS blocking
          JOIN pg_locks AS blocked ON blocking.transactionid = blocked.transactionid
                                  AND blocking.locktype = blocked.locktype
          JOIN pg_stat_activity a ON blocking.pid = a.pid
         WHERE blocking.granted AND NOT blocked.granted
        UNION ALL
        SELECT blocking.pid, a.application_name, a.query, blocking.mode, a.datname, a.datid,
               a.usename, a.client_addr, blocking.locktype,
               extract(epoch FROM now() - a.query_start), a.state,
               blocking.relation::regclass, a.wait_event, a.query_id
          FROM pg_locks AS blocking
          JOIN pg_locks AS blocked ON blocking.virtualxid = blocked.virtualxid
                                  AND blocking.locktype = blocked.locktype
          JOIN pg_stat_activity a ON blocking.pid = a.pid
         WHERE blocking.granted AND NOT blocked.granted
        UNION ALL
        SELECT blocking.pid, a.application_name, a.query, blocking.mode, a.datname, a.datid,
               a.usename, a.client_addr, blocking.locktype,
               extract(epoch FROM now() - a.query_start), a.state,
               blocking.relation::regclass, a.wait_event, a.query_id
          FROM pg_locks AS blocking
          JOIN pg_locks AS blocked ON blocking.database = blocked.database
                                  AND blocking.relation = blocked.relation
                                  AND blocking.locktype = blocked.locktype
          JOIN pg_stat_activity a ON blocking.pid = a.pid
         WHERE blocking.granted AND NOT blocked.granted AND blocked.relation IS NOT NULL
       ) AS sq
  LEFT OUTER JOIN pg_database b ON sq.datid = b.oid
 GROUP BY pid, application_name, database, usename, client, relation, mode, locktype, duration,
          state, query, encoding, wait_event, query_id
 ORDER BY duration DESC;

-- name: postgres_exporter
-- prometheus-community/postgres_exporter's pg_locks collector (pg_locks_count{datname,mode}).
-- Source: prometheus-community/postgres_exporter, collector/pg_locks.go
-- (commit 16ff2e382710c85a48ad45b23a43e4e0c0d95312).
SELECT pg_database.datname AS datname, tmp.mode AS mode, coalesce(count, 0) AS count
  FROM (VALUES ('accesssharelock'), ('rowsharelock'), ('rowexclusivelock'),
               ('shareupdateexclusivelock'), ('sharelock'), ('sharerowexclusivelock'),
               ('exclusivelock'), ('accessexclusivelock'), ('sireadlock')) AS tmp(mode)
  CROSS JOIN pg_database
  LEFT JOIN (SELECT database, lower(mode) AS mode, count(*) AS count
               FROM pg_locks WHERE database IS NOT NULL
              GROUP BY database, lower(mode)) AS tmp2
         ON tmp.mode = tmp2.mode AND pg_database.oid = tmp2.database
 ORDER BY 1;

-- name: wiki
-- The PostgreSQL wiki's "Lock Monitoring" query (9.2+ form): every ungranted lock joined to every
-- granted lock on the same object of another backend, both sides joined to pg_stat_activity.
-- Source: https://wiki.postgresql.org/wiki/Lock_Monitoring
SELECT blocked_locks.pid AS blocked_pid, blocked_activity.usename AS blocked_user,
       blocking_locks.pid AS blocking_pid, blocking_activity.usename AS blocking_user,
       blocked_activity.query AS blocked_statement,
       blocking_activity.query AS current_statement_in_blocking_process
  FROM pg_catalog.pg_locks blocked_locks
  JOIN pg_catalog.pg_stat_activity blocked_activity ON blocked_activity.pid = blocked_locks.pid
  JOIN pg_catalog.pg_locks blocking_locks
       ON blocking_locks.locktype = blocked_locks.locktype
      AND blocking_locks.database IS NOT DISTINCT FROM blocked_locks.database
      AND blocking_locks.relation IS NOT DISTINCT FROM blocked_locks.relation
      AND blocking_locks.page IS NOT DISTINCT FROM blocked_locks.page
      AND blocking_locks.tuple IS NOT DISTINCT FROM blocked_locks.tuple
      AND blocking_locks.virtualxid IS NOT DISTINCT FROM blocked_locks.virtualxid
      AND blocking_locks.transactionid IS NOT DISTINCT FROM blocked_locks.transactionid
      AND blocking_locks.classid IS NOT DISTINCT FROM blocked_locks.classid
      AND blocking_locks.objid IS NOT DISTINCT FROM blocked_locks.objid
      AND blocking_locks.objsubid IS NOT DISTINCT FROM blocked_locks.objsubid
      AND blocking_locks.pid != blocked_locks.pid
  JOIN pg_catalog.pg_stat_activity blocking_activity ON blocking_activity.pid = blocking_locks.pid
 WHERE NOT blocked_locks.granted;
