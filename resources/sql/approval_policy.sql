-- The compensation approval policy the console shows: requests at or above approval_minor (minor
-- units) wait for a second person. Changed only through redrive.change_setting, which audits it.
SELECT s.compensation_approval_minor AS approval_minor FROM settings s LIMIT 1
