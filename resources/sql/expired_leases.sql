-- SPDX-License-Identifier: GPL-3.0-or-later
-- Running jobs whose lease expired (their worker died or hung), longest expired first, whatever
-- their idempotency key; $1 rows.
SELECT l.job_id, l.queue, l.kind, l.worker_id, l.attempt, l.max_attempts, l.locked_until,
       l.heartbeat_at, l.idempotency_key, l.expired_seconds
  FROM expired_lease_list l
 ORDER BY l.locked_until, l.job_id
 LIMIT $1
