//! Saved plans (`plan -out FILE`, `apply FILE`): bound to the state lineage and serial, a
//! hash of the configuration files and the environment, so a plan made for another state
//! or before the world moved on is refused. Variable values are kept only as fingerprints.

use brickform_core::plan::Plan;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::path::Path;

pub const FORMAT: &str = "brickform-plan";

#[derive(Serialize, Deserialize)]
pub struct SavedPlan {
    pub format: String,
    pub format_version: u32,
    pub brickform_version: String,
    pub environment: String,
    pub lineage: String,
    pub serial: u64,
    pub config_hash: String,
    /// Fingerprint of the resolved variable values (salted by the state).
    pub variables: String,
    pub targets: Vec<String>,
    pub replace: Vec<String>,
    pub destroy: bool,
    pub refresh_only: bool,
    /// `--allow-destroy`: the reviewed plan deletes protected objects on purpose.
    #[serde(default)]
    pub allow_destroy: bool,
    pub plan: Plan,
}

/// A hash of every configuration file (name and content) of the directory.
pub fn config_hash(dir: &Path) -> anyhow::Result<String> {
    let mut h = Sha256::new();
    for f in brickform_core::lang::load::config_files(dir)? {
        let name = f
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        h.update(name.as_bytes());
        h.update([0]);
        h.update(std::fs::read(&f)?);
        h.update([0]);
    }
    Ok(format!("sha256:{:x}", h.finalize()))
}
