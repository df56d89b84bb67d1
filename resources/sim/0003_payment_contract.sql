-- The simulated world answers Redrive's payments contract (redrive.payment_list, migration 5 of
-- the redrive schema): what the provider charged for each of our payments and what it refunded,
-- so that compensation amounts can be checked against it.
CREATE OR REPLACE VIEW redrive.payment_list AS
SELECT p.id AS payment_ref, c.id AS charge_ref, c.amount_cents AS charged_cents,
       c.refunded_cents, c.currency
  FROM sim.ledger_payment p
  JOIN LATERAL (SELECT * FROM sim.provider_charge pc
                 WHERE pc.id = p.provider_charge_id
                    OR (p.provider_charge_id IS NULL AND pc.payment_ref = p.id)
                 ORDER BY pc.created_at, pc.id
                 LIMIT 1) c ON true;
