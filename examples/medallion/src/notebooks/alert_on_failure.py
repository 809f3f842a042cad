# Databricks notebook source
# Runs only when the silver pipeline task failed (run_if = AT_LEAST_ONE_FAILED): tells
# on-call which run broke and where to look. Replace the print with your pager/Slack call.

dbutils.widgets.text("job_name", "")
dbutils.widgets.text("run_id", "")
dbutils.widgets.text("channel", "")

job_name = dbutils.widgets.get("job_name")
run_id = dbutils.widgets.get("run_id")
channel = dbutils.widgets.get("channel")

# COMMAND ----------

message = (
    f"[{job_name}] silver failed in run {run_id}: gold was not refreshed. "
    "Check the silver pipeline's event log for the failed expectation (has_shipment_id) "
    "or the missing source."
)
print(f"ALERT to {channel}: {message}")
