//! Saved plans (`plan -out FILE`, `apply FILE`): bound to the state lineage and serial, a
//! hash of the configuration files and the environment, so a plan made for another state
//! or before the world moved on is refused. Variable values are kept only as fingerprints.

use brickform_core::lang::load::Config;
use brickform_core::plan::Plan;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

pub const FORMAT: &str = "brickform-plan";

/// The layout of plan files this brickform writes and reads; bumped on any change an older
/// brickform would misread.
pub const FORMAT_VERSION: u32 = 1;

/// What any version of the plan file holds, read before the rest: a file from another
/// version may not have the fields of this one, and is refused by its version rather than
/// by a field serde cannot find.
#[derive(Deserialize)]
struct Header {
    format: Option<String>,
    format_version: Option<u32>,
    brickform_version: Option<String>,
}

/// Reads a saved plan, refusing a file that is not one or is of another format version.
pub fn read(path: &std::path::Path) -> anyhow::Result<SavedPlan> {
    use anyhow::{Context, anyhow, bail};
    let bytes = brickform_core::limits::read_file(path)
        .with_context(|| format!("reading the plan file {}", path.display()))?;
    let header: Header = serde_json::from_slice(&bytes)
        .map_err(|e| anyhow!("{} is not a brickform plan file: {e}", path.display()))?;
    if header.format.as_deref() != Some(FORMAT) {
        bail!("{} is not a brickform plan file", path.display());
    }
    match header.format_version {
        Some(FORMAT_VERSION) => {}
        Some(v) => bail!(
            "Saved plan cannot be read by this brickform: {} is in plan file format version {v}{}; this brickform ({}) reads format version {FORMAT_VERSION}. Create a new plan with this brickform.",
            path.display(),
            header
                .brickform_version
                .map(|b| format!(" (written by brickform {b})"))
                .unwrap_or_default(),
            env!("CARGO_PKG_VERSION"),
        ),
        None => bail!(
            "Saved plan cannot be read by this brickform: {} has no plan file format version; this brickform reads format version {FORMAT_VERSION}. Create a new plan with this brickform.",
            path.display()
        ),
    }
    serde_json::from_slice(&bytes)
        .map_err(|e| anyhow!("{} is not a brickform plan file: {e}", path.display()))
}

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
