-- SPDX-License-Identifier: GPL-3.0-or-later
-- The keys tab opens the case of a key's job (resources/sql/dead_letter_of_job.sql): the console
-- asks dead_letter_list by job_ref, which is job_id::text on the native source, so the lookup
-- needs an index on that expression (without it, a scan of every dead letter).
CREATE INDEX dead_letter_job_ref_idx ON redrive.dead_letter ((job_id::text));
