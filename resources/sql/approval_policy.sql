-- The compensation approval policy the console shows: requests at or above approval_cents (minor
-- units) wait for a second person. Changed only through redrive.change_setting, which audits it.
SELECT s.compensation_approval_cents AS approval_cents FROM settings s LIMIT 1
