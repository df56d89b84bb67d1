-- The frozen pass of the dead-letter list (docs/architecture.md#paging-a-frozen-pass): the ids
-- of every dead letter matching filters $1..$8 (see fragments/dead_letter_filter.sql), in the
-- list's order, read once in one snapshot when the operator starts paging; the pages are then
-- dead_letter_rows.sql over slices of this list. {{sort_column}} is the whole ORDER BY list,
-- one of a fixed set compiled into the console (models/db/sql_statement.cpp), never operator
-- input. Reads only the id and the sort columns.
SELECT d.id
  FROM dead_letter_list d
 WHERE {{dead_letter_filter}}
 ORDER BY {{sort_column}}
