-- The newest audit entry's id and hash (hex): the chain head to export and keep elsewhere.
SELECT e.id, encode(e.hash, 'hex') AS hash, e.at, (SELECT count(*) FROM redrive.audit_log) AS entries
  FROM redrive.audit_log e ORDER BY e.id DESC LIMIT 1
