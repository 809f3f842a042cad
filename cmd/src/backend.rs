//! Where states are kept: `brickform { backend "local" | "volume" { … } }`, the connection to
//! a volume, the lock error message, and `brickform state migrate`.
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

use crate::ops::{self, Ctx, Providers};
use anyhow::{anyhow, bail};
use brickform_core::engine::Engine;
use brickform_core::engine::inputs::Variables;
use brickform_core::lang::diagnostics::{Diagnostic, Diagnostics, did_you_mean};
use brickform_core::lang::load::Config;
use brickform_core::lang::source::Span;
use brickform_core::value::Object;
use brickform_state::{
    Backend, LocalBackend, LockInfo, StateDocument, StateError, StateLock, VolumeBackend, recover,
};
use hcl_edit::Span as _;
use hcl_edit::expr::Expression;
use hcl_edit::structure::Structure;
use std::process::ExitCode;
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

const VOLUME_ATTRIBUTES: &[&str] = &["path", "lock_expiry_seconds"];

impl BackendSpec {
    /// The backend of `config`: its `backend` block, or local without one.
    pub fn of(config: &Config) -> Result<BackendSpec, Diagnostics> {
        let Some(block) = &config.settings.backend else {
            return Ok(BackendSpec::Local);
        };
        let file = block.body.file;
        let at = |r: Option<std::ops::Range<usize>>| r.map(|r| Span::new(file, r));
        let mut diags = Diagnostics::new();
        let allowed: &[&str] = match block.kind.as_str() {
            "local" => &[],
            "volume" => VOLUME_ATTRIBUTES,
            other => {
                return Err(Diagnostic::error(format!("Unknown backend type \"{other}\""))
                    .at(block.span.clone())
                    .detail("brickform keeps states in \"local\" (the default: .brickform/state) or \"volume\" (a Unity Catalog volume, shared by a team).")
                    .maybe_hint(did_you_mean(other, ["local", "volume"]))
                    .into());
            }
        };
        let mut path = None;
        let mut lock_expiry = Some(brickform_state::backend::DEFAULT_LOCK_EXPIRY);
        for s in block.body.body.iter() {
            let attr = match s {
                Structure::Attribute(a) => a,
                Structure::Block(b) => {
                    diags.push(
                        Diagnostic::error("Unsupported block type")
                            .at(at(b.ident.span()))
                            .detail(format!(
                                "Blocks of type \"{}\" are not expected in a backend block.",
                                b.ident.as_str()
                            )),
                    );
                    continue;
                }
            };
            let key = attr.key.as_str();
            let span = at(attr.value.span());
            match (key, &attr.value) {
                _ if !allowed.contains(&key) => diags.push(
                    Diagnostic::error("Unsupported argument")
                        .at(at(attr.key.span()))
                        .detail(if allowed.is_empty() {
                            format!("The {} backend takes no arguments.", block.kind)
                        } else {
                            format!("An argument named \"{key}\" is not expected in a {} backend block; it takes {}.", block.kind, allowed.join(" and "))
                        })
                        .maybe_hint(did_you_mean(key, allowed.iter().copied())),
                ),
                ("path", Expression::String(s)) => match volume_path(s.value()) {
                    Ok(p) => path = Some(p),
                    Err(why) => diags.push(
                        Diagnostic::error("Invalid volume path")
                            .at(span)
                            .detail(why),
                    ),
                },
                ("lock_expiry_seconds", Expression::Number(n)) => match n.value().as_u64() {
                    Some(0) => lock_expiry = None,
                    Some(secs) => lock_expiry = Some(Duration::from_secs(secs)),
                    None => diags.push(
                        Diagnostic::error("Invalid lock_expiry_seconds")
                            .at(span)
                            .detail("A whole number of seconds, 0 for locks that never expire."),
                    ),
                },
                _ => diags.push(
                    Diagnostic::error(format!("Invalid value for \"{key}\""))
                        .at(span)
                        .detail(format!(
                            "Backend settings must be literal {}: they are read before variables are.",
                            if key == "path" { "strings" } else { "numbers" }
                        )),
                ),
            }
        }
        if block.kind == "local" {
            return if diags.has_errors() {
                Err(diags)
            } else {
                Ok(BackendSpec::Local)
            };
        }
        match path {
            Some(path) if !diags.has_errors() => Ok(BackendSpec::Volume { path, lock_expiry }),
            Some(_) => Err(diags),
            None => {
                if !diags.0.iter().any(|d| d.summary == "Invalid volume path") {
                    diags.push(
                        Diagnostic::error("Missing required argument")
                            .at(block.span.clone())
                            .detail("The volume backend needs \"path\": a directory in a Unity Catalog volume, such as \"/Volumes/ops/brickform/state/lakehouse\"."),
                    );
                }
                Err(diags)
            }
        }
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

    pub fn describe(&self) -> String {
        match self {
            BackendSpec::Local => "the local backend (.brickform/state)".into(),
            BackendSpec::Volume { path, .. } => format!("the volume backend at {path}"),
        }
    }

    /// The `brickform` block that selects this backend.
    fn block(&self) -> String {
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

/// Checks a volume path and drops a trailing `/`: `/Volumes/` then catalog, schema and volume
/// names, then any directories.
fn volume_path(raw: &str) -> Result<String, String> {
    match brickform_databricks::volume_path::VolumePath::parse(raw) {
        // The volume itself, or a directory in it.
        Some(p) => Ok(p.path()),
        None => Err(format!(
            "\"{raw}\" is not a directory in a volume: write /Volumes/CATALOG/SCHEMA/VOLUME/DIR (the volume must exist)."
        )),
    }
}

/// The backend `spec` names, connected. A volume is reached with the Databricks provider's
/// connection, configured from `config` (which may need `vars`); `providers` (and the local
/// workspace they may have started) must outlive the backend.
pub async fn connect(
    spec: &BackendSpec,
    ctx: &Ctx,
    config: &Config,
    vars: &Variables,
    env: &str,
    providers: &Providers,
) -> anyhow::Result<Arc<dyn Backend>> {
    match spec {
        BackendSpec::Local => Ok(Arc::new(LocalBackend::new(&ctx.dir))),
        BackendSpec::Volume { path, lock_expiry } => {
            let client = client(config, vars, env, providers).await?;
            let store = crate::volume_store::FilesApiStore::new(client, path);
            Ok(Arc::new(VolumeBackend::new(Arc::new(store), *lock_expiry)))
        }
    }
}

/// The Databricks client, configured as the provider would be.
async fn client(
    config: &Config,
    vars: &Variables,
    env: &str,
    providers: &Providers,
) -> anyhow::Result<brickform_databricks::client::Client> {
    let shared = providers.databricks.shared();
    if let Ok(c) = shared.client() {
        return Ok(c);
    }
    let engine = Engine::new(config, &providers.registry, vars, env);
    let diags = engine.configure(&StateDocument::new(env)).await;
    if diags.has_errors() {
        ops::print_diags(&diags, config);
        bail!("cannot connect to the workspace that keeps the state (backend \"volume\")");
    }
    if let Ok(c) = shared.client() {
        return Ok(c);
    }
    // Nothing in the configuration uses the provider, so it was not configured: connect
    // with what the environment and profile say.
    brickform_core::provider::Provider::configure(providers.databricks.as_ref(), &Object::new())
        .await
        .map_err(|e| {
            anyhow!(
                "cannot connect to the workspace that keeps the state (backend \"volume\"): {}",
                e.message
            )
        })?;
    shared.client().map_err(|e| anyhow!("{}", e.message))
}

/// Takes the lock of `env` for `operation`. When it is held and `timeout` allows, says who
/// holds it and waits; on failure prints who holds it (and returns exit code 1).
pub async fn lock_state(
    backend: &Arc<dyn Backend>,
    env: &str,
    operation: &str,
    timeout: Duration,
) -> Result<Box<dyn StateLock>, ExitCode> {
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
            ops::format_duration(timeout)
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
            Err(ExitCode::from(1))
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
        format!("; gave up after waiting {}", ops::format_duration(waited))
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

/// Tells the user when taking the lock meant taking over an abandoned one.
fn report_takeover(env: &str, lock: &dyn StateLock) {
    if let Some(old) = lock.took_over() {
        eprintln!(
            "Warning: took over the expired state lock of environment \"{env}\" held by {}",
            old.summary()
        );
    }
}

/// `brickform state migrate --to BACKEND [--all]`: copies the state of the current
/// environment (or of every environment) from the configured backend to BACKEND, leaving the
/// source as it was, then says how to point the configuration at the new place.
pub async fn migrate(
    ctx: &Ctx,
    to: &str,
    all: bool,
    lock_timeout: &str,
) -> anyhow::Result<ExitCode> {
    let config = match ops::load(ctx) {
        Ok(c) => c,
        Err(code) => return Ok(code),
    };
    let env = match ops::environment(ctx, &config) {
        Ok(e) => e,
        Err(code) => return Ok(code),
    };
    let from_spec = match BackendSpec::of(&config) {
        Ok(s) => s,
        Err(diags) => {
            ops::print_diags(&diags, &config);
            return Ok(ExitCode::from(1));
        }
    };
    let to_spec = BackendSpec::parse_target(to)?;
    let timeout = ops::parse_duration(lock_timeout)?;
    if same_place(&from_spec, &to_spec) {
        bail!(
            "the state is already in {}; --to names where it should go",
            from_spec.describe()
        );
    }
    let vars = match ops::variables(&config, &crate::VarArgs::default(), &env, true) {
        Ok(v) => v,
        Err(code) => return Ok(code),
    };
    let providers = ops::providers(ctx, &config, &env).await?;
    let from = connect(&from_spec, ctx, &config, &vars, &env, &providers).await?;
    let target = connect(&to_spec, ctx, &config, &vars, &env, &providers).await?;
    let envs = if all {
        from.environments().await?
    } else {
        vec![env.clone()]
    };
    if envs.is_empty() {
        println!(
            "{} holds no state; nothing to migrate.",
            from_spec.describe()
        );
        return Ok(ExitCode::SUCCESS);
    }
    for e in &envs {
        if let Err(code) = migrate_one(e, &from, &target, &from_spec, &to_spec, timeout).await {
            return Ok(code);
        }
    }
    println!(
        "\n{} still holds its copy. To use the new one, change the configuration's backend to:\n\n{}",
        capitalise(&from_spec.describe()),
        to_spec.block()
    );
    Ok(ExitCode::SUCCESS)
}

fn same_place(a: &BackendSpec, b: &BackendSpec) -> bool {
    match (a, b) {
        (BackendSpec::Local, BackendSpec::Local) => true,
        (BackendSpec::Volume { path: p, .. }, BackendSpec::Volume { path: q, .. }) => {
            p.to_lowercase() == q.to_lowercase()
        }
        _ => false,
    }
}

fn capitalise(s: &str) -> String {
    let mut c = s.chars();
    c.next()
        .map(|f| f.to_uppercase().chain(c).collect())
        .unwrap_or_default()
}

async fn migrate_one(
    env: &str,
    from: &Arc<dyn Backend>,
    target: &Arc<dyn Backend>,
    from_spec: &BackendSpec,
    to_spec: &BackendSpec,
    timeout: Duration,
) -> Result<(), ExitCode> {
    let fail = |msg: String| {
        eprintln!("Error: {msg}");
        ExitCode::from(1)
    };
    let _from_lock = lock_state(from, env, "state migrate", timeout).await?;
    let _to_lock = lock_state(target, env, "state migrate", timeout).await?;
    let rec = recover(from.clone(), env).await.map_err(|e| {
        fail(format!(
            "cannot read the state of environment \"{env}\": {e}"
        ))
    })?;
    if !rec.existed {
        return Err(fail(format!(
            "{} has no state for environment \"{env}\"",
            from_spec.describe()
        )));
    }
    if !rec.unresolved.is_empty() {
        return Err(fail(format!(
            "the state of environment \"{env}\" has {} operation(s) a crash interrupted; run `brickform plan` against {} first, which resolves them",
            rec.unresolved.len(),
            from_spec.describe()
        )));
    }
    let mut doc = rec.document;
    let existing = target
        .load(env)
        .await
        .map_err(|e| fail(format!("cannot read {}: {e}", to_spec.describe())))?;
    if let Some(there) = &existing {
        if there.lineage() != doc.lineage() {
            return Err(fail(format!(
                "{} already holds a different state for environment \"{env}\" (lineage {}, this one is {}); move it aside first if it is not needed",
                to_spec.describe(),
                there.lineage(),
                doc.lineage()
            )));
        }
        if there.serial() > doc.serial() {
            return Err(fail(format!(
                "{} holds a newer copy of the state of environment \"{env}\" (serial {} > {}); it was written after this one, so copying would lose changes",
                to_spec.describe(),
                there.serial(),
                doc.serial()
            )));
        }
    }
    let pending = target
        .wal_read(env)
        .await
        .map_err(|e| fail(format!("cannot read {}: {e}", to_spec.describe())))?;
    if !pending.is_empty() {
        return Err(fail(format!(
            "{} has a write-ahead log for environment \"{env}\" ({} records) from an interrupted run; finish that run there first",
            to_spec.describe(),
            pending.len()
        )));
    }
    target
        .save(env, &mut doc)
        .await
        .map_err(|e| fail(format!("cannot write {}: {e}", to_spec.describe())))?;
    println!(
        "Copied the state of environment \"{env}\" ({} resource{}, lineage {}) from {} to {}.",
        doc.resources().len(),
        if doc.resources().len() == 1 { "" } else { "s" },
        doc.lineage(),
        from_spec.describe(),
        to_spec.describe()
    );
    Ok(())
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
