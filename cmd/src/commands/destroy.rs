//! `brickform destroy`: delete everything the environment's state manages.

use crate::args::PlanArgs;
use crate::context::Ctx;
use crate::failure::Outcome;

#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    plan: PlanArgs,
    /// Do not ask for confirmation.
    #[arg(long = "auto-approve")]
    auto_approve: bool,
}

pub async fn exec(ctx: &Ctx, args: Args) -> Outcome {
    super::apply::run(ctx, &args.plan, None, args.auto_approve, true).await
}
