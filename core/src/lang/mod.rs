//! The configuration language: loading `*.bf.hcl` files, evaluating expressions, the
//! standard library of functions, diagnostics and formatting.

pub mod fmt;
pub mod functions;
