LEFT JOIN LATERAL (
    -- The payment a dead letter is about (its job's entity, when the payments contract knows a
    -- charge for it) and the amount charged, in minor units of its currency
    -- (docs/domain.md#money). Looked up per row of the page only: nothing to sort on.
    SELECT c.payment_ref, c.charged_minor AS amount_minor, c.currency
      FROM dead_letter_detail x
      JOIN payment_charge_list c ON c.payment_ref = x.entity_id AND c.is_primary
     WHERE x.id = d.id
     LIMIT 1) pay ON true