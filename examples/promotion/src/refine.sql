-- Orders landing as JSON files become a cleaned streaming table.
CREATE OR REFRESH STREAMING TABLE orders AS
SELECT order_id, customer_id, CAST(amount AS DECIMAL(10, 2)) AS amount, ordered_at
FROM STREAM read_files('${landing}/orders/', format => 'json')
WHERE order_id IS NOT NULL;
