-- SPDX-License-Identifier: GPL-3.0-or-later
-- Take the run lock of bulk $1 in this session and read its frozen list with the chunks
-- already done (refused with lock_not_available while another session runs it); the list itself
-- only when $2 is true.
SELECT r.bulk_id, r.action, r.os_user, CASE WHEN $2::boolean THEN r.targets::text END AS targets,
       r.target_count, r.chunk_size, r.params::text AS params, r.reason, r.ticket,
       array_to_json(r.chunks_done)::text AS chunks_done, r.applied, r.conflicts, r.refused
  FROM begin_bulk_run($1::uuid) r
