-- SPDX-License-Identifier: GPL-3.0-or-later
-- Unfinished bulk actions (not every chunk done, not abandoned), newest first, with progress:
-- $1 only the caller's own (true) or every operator's (false), $2 rows.
SELECT b.bulk_id, b.action, b.actor, b.os_user, b.target_count, b.chunk_size, b.chunk_count,
       b.chunks_done, b.applied, b.conflicts, b.refused, b.reason, b.ticket, b.created_at,
       b.last_chunk_at, b.running, (b.actor = session_user) AS mine
  FROM bulk_action_list b
 WHERE NOT b.finished AND b.abandoned_at IS NULL
   AND (NOT $1::boolean OR b.actor = session_user)
 ORDER BY b.created_at DESC, b.bulk_id
 LIMIT $2
