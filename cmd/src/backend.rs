//! Where states are kept: `brickform { backend "local" | "volume" { … } }` (the backend types
//! as schemas, checked by core's decoder), the connection to a volume, taking the lock and
//! the lock error message.
//!
//! ```hcl
//! brickform {
//!   backend "volume" {
//!     path                = "/Volumes/ops/brickform/state/lakehouse" # a directory in a UC volume
//!     lock_expiry_seconds = 900 # optional: a silent lock holder is abandoned after this (0: never)
//!   }
//! }
//! ```
//!
//! Backend settings are literals, as in Terraform: they are needed before variables are.
//! The volume is reached with the Databricks provider's connection (provider block, then
//! `DATABRICKS_*` variables, a profile, the keyring; the local workspace with `--local` or
//! `host = "local"`), and it must exist: the state cannot live in a volume the same state
//! manages.

use crate::failure::Failure;
use anyhow::{anyhow, bail};
use brickform_core::diagnostics::{Diagnostic, Diagnostics};
use brickform_core::lang::backend::{self, BackendType};
use brickform_core::lang::load::Config;
use brickform_core::provider::{AttrType, Attribute, Schema};
use brickform_core::value::Value;
use brickform_state::{Backend, LocalBackend, LockInfo, StateError, StateLock, VolumeBackend};
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

/// The backend a configuration (or `state migrate --to`) names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BackendSpec {
    /// `.brickform/state/` next to the configuration.
    Local,
    /// A directory in a Unity Catalog volume.
    Volume {
        path: String,
        /// `None`: locks never expire.
        lock_expiry: Option<Duration>,
    },
}

/// The backend types brickform ships, as the `backend` block's schemas.
fn types() -> Vec<BackendType> {
    vec![
        BackendType {
            name: "local",
            description: "the default: .brickform/state next to the configuration",
            schema: Schema::new(),
        },
        BackendType {
            name: "volume",
            description: "a directory in a Unity Catalog volume, shared by a team",
            schema: Schema::new()
                .attr(
                    Attribute::required("path", AttrType::String)
                        .describe("A directory in an existing Unity Catalog volume: /Volumes/CATALOG/SCHEMA/VOLUME/DIR."),
                )
                .attr(
                    Attribute::optional("lock_expiry_seconds", AttrType::Number)
                        .describe("A lock whose holder has been silent this long is abandoned and may be taken over; 0: locks never expire. Default 900."),
                ),
        },
    ]
}

impl BackendSpec {
    /// The backend of `config`: its `backend` block, or local without one.
    pub fn of(config: &Config) -> Result<BackendSpec, Diagnostics> {
        let Some(b) = backend::decode(config, &types())? else {
            return Ok(BackendSpec::Local);
        };
        if b.kind == "local" {
            return Ok(BackendSpec::Local);
        }
        let Value::String(raw) = b.get("path") else {
            // The schema requires it; decoding has said so.
            return Err(Diagnostics::new());
        };
        let path = volume_path(raw).map_err(|why| {
            Diagnostics::from(
                Diagnostic::error("Invalid volume path")
                    .at(b.span_of("path"))
                    .detail(why.to_string()),
            )
        })?;
        let lock_expiry = match b.get("lock_expiry_seconds") {
            Value::Null => Some(brickform_state::backend::DEFAULT_LOCK_EXPIRY),
            v => match v.as_f64() {
                Some(0.0) => None,
                Some(secs) if secs > 0.0 && secs.fract() == 0.0 && secs <= u32::MAX as f64 => {
                    Some(Duration::from_secs(secs as u64))
                }
                _ => {
                    return Err(Diagnostic::error("Invalid lock_expiry_seconds")
                        .at(b.span_of("lock_expiry_seconds"))
                        .detail("A whole number of seconds, 0 for locks that never expire.")
                        .into());
                }
            },
        };
        Ok(BackendSpec::Volume { path, lock_expiry })
    }

    /// `state migrate --to`: `local`, or `volume:/Volumes/CATALOG/SCHEMA/VOLUME[/DIR]`.
    pub fn parse_target(s: &str) -> anyhow::Result<BackendSpec> {
        if s == "local" {
            return Ok(BackendSpec::Local);
        }
        if let Some(path) = s.strip_prefix("volume:") {
            let path = volume_path(path).map_err(|why| anyhow!("invalid --to {s:?}: {why}"))?;
            return Ok(BackendSpec::Volume {
                path,
                lock_expiry: Some(brickform_state::backend::DEFAULT_LOCK_EXPIRY),
            });
        }
        bail!("invalid --to {s:?}: use `local` or `volume:/Volumes/CATALOG/SCHEMA/VOLUME/DIR`")
    }

    /// Whether both name the same place (volume paths compare without case, as the
    /// service's names do).
    pub fn same_place(&self, other: &BackendSpec) -> bool {
        match (self, other) {
            (BackendSpec::Local, BackendSpec::Local) => true,
            (BackendSpec::Volume { path: p, .. }, BackendSpec::Volume { path: q, .. }) => {
                p.to_lowercase() == q.to_lowercase()
            }
            _ => false,
        }
    }

    pub fn describe(&self) -> String {
        match self {
            BackendSpec::Local => "the local backend (.brickform/state)".into(),
            BackendSpec::Volume { path, .. } => format!("the volume backend at {path}"),
        }
    }

    /// The `brickform` block that selects this backend.
    pub fn block(&self) -> String {
        match self {
            BackendSpec::Local => {
                "brickform {\n  backend \"local\" {}\n}\n\n(or no backend block at all)".into()
            }
            BackendSpec::Volume { path, .. } => {
                format!("brickform {{\n  backend \"volume\" {{\n    path = \"{path}\"\n  }}\n}}")
            }
        }
    }
}

/// A backend path that is not a directory in a volume.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "\"{0}\" is not a directory in a volume: write /Volumes/CATALOG/SCHEMA/VOLUME/DIR (the volume must exist)."
)]
struct NotAVolumePath(String);

/// Checks a volume path and drops a trailing `/`: `/Volumes/` then catalog, schema and volume
/// names, then any directories.
fn volume_path(raw: &str) -> Result<String, NotAVolumePath> {
    match brickform_databricks::volume_path::VolumePath::parse(raw) {
        // The volume itself, or a directory in it.
        Some(p) => Ok(p.path()),
        None => Err(NotAVolumePath(raw.to_string())),
    }
}

/// The backend `spec` names. A volume is reached through `client`, the workspace's
/// connection (which the caller makes when the spec names a volume).
pub fn connect(
    spec: &BackendSpec,
    dir: &Path,
    client: Option<brickform_databricks::client::Client>,
) -> Arc<dyn Backend> {
    match (spec, client) {
        (BackendSpec::Volume { path, lock_expiry }, Some(client)) => {
            let store = crate::volume_store::FilesApiStore::new(client, path);
            Arc::new(VolumeBackend::new(Arc::new(store), *lock_expiry))
        }
        _ => Arc::new(LocalBackend::new(dir)),
    }
}

/// Takes the lock of `env` for `operation`. When it is held and `timeout` allows, says who
/// holds it and waits; on failure prints who holds it (and returns exit code 1).
pub async fn lock_state(
    backend: &Arc<dyn Backend>,
    env: &str,
    operation: &str,
    timeout: Duration,
) -> Result<Box<dyn StateLock>, Failure> {
    let info = LockInfo::new(operation);
    let mut result = backend.lock(env, info.clone(), Duration::ZERO).await;
    if let Err(StateError::Locked { holder, .. }) = &result
        && !timeout.is_zero()
    {
        let who = holder
            .as_ref()
            .map_or_else(|| "someone".to_string(), |h| h.summary());
        eprintln!(
            "The state of environment \"{env}\" is locked by {who}; waiting up to {} for it...",
            crate::duration::format(timeout)
        );
        result = backend.lock(env, info, timeout).await;
    }
    match result {
        Ok(lock) => {
            report_takeover(env, lock.as_ref());
            Ok(lock)
        }
        Err(e) => {
            report_lock_error(env, &e, timeout);
            Err(Failure::reported())
        }
    }
}

/// Prints why the lock of `env` could not be taken: who holds it, for what, since when.
pub fn report_lock_error(env: &str, e: &StateError, waited: Duration) {
    let StateError::Locked { holder, .. } = e else {
        eprintln!("Error: cannot lock the state of environment \"{env}\": {e}");
        return;
    };
    let gave_up = if waited.is_zero() {
        String::new()
    } else {
        format!(
            "; gave up after waiting {}",
            crate::duration::format(waited)
        )
    };
    match holder {
        Some(h) => eprintln!(
            "Error: the state of environment \"{env}\" is locked by {}{gave_up}",
            h.summary()
        ),
        None => eprintln!(
            "Error: the state of environment \"{env}\" is locked by someone whose lock info cannot be read{gave_up}"
        ),
    }
    // "Error acquiring the state lock PATH" and the holder's Lock Info block.
    eprintln!("\n{}", capitalise(&e.to_string()));
    eprintln!(
        "\nbrickform acquires a state lock to protect the state from being written by multiple users at the same time. Wait for the other operation to finish (--lock-timeout 10m waits for it), or use `brickform force-unlock ID` if it was abandoned."
    );
}

pub fn capitalise(s: &str) -> String {
    let mut c = s.chars();
    c.next()
        .map(|f| f.to_uppercase().chain(c).collect())
        .unwrap_or_default()
}

/// Tells the user when taking the lock meant taking over an abandoned one.
fn report_takeover(env: &str, lock: &dyn StateLock) {
    if let Some(old) = lock.took_over() {
        eprintln!(
            "Warning: took over the expired state lock of environment \"{env}\" held by {}",
            old.summary()
        );
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    fn spec(text: &str) -> Result<BackendSpec, String> {
        let dir = std::path::Path::new("/nonexistent");
        let (config, diags) = brickform_core::lang::load::load_sources(
            dir,
            vec![("main.bf.hcl".into(), dir.join("main.bf.hcl"), text.into())],
        );
        assert!(!diags.has_errors(), "{diags:?}");
        BackendSpec::of(&config).map_err(|d| {
            d.0.iter()
                .map(|d| d.render_plain(&config.sources))
                .collect::<Vec<_>>()
                .join("\n")
        })
    }

    #[test]
    fn backend_blocks() {
        assert_eq!(spec("").unwrap(), BackendSpec::Local);
        assert_eq!(
            spec("brickform {\n  backend \"local\" {}\n}\n").unwrap(),
            BackendSpec::Local
        );
        assert_eq!(
            spec("brickform {\n  backend \"volume\" {\n    path = \"/Volumes/ops/bf/state/lake/\"\n  }\n}\n").unwrap(),
            BackendSpec::Volume {
                path: "/Volumes/ops/bf/state/lake".into(),
                lock_expiry: Some(Duration::from_secs(900)),
            }
        );
        assert_eq!(
            spec("brickform {\n  backend \"volume\" {\n    path = \"/Volumes/ops/bf/state\"\n    lock_expiry_seconds = 0\n  }\n}\n").unwrap(),
            BackendSpec::Volume {
                path: "/Volumes/ops/bf/state".into(),
                lock_expiry: None,
            }
        );
        let err = spec("brickform {\n  backend \"volum\" {}\n}\n").unwrap_err();
        assert!(err.contains("Unknown backend type \"volum\""), "{err}");
        assert!(err.contains("did you mean"), "{err}");
        let err =
            spec("brickform {\n  backend \"volume\" {\n    path = \"/Volumes/ops/bf\"\n  }\n}\n")
                .unwrap_err();
        assert!(
            err.contains("Invalid volume path") && err.contains("main.bf.hcl:3"),
            "{err}"
        );
        let err =
            spec("brickform {\n  backend \"volume\" {\n    pth = \"/Volumes/a/b/c\"\n  }\n}\n")
                .unwrap_err();
        assert!(
            err.contains("Unsupported argument") && err.contains("Missing required argument"),
            "{err}"
        );
        let err = spec("variable \"p\" {\n  default = \"x\"\n}\nbrickform {\n  backend \"volume\" {\n    path = var.p\n  }\n}\n").unwrap_err();
        assert!(err.contains("must be literal"), "{err}");
    }

    #[test]
    fn migrate_targets() {
        assert_eq!(
            BackendSpec::parse_target("local").unwrap(),
            BackendSpec::Local
        );
        assert!(matches!(
            BackendSpec::parse_target("volume:/Volumes/a/b/c/d").unwrap(),
            BackendSpec::Volume { path, .. } if path == "/Volumes/a/b/c/d"
        ));
        assert!(BackendSpec::parse_target("volume:/tmp/x").is_err());
        assert!(BackendSpec::parse_target("s3://bucket").is_err());
    }
}
