# Databricks notebook source
# Entry point of every pipeline of this example: installs sdp-meta and runs the layer and
# group named by the pipeline configuration (set by brickform from sdp_meta_onboarding).

# COMMAND ----------

sdp_meta_dependency = spark.conf.get("sdp_meta_dependency")
# MAGIC %pip install $sdp_meta_dependency

# COMMAND ----------

from databricks.labs.sdp_meta.dataflow_pipeline import DataflowPipeline

DataflowPipeline.invoke_dlt_pipeline(spark, spark.conf.get("layer"))
