-- SPDX-License-Identifier: GPL-3.0-or-later
-- Redrive native schema, version 10: a compensation action writes its payment's lock row
-- (docs/domain.md#four-eyes-per-payment).
--
-- Locking the row FOR UPDATE made requests on one payment take turns under READ COMMITTED, but a
-- caller in a REPEATABLE READ or SERIALIZABLE transaction whose snapshot predates another
-- request on the payment could still request against that stale view: the row had only been
-- locked, never changed, so nothing told it its snapshot was old. It could then stay under the
-- approval threshold with the sum already paid out, or refund past the charge. Updating the row
-- turns that into a write conflict: such a caller fails with 40001 (could not serialize access)
-- and must ask again with a fresh view. Under READ COMMITTED nothing changes but one row version.
CREATE OR REPLACE FUNCTION redrive.lock_payment(p_payment_ref text) RETURNS void
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    INSERT INTO redrive.payment_lock (payment_ref) VALUES (p_payment_ref)
    ON CONFLICT (payment_ref) DO NOTHING;
    -- A statement of its own: after a wait it writes the row the other session committed, and a
    -- snapshot older than that commit gets a serialization failure instead of stale sums.
    UPDATE redrive.payment_lock SET first_locked_at = first_locked_at
     WHERE payment_ref = p_payment_ref;
END
$$;
