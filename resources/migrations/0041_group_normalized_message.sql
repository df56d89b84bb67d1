-- SPDX-License-Identifier: GPL-3.0-or-later
-- A failure group's normalized message (the second half of its name: docs/domain.md#failure-groups)
-- is kept with the group, computed once when the group is written, instead of on every refresh of
-- the failure-groups panel: normalize_error_message() over the 500 groups listed was about a
-- third of the panel's statement at 1,000,000 dead letters (docs/benchmarks.md). A group's row is
-- written once when it is first seen; a stored generated column follows any later change of its
-- sample message by itself. The view the panel reads when the rollup answers names the stored
-- value; its columns are as before (CREATE OR REPLACE VIEW keeps the grants).

ALTER TABLE redrive.failure_group
    ADD COLUMN normalized_message text
    GENERATED ALWAYS AS (redrive.normalize_error_message(split_part(sample_message, E'\n', 1)))
    STORED;

CREATE OR REPLACE VIEW redrive.failure_group_rollup_list AS
SELECT g.fingerprint, g.kind, g.error_class, g.error_code, g.sample_message,
       g.normalized_message,
       r.open_count, r.requeued_count, r.resolved_count, r.compensation_pending_count,
       r.compensating_count, r.compensated_count,
       r.open_count + r.requeued_count + r.resolved_count + r.compensation_pending_count
           + r.compensating_count + r.compensated_count AS dead_letters,
       r.first_dead_at, r.last_dead_at, r.resolved_at, r.regressed_at
  FROM redrive.failure_group_rollup r JOIN redrive.failure_group g USING (fingerprint);
