-- The frozen pass of the keys list (docs/architecture.md#paging-a-frozen-pass): scope and key
-- of every idempotency key matching $1 scopes, $2 states (NULL = any) and $3 (the key contains
-- this text, taken literally: no wildcards; NULL = any), most recently changed first, read once
-- when the operator starts paging; the pages are idempotency_key_rows.sql over slices of it.
SELECT k.scope, k.key
  FROM idempotency_key_list k
 WHERE ($1::text[] IS NULL OR k.scope = ANY ($1::text[]))
   AND ($2::text[] IS NULL OR k.state = ANY ($2::text[]))
   AND ($3::text IS NULL OR strpos(k.key, $3::text) > 0)
 ORDER BY k.updated_at DESC, k.scope DESC, k.key DESC
