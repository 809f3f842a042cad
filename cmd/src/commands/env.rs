//! `brickform env list | new | rename`: the environments, declared and with state; making one
//! on purpose; moving an environment's state to another name.

use crate::backend::lock_state;
use crate::context::{self, Ctx, StateAccess};
use crate::failure::{Failure, Outcome, Said, fail};
use anyhow::anyhow;
use brickform_core::diagnostics::did_you_mean;
use brickform_core::lang::environment;
use brickform_core::lang::load::{Config, load_dir};
use brickform_state::backend::local::validate_environment;
use brickform_state::{Backend, StateDocument, StateLock, recover};
use clap::Subcommand;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

#[derive(Subcommand)]
pub enum Command {
    /// List environments (declared and with state).
    List,
    /// Create an environment's empty state, so `--env NAME` selects it.
    New { name: String },
    /// Move an environment's state to another name (`env rename default dev`).
    Rename {
        from: String,
        to: String,
        /// Wait this long for each state lock (e.g. 30s).
        #[arg(long = "lock-timeout", default_value = "0s")]
        lock_timeout: String,
    },
}

pub async fn exec(ctx: &Ctx, cmd: Command) -> Outcome {
    match cmd {
        Command::List => list(ctx).await,
        Command::New { name } => new(ctx, &name).await,
        Command::Rename {
            from,
            to,
            lock_timeout,
        } => rename(ctx, &from, &to, &lock_timeout).await,
    }
}

async fn list(ctx: &Ctx) -> Outcome {
    let (config, _) = load_dir(&ctx.dir);
    let current = context::environment(ctx, &config)?;
    let mut names: Vec<String> = config.environments.keys().cloned().collect();
    names.extend(
        StateAccess::open(ctx)
            .await?
            .backend
            .environments()
            .await
            .said()?,
    );
    names.push(current.clone());
    names.sort();
    names.dedup();
    for n in names {
        println!("{} {n}", if n == current { "*" } else { " " });
    }
    Ok(ExitCode::SUCCESS)
}

/// Saves an empty state for `name`: from then on `--env NAME` selects it, and `env list`
/// shows it.
async fn new(ctx: &Ctx, name: &str) -> Outcome {
    validate_environment(name)?;
    let (config, _) = load_dir(&ctx.dir);
    let access = StateAccess::connect(ctx, &config, name).await?;
    let backend = &access.backend;
    let _lock = lock_state(backend, name, "env new", Duration::ZERO).await?;
    refuse_existing(backend.as_ref(), name).await?;
    backend
        .save(name, &mut StateDocument::new(name))
        .await
        .map_err(|e| anyhow!("cannot create the state of environment \"{name}\": {e}"))?;
    println!("Created environment \"{name}\" with an empty state; select it with --env {name}.");
    if !config.environments.is_empty() && !config.environments.contains_key(name) {
        eprintln!(
            "Warning: the configuration declares environments, and not \"{name}\": commands refuse --env {name} until it declares environment \"{name}\" {{}}."
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// Moves the state of `from` to `to`: the same state (its lineage, which the ownership tags
/// on the objects name, included), saved under the new name, then removed under the old
/// one. The objects in the workspace are not touched.
async fn rename(ctx: &Ctx, from: &str, to: &str, lock_timeout: &str) -> Outcome {
    validate_environment(from)?;
    validate_environment(to)?;
    if from == to {
        fail!("env rename needs two different names; both are \"{from}\"");
    }
    let timeout = crate::duration::parse(lock_timeout)?;
    let (config, _) = load_dir(&ctx.dir);
    // Reached as `to` will reach it from now on, so the state lands where its commands look.
    let access = StateAccess::connect(ctx, &config, to).await?;
    let backend = &access.backend;
    let _locks = lock_both(backend, from, to, timeout).await?;
    refuse_existing(backend.as_ref(), to).await?;
    let doc = state_to_move(backend, from).await?;
    let (resources, outputs) = (doc.resources().len(), doc.outputs().len());
    let mut moved = doc.moved_to(to);
    backend
        .save(to, &mut moved)
        .await
        .map_err(|e| anyhow!("cannot save the state of environment \"{to}\": {e}"))?;
    backend.delete(from).await.map_err(|e| {
        anyhow!("the state was saved as environment \"{to}\", but the state of \"{from}\" could not be removed, so both hold it now; remove \"{from}\" by hand: {e}")
    })?;
    println!(
        "Renamed environment \"{from}\" to \"{to}\": its state ({resources} resource instance(s), {outputs} output(s)) moved; the objects it manages were not touched."
    );
    after_rename_notes(&config, from, to);
    Ok(ExitCode::SUCCESS)
}

/// The locks of both environments, taken in name order: two renames in opposite directions
/// then cannot each hold one and wait for the other.
async fn lock_both(
    backend: &Arc<dyn Backend>,
    a: &str,
    b: &str,
    timeout: Duration,
) -> Result<Vec<Box<dyn StateLock>>, Failure> {
    let mut names = [a, b];
    names.sort_unstable();
    let mut held = Vec::new();
    for name in names {
        held.push(lock_state(backend, name, "env rename", timeout).await?);
    }
    Ok(held)
}

/// The state of `from` with its write-ahead log's records saved into it. Operations an
/// interrupted run left unresolved are refused: they are resolved by looking the objects up
/// under `from`'s name and state, which a plan there does.
async fn state_to_move(backend: &Arc<dyn Backend>, from: &str) -> Result<StateDocument, Failure> {
    let rec = recover(backend.clone(), from)
        .await
        .map_err(|e| anyhow!("cannot load the state of environment \"{from}\": {e}"))?;
    if !rec.existed {
        let with_state = backend.environments().await?;
        let hint = did_you_mean(from, with_state.iter().map(String::as_str))
            .map(|h| format!("; {h}"))
            .unwrap_or_default();
        fail!("there is no state of environment \"{from}\" to rename{hint}");
    }
    if !rec.unresolved.is_empty() {
        let addresses: Vec<&str> = rec.unresolved.iter().map(|i| i.address.as_str()).collect();
        fail!(
            "the write-ahead log of environment \"{from}\" holds operations an interrupted run left unresolved ({}); run `brickform plan` in environment \"{from}\" to resolve them, then rename it",
            addresses.join(", ")
        );
    }
    let mut doc = rec.document;
    if rec.replayed > 0 {
        rec.journal
            .checkpoint(&mut doc)
            .await
            .map_err(|e| anyhow!("cannot save the state of environment \"{from}\": {e}"))?;
    }
    Ok(doc)
}

/// `env new` and `env rename` never write over an environment that exists: one with a
/// state, or with a log a crash left.
async fn refuse_existing(backend: &dyn Backend, name: &str) -> Result<(), Failure> {
    if backend.load(name).await?.is_some() {
        fail!(
            "environment \"{name}\" exists already: it has a state (`brickform --env {name} state list` lists it)"
        );
    }
    if !backend.wal_read(name).await?.is_empty() {
        fail!(
            "environment \"{name}\" has no state but a write-ahead log an interrupted run left; it is not replaced"
        );
    }
    Ok(())
}

/// What the configuration still needs after a rename: commands select environments by it.
fn after_rename_notes(config: &Config, from: &str, to: &str) {
    let declared = !config.environments.is_empty();
    if declared && !config.environments.contains_key(to) {
        eprintln!(
            "Warning: the configuration declares environments, and not \"{to}\": commands refuse --env {to} until it declares environment \"{to}\" {{}}."
        );
    }
    if environment::select(config, None).is_ok_and(|e| e == from) {
        let mark = if config.environments.contains_key(to) {
            format!(", or mark environment \"{to}\" with `default = true`")
        } else {
            String::new()
        };
        eprintln!(
            "Note: commands without --env work in environment \"{from}\", which has no state now; give them --env {to}{mark}."
        );
    }
}
