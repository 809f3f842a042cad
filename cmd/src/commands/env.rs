//! `brickform env list`: the environments, declared and with state.

use crate::context::{self, Ctx, StateAccess};
use crate::failure::Outcome;
use anyhow::anyhow;
use brickform_core::lang::load::load_dir;
use clap::Subcommand;
use std::process::ExitCode;

#[derive(Subcommand)]
pub enum Command {
    /// List environments (declared and with state).
    List,
}

pub async fn exec(ctx: &Ctx, cmd: Command) -> Outcome {
    match cmd {
        Command::List => list(ctx).await,
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
            .map_err(|e| anyhow!("{e}"))?,
    );
    names.push(current.clone());
    names.sort();
    names.dedup();
    for n in names {
        println!("{} {n}", if n == current { "*" } else { " " });
    }
    Ok(ExitCode::SUCCESS)
}
