-- SPDX-License-Identifier: GPL-3.0-or-later
-- Every dead letter, mismatch, compensation and audit entry that mentions $1 literally, $2 rows
-- per kind, grouped by kind, newest first (docs/domain.md#finding-a-customer). A kind the login
-- may not read is left out by the function.
SELECT f.kind, f.id, f.at, f.status, f.summary, f.payment_ref, f.order_ref, f.amount_minor,
       f.currency, f.run_id, f.kind_total
  FROM find_mentions($1::text, $2::integer) f
