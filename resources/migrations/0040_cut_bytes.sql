-- SPDX-License-Identifier: GPL-3.0-or-later
-- Redrive native schema, version 40: one function for the bytes a list page leaves out of a long
-- value (docs/architecture.md#long-values-in-lists). Pages send the first N characters of a
-- message, a stack trace, a last error or a summary and, next to it, `<name>_cut_bytes`: how
-- many bytes of the value they did not send. The statements wrote the same expression each.

-- The bytes of p_value after its first p_chars characters: 0 when the value is whole, NULL for
-- NULL. octet_length() and substr() read only the value's size and its first slice, never the
-- whole of a large stored value. A standard SQL body (parsed once, at creation: no search_path
-- at call time) that the planner inlines into the calling statement.
CREATE FUNCTION redrive.cut_bytes(p_value text, p_chars integer) RETURNS integer
LANGUAGE sql
IMMUTABLE PARALLEL SAFE
RETURN octet_length(p_value) - octet_length(substr(p_value, 1, p_chars));
COMMENT ON FUNCTION redrive.cut_bytes(text, integer) IS
    'Bytes of a text value after its first p_chars characters, what a list page leaves out (docs/architecture.md#long-values-in-lists)';

-- EXECUTE stays with PUBLIC, as for PostgreSQL's own octet_length(): it reads nothing but its
-- arguments, and every role that reads a list page (the worker's search too) calls it.
