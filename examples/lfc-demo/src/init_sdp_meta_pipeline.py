# Databricks notebook source
# The bronze and silver pipelines' entry point. It installs the sdp-meta build named by the
# pipeline configuration (sdp_meta_whl, set by brickform from sdp_meta_onboarding.dependency)
# and runs the layer named by `layer`.
#
# The dtix flow comes from a Lakeflow Connect SCD type 2 table. Its __START_AT / __END_AT
# columns are reserved in Lakeflow pipelines, so bronze reads dtix as snapshots through the
# function below, which renames them to lfc_start_at / lfc_end_at (the flow's keys use
# lfc_end_at) and hands over a new snapshot only when the source table has a new version.

# COMMAND ----------

sdp_meta_whl = spark.conf.get("sdp_meta_whl")
# MAGIC %pip install $sdp_meta_whl

# COMMAND ----------

from databricks.labs.sdp_meta.dataflow_pipeline import DataflowPipeline

layer = spark.conf.get("layer")
snapshot_method = spark.conf.get("dtix_snapshot_method", "cdf")


def _source_table(spec):
    details = spec.sourceDetails
    database = details.get("source_database")
    table = details.get("source_table")
    catalog = details.get("catalog")
    if catalog and database.count(".") == 0:
        database = f"{catalog}.{database}"
    return f"{database}.{table}"


def _renamed(df):
    return (
        df.withColumnRenamed("__START_AT", "lfc_start_at")
        .withColumnRenamed("__END_AT", "lfc_end_at")
        .dropDuplicates()
    )


def dtix_next_snapshot_and_version(latest_version, spec):
    table = _source_table(spec)
    version = spark.sql(f"DESCRIBE HISTORY {table} LIMIT 1").collect()[0]["version"]
    if latest_version is not None and version <= latest_version:
        return None
    return _renamed(spark.read.table(table)), version


def dtix_transform(df, spec):
    if spec.targetDetails.get("table") == "dtix":
        return _renamed(df)
    return df


if snapshot_method == "cdf":
    DataflowPipeline.invoke_dlt_pipeline(
        spark, layer, bronze_next_snapshot_and_version=dtix_next_snapshot_and_version
    )
else:
    DataflowPipeline.invoke_dlt_pipeline(spark, layer, bronze_custom_transform_func=dtix_transform)
