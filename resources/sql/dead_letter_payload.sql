-- The full payload of one dead letter (JSON text, or bytes when it is not JSON).
SELECT d.payload_text, d.payload_bytes FROM dead_letter_detail d WHERE d.id = $1
