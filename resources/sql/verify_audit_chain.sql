-- Recompute the audit hash chain; no row means it holds. $1 exported head id, $2 its hash (hex),
-- both NULL to check the chain alone.
SELECT v.broken_id, v.problem, v.checked
  FROM redrive.verify_audit_chain(NULL, $1::bigint, decode($2::text, 'hex')) v
