//! The way over from the Terraform provider: `brickform convert` rewrites a directory of
//! `.tf` files written for `databricks/databricks` as brickform configuration
//! ([`convert`]), and reads a Terraform state of those resources as what brickform's state
//! needs to adopt them ([`tfstate`]).
//!
//! brickform names its kinds, attributes and blocks as the provider does, so most of a
//! configuration carries over as written; what differs is what this module knows:
//! Lakeflow Connect pipelines are kinds of their own (taken from the pipeline kinds'
//! own data: the `elsewhere` entries of `databricks_pipeline` and the definition fields of
//! the flavors), and whatever a kind's schema does not have is left out, commented, and
//! listed with its location.

pub mod convert;
pub mod tfstate;

pub use convert::{Conversion, ConvertError, Finding, convert_dir};
