-- SPDX-License-Identifier: GPL-3.0-or-later
-- Give up bulk action $2: $1 action id, $3 reason, $4 ticket, $5 OS user. Returns the outcome
-- as JSON.
SELECT abandon_bulk($1::uuid, $2::uuid, $3::text, $4::text, $5::text)::text AS outcome
