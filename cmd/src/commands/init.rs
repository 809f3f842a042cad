//! `brickform init`: prepare a configuration directory (its state folder) and check that the
//! configuration loads.

use crate::backend::BackendSpec;
use crate::context::{self, Ctx};
use crate::failure::Outcome;
use anyhow::Context as _;
use std::process::ExitCode;

#[derive(clap::Args)]
pub struct Args {}

pub async fn exec(ctx: &Ctx, _args: Args) -> Outcome {
    let config = context::load(ctx)?;
    let env = context::environment(ctx, &config)?;
    context::require_known_connecting(ctx, &config, &env).await?;
    let spec = context::backend_spec(&config)?;
    let state_dir = ctx.dir.join(".brickform").join("state");
    if spec == BackendSpec::Local {
        std::fs::create_dir_all(&state_dir)
            .with_context(|| format!("creating {}", state_dir.display()))?;
    }
    println!(
        "brickform has been initialized in {} (environment \"{env}\").",
        ctx.dir.display()
    );
    match spec {
        BackendSpec::Volume { path, .. } => {
            println!("State is kept in the volume directory {path}.")
        }
        BackendSpec::Local => println!("State is kept in {}.", state_dir.display()),
    }
    Ok(ExitCode::SUCCESS)
}
