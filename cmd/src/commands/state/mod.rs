//! `brickform state …`: inspect and change the state without planning.

mod migrate;

use crate::context::{self, Ctx, Providers, StateAccess};
use crate::failure::{Failure, Outcome, Said, fail};
use anyhow::anyhow;
use brickform_core::engine::Engine;
use brickform_core::engine::inputs::{self, Variables};
use brickform_core::lang::load::load_dir;
use brickform_state::{Backend, StateDocument};
use clap::Subcommand;
use std::path::Path;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

#[derive(Subcommand)]
pub enum Command {
    /// List the addresses in state.
    List,
    /// Show one resource's attributes as `terraform state show` does (its state entry as
    /// JSON with --json).
    Show {
        address: String,
        #[arg(long)]
        json: bool,
    },
    /// Forget resources without destroying them.
    Rm { addresses: Vec<String> },
    /// Rename a resource in state.
    Mv { from: String, to: String },
    /// Print the state document.
    Pull,
    /// Replace the state with a document from a file (lineage must match).
    Push { file: PathBuf },
    /// Copy the state to another backend: --to local, or --to volume:/Volumes/C/S/V/DIR.
    Migrate(migrate::Args),
}

pub async fn exec(ctx: &Ctx, cmd: Command) -> Outcome {
    if let Command::Migrate(args) = cmd {
        return migrate::exec(ctx, args).await;
    }
    // A pushed document names its environment (saving it under another is refused), so a
    // push makes that environment's state on purpose: restoring a lost state, say.
    let ctx = &match cmd {
        Command::Push { .. } => ctx.making_state(),
        _ => ctx.clone(),
    };
    let access = StateAccess::open(ctx).await?;
    let doc = access.load().await?;
    match cmd {
        Command::List => {
            for r in doc.iter().flat_map(|d| d.resources()) {
                println!("{}", r.address());
            }
        }
        Command::Show { address, json } => {
            let addr = instance_arg(&address)?;
            let Some(r) = doc.as_ref().and_then(|d| d.get(&addr)) else {
                fail!("No instance found for the given address {address}.");
            };
            if json {
                println!("{}", serde_json::to_string_pretty(r)?);
            } else {
                print!("{}", super::show::resource_text(r));
            }
        }
        Command::Pull => match doc {
            Some(d) => println!("{}", serde_json::to_string_pretty(&d)?),
            None => println!("{{}}"),
        },
        Command::Rm { addresses } => rm(ctx, &access, doc, &addresses).await?,
        Command::Mv { from, to } => mv(&access, doc, &from, &to).await?,
        Command::Push { file } => push(&access, &file).await?,
        Command::Migrate(_) => {}
    }
    Ok(ExitCode::SUCCESS)
}

/// What is written is written under the state's lock (a command that only reads does not
/// wait for one).
async fn locked(
    access: &StateAccess,
    operation: &'static str,
) -> Result<Box<dyn brickform_state::StateLock>, Failure> {
    crate::backend::lock_state(&access.backend, &access.env, operation, Duration::ZERO).await
}

/// An instance address as the command line gives it, read once here: a text that is no
/// address is refused saying why, rather than looked up and not found.
fn instance_arg(text: &str) -> Result<brickform_state::InstanceAddr, Failure> {
    brickform_state::InstanceAddr::parse(text).map_err(|e| Failure::from(anyhow!("{e}")))
}

fn existing(access: &StateAccess, doc: Option<StateDocument>) -> anyhow::Result<StateDocument> {
    doc.ok_or_else(|| anyhow!("no state for environment \"{}\"", access.env))
}

/// `state rm`: forgets the instances (the objects stay), and says what the next plan does
/// with each.
async fn rm(
    ctx: &Ctx,
    access: &StateAccess,
    doc: Option<StateDocument>,
    addresses: &[String],
) -> Result<(), Failure> {
    let (env, backend) = (access.env.as_str(), &access.backend);
    let _lock = locked(access, "state rm").await?;
    let mut d = existing(access, doc)?;
    let addrs = addresses
        .iter()
        .map(|a| instance_arg(a))
        .collect::<Result<Vec<_>, _>>()?;
    let mut removed = Vec::new();
    for (a, addr) in addresses.iter().zip(&addrs) {
        match d.forget(addr) {
            Some(r) => removed.push(r),
            None => fail!("No instance found for the given address {a}."),
        }
    }
    backend.save(env, &mut d).await.said()?;
    let outlook = after_forget(ctx, env, backend, access.providers.as_ref(), &d, &removed).await;
    for (r, next) in removed.iter().zip(outlook) {
        println!(
            "Removed {} from the state; the object is not deleted (id {}).\n  {next}",
            r.address(),
            r.id
        );
    }
    println!(
        "Successfully removed {} resource instance(s).\n\nTo stop managing an object for good, remove it from the configuration too (or declare a `removed` block with `destroy = false`); to delete it, let the next apply import it again, then run `brickform destroy --target ADDRESS`.",
        addresses.len()
    );
    Ok(())
}

/// `state mv`: a module address moves every instance inside it, and a resource address
/// without a key every instance of it, as `terraform state mv` does.
async fn mv(
    access: &StateAccess,
    doc: Option<StateDocument>,
    from: &str,
    to: &str,
) -> Result<(), Failure> {
    let _lock = locked(access, "state mv").await?;
    let mut d = existing(access, doc)?;
    let modules = (
        brickform_state::address::split_module(from),
        brickform_state::address::split_module(to),
    );
    let moved = match modules {
        (Ok((f, "")), Ok((t, ""))) if !f.is_root() && !t.is_root() => {
            d.mv_module(&f, &t).said()?.len()
        }
        _ => d
            .mv_all(&instance_arg(from)?, &instance_arg(to)?)
            .said()?
            .len(),
    };
    access.backend.save(&access.env, &mut d).await.said()?;
    println!("Move \"{from}\" to \"{to}\"\nSuccessfully moved {moved} object(s).");
    Ok(())
}

/// `state push`: the document in `file` becomes the environment's state.
async fn push(access: &StateAccess, file: &Path) -> Result<(), Failure> {
    let _lock = locked(access, "state push").await?;
    let text = brickform_core::limits::read_text_file(file)
        .map_err(|why| anyhow!("reading {}: {why}", file.display()))?;
    let mut incoming: StateDocument = serde_json::from_str(&text)
        .map_err(|e| anyhow!("{} is not a state document: {e}", file.display()))?;
    access
        .backend
        .save(&access.env, &mut incoming)
        .await
        .said()?;
    println!("State pushed to environment \"{}\".", access.env);
    Ok(())
}

/// For each instance `state rm` took out of `doc`: what the next plan does about its
/// object, found the way that plan finds it when the workspace can be reached.
async fn after_forget(
    ctx: &Ctx,
    env: &str,
    backend: &Arc<dyn Backend>,
    connected: Option<&Providers>,
    doc: &StateDocument,
    removed: &[brickform_state::ResourceState],
) -> Vec<String> {
    let (config, _) = load_dir(&ctx.dir);
    // Variables as far as they are known without asking; a provider setting that needs
    // one that is not leaves the workspace unreachable, and the offline answer stands.
    let vars = match context::var_inputs(&Default::default(), true) {
        Ok(inputs) => inputs::resolve(&config, &inputs, Some(env)).0,
        Err(_) => Variables::default(),
    };
    // The backend's providers when it has some (a volume backend), so one local workspace
    // is not started twice on the same data.
    let started = match connected {
        Some(_) => None,
        None => Providers::start(ctx, &config, env).await.ok(),
    };
    let offline = context::registry();
    let registry = connected
        .or(started.as_ref())
        .map_or(&offline, |p| &p.registry);
    let engine = Engine::new(&config, registry, &vars, env).with_backend(backend.clone());
    let online = !std::ptr::eq(registry, &offline) && !engine.configure(doc).await.has_errors();
    let mut out = Vec::new();
    for r in removed {
        let looked = if online {
            engine.after_forget(doc, r).await
        } else {
            None
        };
        out.push(looked.unwrap_or_else(|| engine.after_forget_offline(r)));
    }
    out
}
