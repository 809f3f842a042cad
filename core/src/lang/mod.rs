//! The configuration language: loading `*.bf.hcl` files, evaluating expressions, the
//! standard library of functions and formatting.

pub mod backend;
pub mod blocks;
pub mod decode;
pub mod environment;
pub mod eval;
pub mod fmt;
pub mod functions;
pub mod generate;
pub mod load;
pub mod modules;
pub mod refs;
pub mod repetition;
pub mod terraform;
pub mod types;
pub mod unclosed;
