-- Compensation requests, pending approval first, then newest; $1 statuses (NULL = all), $2 rows.
SELECT c.id, c.target_type, c.target_id, c.kind, c.payment_ref, c.amount_minor, c.currency,
       c.status, c.requires_approval, c.requested_by, c.requested_at, c.reason, c.ticket,
       c.version, c.decided_by, c.decision, c.decided_at, c.decision_reason, c.provider_ref,
       c.error_message
  FROM compensation_list c
 WHERE ($1::text[] IS NULL OR c.status = ANY ($1::text[]))
 ORDER BY (c.status = 'pending_approval') DESC, c.requested_at DESC, c.id DESC
 LIMIT $2
