-- SPDX-License-Identifier: GPL-3.0-or-later
-- Redrive native schema, version 24: a bulk's run holder is a session of the bulk's owner
-- (docs/reliability.md#bulk-actions-survive-the-console, docs/security.md).
--
-- Version 23 took the run holder to be the backend whose pid begin_bulk_run recorded
-- (bulk_operation.run_pid), while it holds the run's random key (run_key). Both are public
-- while the run lasts: pg_locks shows every login the pid and the key. After the owner's
-- console crashed, the pid is free again, and the operating system hands pids out again in
-- turn (pid_max is 32768 on many systems): a login with no Redrive role that opens sessions
-- until one gets that pid, and takes the key it saw, was the bulk's run holder. The bulk then
-- showed as running and could not be resumed, taken over or given up for as long as that
-- session stayed.
--
-- Now the holder must also be logged in as the bulk's owner (pg_stat_activity.usesysid, which
-- every login may read, unlike backend_start): a session of any other login is never the
-- holder, whatever its pid and locks. Only the owner's own login could stand in for its run,
-- and the owner may run its bulk anyway.
CREATE OR REPLACE FUNCTION redrive.bulk_run_holder(p_bulk_id uuid) RETURNS integer
LANGUAGE sql STABLE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
RETURN (SELECT l.pid
          FROM redrive.bulk_operation b
          JOIN pg_catalog.pg_locks l
            ON l.locktype = 'advisory' AND l.granted AND l.objsubid = 2
           AND l.pid = b.run_pid
           AND l.database = (SELECT oid FROM pg_catalog.pg_database
                              WHERE datname = current_database())
           AND l.classid = redrive.bulk_run_lock_class()::oid
           AND l.objid = (b.run_key::bigint & 4294967295)::oid
          JOIN pg_catalog.pg_stat_activity a
            ON a.pid = l.pid
           AND a.usesysid = (SELECT r.oid FROM pg_catalog.pg_roles r WHERE r.rolname = b.actor)
         WHERE b.bulk_id = p_bulk_id
         LIMIT 1);
