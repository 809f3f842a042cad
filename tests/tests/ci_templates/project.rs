//! This checkout's files the tests read: the templates, the action, the guide, Cargo.toml.

use serde_json::Value;
use std::path::{Path, PathBuf};

/// The checkout's top directory.
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

pub fn read(rel: &str) -> String {
    std::fs::read_to_string(root().join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

pub fn yaml(rel: &str) -> Value {
    serde_yaml_ng::from_str(&read(rel)).unwrap_or_else(|e| panic!("{rel} is not YAML: {e}"))
}

/// The workspace version (Cargo.toml), which the templates install.
pub fn version() -> String {
    let cargo = read("Cargo.toml");
    let section = &cargo[cargo.find("[workspace.package]").unwrap()..];
    section
        .lines()
        .find_map(|l| l.strip_prefix("version = \""))
        .unwrap()
        .trim_end_matches('"')
        .to_string()
}
