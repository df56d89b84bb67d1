-- Every audit entry's raw columns, oldest first, for the client-side chain verifier (run inside
-- COPY ... TO STDOUT (FORMAT binary); docs/audit-chain.md). Plain column reads only: no function
-- over a column, so nothing the verifier relies on can be replaced on the server.
SELECT e.id, e.at, e.db_user, e.client_addr, e.os_user, e.action, e.targets, e.reason, e.ticket,
       e.before, e.after, e.action_id, e.outcome, e.prev_hash, e.hash
  FROM redrive.audit_log e
 ORDER BY e.id
