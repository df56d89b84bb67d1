-- SPDX-License-Identifier: GPL-3.0-or-later
-- Give back this session's run lock on bulk $1. Returns whether it held it.
SELECT end_bulk_run($1::uuid) AS released
