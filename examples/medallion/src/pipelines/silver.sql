-- Silver: validated, normalised shipment events.
--
-- Expectations of all three kinds:
--   known_status      warn: the row is kept, the violation is counted in the event log
--   has_event_time    drop: the row is left out of the table
--   has_shipment_id   fail: the whole update stops (a row without a shipment id means the
--                     feed is broken, and nothing downstream should be refreshed)
--
-- ${bronze_table} comes from the pipeline's configuration (see main.bf.hcl).

CREATE OR REFRESH STREAMING TABLE shipment_events (
  CONSTRAINT known_status EXPECT (
    status IN ('CREATED', 'PICKED_UP', 'IN_TRANSIT', 'OUT_FOR_DELIVERY', 'DELIVERED', 'EXCEPTION')
  ),
  CONSTRAINT has_event_time EXPECT (event_time IS NOT NULL) ON VIOLATION DROP ROW,
  CONSTRAINT has_shipment_id EXPECT (shipment_id IS NOT NULL) ON VIOLATION FAIL UPDATE
)
COMMENT 'Shipment events with a shipment id and an event time; statuses upper-cased'
TBLPROPERTIES ('quality' = 'silver')
AS SELECT
  event_id,
  shipment_id,
  upper(trim(carrier)) AS carrier,
  upper(trim(status)) AS status,
  event_time,
  location,
  weight_kg,
  exception_reason,
  source_file,
  ingested_at
FROM STREAM(${bronze_table});
