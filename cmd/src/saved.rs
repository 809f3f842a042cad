//! Saved plans (`plan -out FILE`, `apply FILE`): bound to the state lineage and serial, a
//! hash of the configuration files and the environment, so a plan made for another state
//! or before the world moved on is refused. Variable values are kept only as fingerprints.

use brickform_core::lang::load::Config;
use brickform_core::plan::Plan;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

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

/// A hash of every configuration file (name and content) of the configuration, as it was
/// loaded: the files checked are exactly those the plan was made from.
pub fn config_hash(config: &Config) -> String {
    let mut h = Sha256::new();
    for (_, f) in config.sources.files() {
        h.update(f.name.as_bytes());
        h.update([0]);
        h.update(f.text.as_bytes());
        h.update([0]);
    }
    format!("sha256:{:x}", h.finalize())
}
