-- Every compensation request of one payment, oldest first: $1 payment reference. What the
-- request and approval dialogs show beside a request (docs/domain.md "Four eyes per payment":
-- the open and executed ones count towards the approval threshold). Amounts in minor units.
SELECT c.id, c.kind, c.amount_minor, c.currency, c.status, c.target_type,
       c.target_id, c.charge_ref, c.requested_by, c.requested_at, c.decided_by,
       c.status IN ('pending_approval', 'approved', 'executing', 'done') AS counts_for_approval
  FROM compensation_list c
 WHERE c.payment_ref = $1::text
 ORDER BY c.requested_at, c.id
