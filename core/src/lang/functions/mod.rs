//! The standard library of functions.
