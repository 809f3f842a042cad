-- Bronze: shipment events exactly as carriers deliver them.
--
-- Auto Loader (STREAM read_files) picks up each new JSON file that lands in the volume
-- once; the file it came from and the ingestion time are kept for lineage. Nothing is
-- cleaned here: bad rows are kept so silver can judge them.
--
-- ${landing_path} comes from the pipeline's configuration (see main.bf.hcl).

CREATE OR REFRESH STREAMING TABLE shipment_events_raw
COMMENT 'Raw shipment events, one row per event as it landed in the volume'
TBLPROPERTIES ('quality' = 'bronze')
AS SELECT
  *,
  _metadata.file_path AS source_file,
  current_timestamp() AS ingested_at
FROM STREAM read_files(
  '${landing_path}',
  format => 'json',
  schemaHints => 'event_id STRING, shipment_id STRING, carrier STRING, status STRING, event_time TIMESTAMP, location STRING, weight_kg DOUBLE, exception_reason STRING',
  rescuedDataColumn => '_rescued_data'
);
