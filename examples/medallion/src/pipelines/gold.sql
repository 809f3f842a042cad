-- Gold: daily delivery performance per carrier, recomputed from silver on every update.
--
-- ${silver_table} comes from the pipeline's configuration (see main.bf.hcl).

CREATE OR REFRESH MATERIALIZED VIEW carrier_daily_performance
COMMENT 'Per carrier and day: shipments seen, delivered, with exceptions, and the delivery rate'
TBLPROPERTIES ('quality' = 'gold')
AS SELECT
  carrier,
  CAST(event_time AS DATE) AS event_date,
  count(DISTINCT shipment_id) AS shipments,
  count(DISTINCT CASE WHEN status = 'DELIVERED' THEN shipment_id END) AS delivered,
  count(DISTINCT CASE WHEN status = 'EXCEPTION' THEN shipment_id END) AS exceptions,
  try_divide(
    count(DISTINCT CASE WHEN status = 'DELIVERED' THEN shipment_id END),
    count(DISTINCT shipment_id)
  ) AS delivery_rate
FROM ${silver_table}
GROUP BY carrier, CAST(event_time AS DATE);
