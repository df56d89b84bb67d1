-- SPDX-License-Identifier: GPL-3.0-or-later
-- The safe-to-retry verdict functions are parallel safe: they only read tables, and the
-- clock_timestamp() and format() they call are parallel safe themselves. PostgreSQL plans a
-- whole statement without parallel workers when any function it names is parallel unsafe (the
-- default for a function that does not say), even in a branch that never runs. The action
-- preview names retry_verdict() in its source adapter branch, so on the native source its
-- one read of a large group's targets and their verdicts' inputs ran in one process: 1.5 s for
-- 113,037 targets against 0.96 s with a parallel worker (docs/benchmarks.md, the preview row).
-- A source adapter's own retry_verdict() keeps its own marking. ALTER FUNCTION keeps the
-- grants and the bodies of migration 0043.

ALTER FUNCTION redrive.retry_verdict(bigint) PARALLEL SAFE;
ALTER FUNCTION redrive.retry_verdicts(bigint[]) PARALLEL SAFE;
