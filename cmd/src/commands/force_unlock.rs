//! `brickform force-unlock ID`: remove a stale state lock by its id.

use crate::context::{Ctx, StateAccess};
use crate::failure::{Outcome, Said};
use std::process::ExitCode;

#[derive(clap::Args)]
pub struct Args {
    id: String,
    /// Remove it even though its holder still runs on this host (two runs then write
    /// the state at once).
    #[arg(long = "even-if-running")]
    even_if_running: bool,
}

pub async fn exec(ctx: &Ctx, args: Args) -> Outcome {
    let access = StateAccess::open(ctx).await?;
    access
        .backend
        .force_unlock(&access.env, &args.id, args.even_if_running)
        .await
        .said()?;
    println!("brickform state has been successfully unlocked!");
    Ok(ExitCode::SUCCESS)
}
