($1::text IS NULL OR e.db_user = $1::text)
   AND ($2::text IS NULL OR e.action = $2::text)
   AND ($3::timestamptz IS NULL OR e.at >= $3::timestamptz)
   AND ($4::timestamptz IS NULL OR e.at < $4::timestamptz)
   AND (($5::text IS NULL AND $6::bigint IS NULL AND $7::text IS NULL)
        OR e.targets @> jsonb_build_array(jsonb_strip_nulls(jsonb_build_object(
               'type', $5::text, 'id', coalesce(to_jsonb($6::bigint), to_jsonb($7::text))))))
