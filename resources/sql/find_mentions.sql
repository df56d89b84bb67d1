-- SPDX-License-Identifier: GPL-3.0-or-later
-- Every dead letter, mismatch, compensation and audit entry that mentions $1 literally, $2 rows
-- per kind, grouped by kind, newest first (docs/domain.md#finding-a-customer). A kind the login
-- may not read is left out by the function. A summary (a last error's first line) is sent cut to
-- its first 2,000 characters, with the bytes left out (docs/architecture.md#long-values-in-
-- lists): ten hits with a 10 MB first line were 192 MB in the console.
SELECT f.kind, f.id, f.at, f.status, substr(f.summary, 1, 2000) AS summary,
       redrive.cut_bytes(f.summary, 2000) AS summary_cut_bytes,
       f.payment_ref, f.order_ref, f.amount_minor,
       f.currency, f.run_id, f.kind_total
  FROM find_mentions($1::text, $2::integer) f
