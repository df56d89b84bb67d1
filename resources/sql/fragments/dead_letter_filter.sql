($1::text[] IS NULL OR d.status = ANY ($1::text[]))
   AND {{dead_letter_filter_but_status}}
