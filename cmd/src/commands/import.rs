//! `brickform import ADDR ID`: bring an existing object under management.

use crate::args::{PlanArgs, VarArgs};
use crate::context::{self, Ctx, Session};
use crate::failure::{Failure, Outcome};
use anyhow::anyhow;
use std::process::ExitCode;

#[derive(clap::Args)]
pub struct Args {
    /// The resource address in the configuration, e.g. databricks_catalog.main.
    address: String,
    /// The object's id in the workspace, e.g. the catalog name.
    id: String,
    #[command(flatten)]
    vars: VarArgs,
}

pub async fn exec(ctx: &Ctx, args: Args) -> Outcome {
    let plan = PlanArgs {
        vars: args.vars,
        lock_timeout: "0s".into(),
        ..PlanArgs::default()
    };
    let mut s = Session::open(ctx, &plan, "import").await?;
    s.finish_interrupted().await?;
    let engine = s.env.engine();
    match engine
        .import(&mut s.doc, &s.journal, &args.address, &args.id)
        .await
    {
        Ok((line, warnings)) => {
            s.journal
                .checkpoint(&mut s.doc)
                .await
                .map_err(|e| anyhow!("saving state: {e}"))?;
            context::print_diags(&warnings, &s.env.config);
            println!(
                "{line}\n\nImport successful!\n\nThe resource is now in the brickform state; run `brickform plan` to compare it with its configuration."
            );
            Ok(ExitCode::SUCCESS)
        }
        Err(diags) => {
            context::print_diags(&diags, &s.env.config);
            Err(Failure::reported())
        }
    }
}
