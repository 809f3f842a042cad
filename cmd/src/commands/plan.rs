//! `brickform plan`: show what apply would change, and save it for `apply FILE`.

use crate::args::PlanArgs;
use crate::context::{self, Ctx, Session};
use crate::failure::{Failure, Outcome};
use crate::saved::SavedPlan;
use anyhow::anyhow;
use brickform_core::engine::Planned;
use brickform_core::plan::{render_json, render_markdown, render_text};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    pub plan: PlanArgs,
    /// Save the plan to this file for `apply FILE`.
    #[arg(long = "out", value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// Print the plan as JSON (see docs/plan-json.md).
    #[arg(long)]
    json: bool,
    /// Print the plan as Markdown (for pull requests).
    #[arg(long)]
    markdown: bool,
    /// Exit 0 with no changes, 2 with changes, 1 on error.
    #[arg(long = "detailed-exitcode")]
    detailed_exitcode: bool,
}

/// Exit status of `--detailed-exitcode` when the plan has changes.
pub const HAS_CHANGES: u8 = 2;

/// Opens the environment's state and plans it; diagnostics are printed, and the
/// configuration's warnings are returned as one line each.
pub async fn fresh(ctx: &Ctx, args: &PlanArgs) -> Result<(Session, Planned, Vec<String>), Failure> {
    let mut s = Session::open(ctx, args, "plan").await?;
    s.finish_interrupted().await?;
    let (planned, diags) = s.env.engine().plan(&s.doc, &args.request(false)).await;
    context::print_diags(&diags, &s.env.config);
    let warnings = diags
        .warnings()
        .map(|d| d.one_line(&s.env.config.sources))
        .collect();
    match planned {
        Some(planned) => Ok((s, planned, warnings)),
        None => Err(Failure::reported()),
    }
}

pub async fn exec(ctx: &Ctx, args: Args) -> Outcome {
    let (mut s, mut planned, warnings) = fresh(ctx, &args.plan).await?;
    // What the plan was made from: the JSON form prints it, and a saved plan keeps it for
    // `show --json`.
    if args.json || args.out.is_some() {
        planned.plan.context = s.env.engine().describe(&planned.plan);
    }
    let quiet = args.json || args.markdown;
    if args.json {
        println!(
            "{}",
            serde_json::to_string(&render_json::render(&planned.plan))?
        );
    } else if args.markdown {
        // A pull request shows no terminal: the configuration's warnings go in the comment.
        let mut shown = planned.plan.clone();
        shown.warnings.extend(warnings);
        println!("{}", render_markdown::render(&shown));
    } else {
        print!(
            "{}",
            render_text::render(&planned.plan, &ctx.text_options())
        );
    }
    let has_changes = planned.plan.has_changes();
    if let Some(path) = &args.out {
        // A saved plan names the state's lineage, so that state must exist on disk.
        if !s.saved {
            s.env
                .backend
                .save(&s.env.name, &mut s.doc)
                .await
                .map_err(|e| anyhow!("saving state: {e}"))?;
        }
        SavedPlan::new(&s, &args.plan, planned.plan).write(path)?;
        if !quiet {
            println!(
                "\nSaved the plan to: {}\n\nTo perform exactly these actions, run:\n  brickform apply \"{}\"",
                path.display(),
                path.display()
            );
        }
    } else if !quiet && has_changes {
        println!(
            "\nNote: You didn't use the -out option to save this plan, so brickform can't guarantee to take exactly these actions if you run \"brickform apply\" now."
        );
    }
    Ok(if args.detailed_exitcode && has_changes {
        ExitCode::from(HAS_CHANGES)
    } else {
        ExitCode::SUCCESS
    })
}
