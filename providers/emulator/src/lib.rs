//! The local workspace.
