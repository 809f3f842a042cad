//! Saved plans (`plan -out FILE`, `apply FILE`): bound to the state lineage and serial, a
//! hash of the configuration files and the environment, so a plan made for another state
//! or before the world moved on is refused. Variable values are kept only as fingerprints.

use crate::args::PlanArgs;
use crate::context::Session;
use brickform_core::engine::inputs::Variables;
use brickform_core::lang::load::Config;
use brickform_core::plan::Plan;
use brickform_core::value::Value;
use brickform_state::StateDocument;
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

/// The configuration directory given with `-C`, once the command has changed to it: relative
/// plan file paths are relative to it (as Terraform's `-chdir`), and errors say so.
static CHANGED_TO: std::sync::OnceLock<std::path::PathBuf> = std::sync::OnceLock::new();

/// Records the directory of `-C DIR` after the command changed to it.
pub fn changed_to(dir: &std::path::Path) {
    let _ = CHANGED_TO.set(dir.to_path_buf());
}

/// A plan file path as messages name it: resolved, absolute, so a CI job that looks for the
/// file in the wrong place (a path relative to `-C DIR` taken for one relative to where the
/// job runs) sees where brickform looked. A relative path given with `-C` is named as given
/// too, with the directory it is relative to.
pub fn shown(path: &std::path::Path) -> String {
    let resolved = match std::env::current_dir() {
        Ok(cwd) if path.is_relative() => path
            .components()
            .filter(|c| !matches!(c, std::path::Component::CurDir))
            .fold(cwd, |mut at, c| {
                at.push(c);
                at
            }),
        _ => path.to_path_buf(),
    };
    match CHANGED_TO.get() {
        Some(dir) if path.is_relative() => format!(
            "{} ({}, relative to the configuration directory {} given with -C)",
            resolved.display(),
            path.display(),
            dir.display()
        ),
        _ => resolved.display().to_string(),
    }
}

/// Reads a saved plan, refusing a file that is not one or is of another format version.
/// Every error names the file by its resolved path ([`shown`]).
pub fn read(path: &std::path::Path) -> anyhow::Result<SavedPlan> {
    use anyhow::{anyhow, bail};
    use brickform_core::limits::ReadError;
    let shown = shown(path);
    let bytes = match brickform_core::limits::read_file(path) {
        Ok(bytes) => bytes,
        Err(ReadError::NotFound(_)) => bail!("no plan file exists at {shown}"),
        Err(e) => bail!("cannot read the plan file {shown}: {e}"),
    };
    let header: Header = serde_json::from_slice(&bytes)
        .map_err(|e| anyhow!("{shown} is not a brickform plan file: {e}"))?;
    if header.format.as_deref() != Some(FORMAT) {
        bail!("{shown} is not a brickform plan file");
    }
    match header.format_version {
        Some(FORMAT_VERSION) => {}
        Some(v) => bail!(
            "Saved plan cannot be read by this brickform: {shown} is in plan file format version {v}{}; this brickform ({}) reads format version {FORMAT_VERSION}. Create a new plan with this brickform.",
            header
                .brickform_version
                .map(|b| format!(" (written by brickform {b})"))
                .unwrap_or_default(),
            env!("CARGO_PKG_VERSION"),
        ),
        None => bail!(
            "Saved plan cannot be read by this brickform: {shown} has no plan file format version; this brickform reads format version {FORMAT_VERSION}. Create a new plan with this brickform."
        ),
    }
    serde_json::from_slice(&bytes).map_err(|e| anyhow!("{shown} is not a brickform plan file: {e}"))
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

impl SavedPlan {
    /// The plan `s` made for `args`, bound to its state and inputs.
    pub fn new(s: &Session, args: &PlanArgs, plan: Plan) -> SavedPlan {
        SavedPlan {
            format: FORMAT.into(),
            format_version: FORMAT_VERSION,
            brickform_version: env!("CARGO_PKG_VERSION").into(),
            environment: s.env.name.clone(),
            lineage: s.doc.lineage().to_string(),
            serial: s.doc.serial(),
            config_hash: config_hash(&s.env.config),
            variables: variables_fingerprint(&s.doc, &s.env.vars),
            targets: args.targets.clone(),
            replace: args.replace.clone(),
            destroy: args.destroy,
            refresh_only: args.refresh_only,
            allow_destroy: args.allow_destroy,
            plan,
        }
    }

    /// The arguments the plan was made with, for applying it.
    pub fn args(&self, given: &PlanArgs) -> PlanArgs {
        PlanArgs {
            targets: self.targets.clone(),
            replace: self.replace.clone(),
            destroy: self.destroy,
            refresh_only: self.refresh_only,
            allow_destroy: self.allow_destroy,
            ..given.clone()
        }
    }

    /// Why the plan cannot be applied to the state `s` opened: another state, a state
    /// written since, other configuration files or other variable values.
    pub fn stale(&self, s: &Session) -> Option<&'static str> {
        if self.lineage != s.doc.lineage().to_string() {
            Some(
                "Saved plan does not match the given state: the plan was created for a different state (its lineage differs). It cannot be applied here.",
            )
        } else if self.serial != s.doc.serial() {
            Some(
                "Saved plan is stale: the given plan file can no longer be applied because the state was changed by another operation after the plan was created. Create a new plan.",
            )
        } else if self.config_hash != config_hash(&s.env.config) {
            Some(
                "Saved plan is stale: the configuration files changed after the plan was created. Create a new plan.",
            )
        } else if self.variables != variables_fingerprint(&s.doc, &s.env.vars) {
            Some(
                "Saved plan is stale: the variable values differ from those the plan was created with. Create a new plan.",
            )
        } else {
            None
        }
    }

    /// Writes the plan readable by its owner only: it holds the configuration's values.
    pub fn write(&self, path: &std::path::Path) -> anyhow::Result<()> {
        use anyhow::Context;
        use std::io::Write;
        use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
        let bytes = serde_json::to_vec_pretty(self)?;
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .mode(0o600)
            .open(path)
            .with_context(|| format!("cannot write the plan file {}", shown(path)))?;
        // The mode above applies to a new file only; one written over keeps its own.
        f.set_permissions(std::fs::Permissions::from_mode(0o600))
            .with_context(|| format!("cannot make the plan file {} private", shown(path)))?;
        f.write_all(&bytes)
            .and_then(|()| f.sync_all())
            .with_context(|| format!("cannot write the plan file {}", shown(path)))?;
        Ok(())
    }
}

/// The variable values as a fingerprint salted by the state: a plan file does not hold
/// them, yet tells when they changed.
fn variables_fingerprint(doc: &StateDocument, vars: &Variables) -> String {
    let j = Value::object(vars.values.clone()).to_json();
    doc.fingerprint(&j)
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
