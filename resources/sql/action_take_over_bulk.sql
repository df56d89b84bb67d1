-- SPDX-License-Identifier: GPL-3.0-or-later
-- Take over bulk action $2 from its owner $3 (as seen): $1 action id, $4 reason, $5 ticket,
-- $6 OS user. Returns the outcome as JSON.
SELECT take_over_bulk($1::uuid, $2::uuid, $3::text, $4::text, $5::text, $6::text)::text AS outcome
