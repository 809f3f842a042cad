# Databricks notebook source
# Runs after gold whatever happened upstream (run_if = ALL_DONE): posts the nightly summary.

dbutils.widgets.text("job_name", "")
dbutils.widgets.text("run_id", "")
dbutils.widgets.text("channel", "")
dbutils.widgets.text("gold_table", "")

job_name = dbutils.widgets.get("job_name")
run_id = dbutils.widgets.get("run_id")
channel = dbutils.widgets.get("channel")
gold_table = dbutils.widgets.get("gold_table")

# COMMAND ----------

try:
    rows = spark.table(gold_table).count()
    summary = f"{gold_table} holds {rows} carrier-days"
except Exception as e:  # gold may not exist yet when the first run failed early
    summary = f"{gold_table} could not be read: {e}"

print(f"To {channel}: [{job_name}] nightly run {run_id} done; {summary}.")
