//! The Databricks provider.
