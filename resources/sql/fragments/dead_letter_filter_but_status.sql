($2::text[] IS NULL OR d.queue = ANY ($2::text[]))
   AND ($3::text[] IS NULL OR d.kind = ANY ($3::text[]))
   AND ($4::text[] IS NULL OR d.error_class = ANY ($4::text[]))
   AND ($5::timestamptz IS NULL OR d.dead_at >= $5::timestamptz)
   AND ($6::timestamptz IS NULL OR d.dead_at < $6::timestamptz)
   AND ($7::text IS NULL OR d.last_error ILIKE $7::text ESCAPE '\'
                         OR d.idempotency_key ILIKE $7::text ESCAPE '\')
   AND ($8::text IS NULL OR d.fingerprint = $8::text)
