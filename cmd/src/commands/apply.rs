//! `brickform apply [FILE]`: make the changes of a fresh plan (after confirmation) or of a
//! saved plan, showing each as it happens. `destroy` is the same with a destroy plan.

use crate::args::PlanArgs;
use crate::context::{self, Ctx, Session};
use crate::failure::{Failure, Outcome, fail};
use crate::saved::{self, SavedPlan};
use anyhow::anyhow;
use brickform_core::drop_later::drop_later;
use brickform_core::engine::apply::{ApplyEvent, ApplyOptions, ApplyReport};
use brickform_core::plan::{Action, Plan, render_text};
use brickform_state::StateDocument;
use std::io::{BufRead, IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

#[derive(clap::Args)]
pub struct Args {
    /// A plan saved with `plan -out FILE`.
    plan_file: Option<PathBuf>,
    #[command(flatten)]
    plan: PlanArgs,
    /// Do not ask for confirmation.
    #[arg(long = "auto-approve")]
    auto_approve: bool,
}

pub async fn exec(ctx: &Ctx, args: Args) -> Outcome {
    run(ctx, &args.plan, args.plan_file, args.auto_approve, false).await
}

/// Plans (or reads the saved plan), confirms, applies and reports; `destroy` plans to
/// destroy everything the state manages.
pub async fn run(
    ctx: &Ctx,
    args: &PlanArgs,
    plan_file: Option<PathBuf>,
    auto_approve: bool,
    destroy: bool,
) -> Outcome {
    let saved = Saved::read(ctx, plan_file.as_deref())?;
    // A saved plan is applied with the arguments it was made with, in its environment.
    let (ctx, args) = match &saved.plan {
        Some(sp) => (ctx.in_environment(&sp.environment), sp.args(args)),
        None => (ctx.clone(), args.clone()),
    };
    let operation = if destroy { "destroy" } else { "apply" };
    let mut s = Session::open(&ctx, &args, operation).await?;
    if let Some(why) = saved.plan.as_ref().and_then(|sp| sp.stale(&s)) {
        fail!("{why}{}", saved.line);
    }
    s.finish_interrupted().await?;
    let engine = s.env.engine();
    let (planned, diags) = engine.plan(&s.doc, &args.request(destroy)).await;
    context::print_diags(&diags, &s.env.config);
    let Some(planned) = planned else {
        return Err(Failure::reported());
    };
    match &saved.plan {
        Some(sp) => saved.still_holds(sp, &planned.plan)?,
        None => print!(
            "{}",
            render_text::render(&planned.plan, &ctx.text_options())
        ),
    }
    let has_changes = planned.plan.has_changes();
    let outputs_change = planned
        .plan
        .outputs
        .iter()
        .any(|o| o.action != Action::NoOp);
    if !has_changes && !outputs_change {
        return Ok(ExitCode::SUCCESS);
    }
    if saved.plan.is_none() && !auto_approve && has_changes {
        confirmed(destroy)?;
    }
    println!();
    let opts = ApplyOptions {
        parallelism: args.parallelism,
        cancel: cancel_on_interrupt(),
        on_event: Arc::new(print_event),
    };
    let planned = Arc::new(planned);
    let (doc, report) = engine.apply(planned.clone(), s.doc, s.journal, opts).await;
    let done = finish(&s.env, doc, &report, destroy).await;
    // Kept until the state is saved, then freed on a thread of its own while the command
    // ends (see `drop_later`).
    drop_later(planned);
    done
}

/// The plan file given, if any, and how a refusal names it (resolved: a CI job applying
/// another file than the one it meant to sees it).
struct Saved {
    plan: Option<SavedPlan>,
    line: String,
}

impl Saved {
    /// Reads the plan file, refusing one made for another environment than the one asked.
    fn read(ctx: &Ctx, plan_file: Option<&Path>) -> Result<Saved, Failure> {
        let plan = plan_file.map(saved::read).transpose()?;
        let line = plan_file
            .map(|p| format!("\n  Plan file: {}", saved::shown(p)))
            .unwrap_or_default();
        if let (Some(sp), Some(asked)) = (&plan, &ctx.environment)
            && asked != &sp.environment
        {
            fail!(
                "the plan was made for environment \"{}\", not \"{asked}\"; it cannot be applied there.{line}",
                sp.environment
            );
        }
        Ok(Saved { plan, line })
    }

    /// Refuses a saved plan whose actions no longer hold: the same actions, and the same
    /// values for every field they change (what counts is decided in
    /// brickform_core::plan::saved).
    fn still_holds(&self, sp: &SavedPlan, now: &Plan) -> Result<(), Failure> {
        let differing = brickform_core::plan::saved::differing_changes(&sp.plan, now);
        if differing.is_empty() {
            return Ok(());
        }
        let shown: Vec<&str> = differing.iter().take(5).map(|a| a.as_str()).collect();
        let more = differing.len().saturating_sub(shown.len());
        fail!(
            "Saved plan is stale: the live objects changed since the plan was created, so its actions no longer hold. Create a new plan.\n  Planned differently now: {}{}.\n  (Files the configuration reads, such as a CSV or a notebook source, count too.){}",
            shown.join(", "),
            if more > 0 {
                format!(" and {more} more")
            } else {
                String::new()
            },
            self.line
        );
    }
}

/// Asks on a terminal; refuses without one.
fn confirmed(destroy: bool) -> Result<(), Failure> {
    if !std::io::stdin().is_terminal() {
        fail!(
            "No confirmation given. Use --auto-approve to apply without a prompt, or run in a terminal."
        );
    }
    if !confirm(destroy) {
        println!("\nApply cancelled.");
        return Err(Failure::reported());
    }
    Ok(())
}

/// Saves the state the apply left, empties the log unless a call's outcome is unknown (the
/// next run resolves it), and reports what failed, what was done and the checks (which warn,
/// never fail the apply).
async fn finish(
    env: &context::Environment,
    mut doc: StateDocument,
    report: &ApplyReport,
    destroy: bool,
) -> Outcome {
    env.backend
        .save(&env.name, &mut doc)
        .await
        .map_err(|e| anyhow!("saving state: {e}"))?;
    if report.unresolved == 0 {
        let _ = env.backend.wal_truncate(&env.name).await;
    }
    if !report.failed.is_empty() {
        eprintln!();
    }
    for (addr, failure) in &report.failed {
        context::print_diags(&failure.to_diagnostics(addr, &env.config), &env.config);
    }
    summarise(report, &doc, destroy);
    drop_later(doc);
    context::print_diags(&report.checks, &env.config);
    if report.failed.is_empty() && !report.interrupted {
        Ok(ExitCode::SUCCESS)
    } else {
        Err(Failure::reported())
    }
}

fn confirm(destroy: bool) -> bool {
    if destroy {
        println!(
            "\nDo you really want to destroy all resources?\n  brickform will destroy all your managed infrastructure, as shown above.\n  There is no undo. Only 'yes' will be accepted to confirm.\n"
        );
    } else {
        println!(
            "\nDo you want to perform these actions?\n  brickform will perform the actions described above.\n  Only 'yes' will be accepted to approve.\n"
        );
    }
    print!("  Enter a value: ");
    let _ = std::io::stdout().flush();
    let mut line = String::new();
    std::io::stdin().lock().read_line(&mut line).is_ok() && line.trim() == "yes"
}

/// A token cancelled by the first Ctrl-C (see `interrupt`): operations under way finish,
/// nothing new starts; a second Ctrl-C stops at once.
fn cancel_on_interrupt() -> CancellationToken {
    let cancel = crate::interrupt::graceful();
    let on_signal = cancel.clone();
    tokio::spawn(async move {
        on_signal.cancelled().await;
        eprintln!(
            "\nInterrupt received.\nPlease wait for brickform to exit or data loss may occur.\nGracefully shutting down..."
        );
    });
    cancel
}

/// What each action is called while it runs, when it is done, and when it failed.
fn verb(action: Action) -> (&'static str, &'static str, &'static str) {
    match action {
        Action::Create => ("Creating...", "Creation complete", "Creation"),
        Action::Update => ("Modifying...", "Modifications complete", "Modification"),
        Action::Delete => ("Destroying...", "Destruction complete", "Destruction"),
        Action::DeleteThenCreate | Action::CreateThenDelete => {
            ("Replacing...", "Replacement complete", "Replacement")
        }
        Action::Read => ("Reading...", "Read complete", "Read"),
        Action::Forget => ("Removing from state...", "Removal complete", "Removal"),
        Action::NoOp => ("Importing...", "Import complete", "Import"),
    }
}

/// One line per step of the apply, as Terraform shows them.
fn print_event(e: ApplyEvent) {
    match e {
        ApplyEvent::Started {
            address,
            action,
            id,
        } => {
            let id = match id {
                Some(i) if action != Action::Create => format!(" [id={i}]"),
                _ => String::new(),
            };
            println!("{address}: {}{id}", verb(action).0);
        }
        ApplyEvent::StillRunning {
            address,
            action,
            elapsed,
        } => println!(
            "{address}: Still {}... [{}s elapsed]",
            verb(action).0.trim_end_matches("...").to_lowercase(),
            elapsed.as_secs()
        ),
        ApplyEvent::Finished {
            address,
            action,
            id,
            elapsed,
        } => {
            let id = id.map(|i| format!(" [id={i}]")).unwrap_or_default();
            println!(
                "{address}: {} after {}s{id}",
                verb(action).1,
                elapsed.as_secs()
            );
        }
        // The error itself is printed once, with what to do, when the apply ends.
        ApplyEvent::Failed {
            address, action, ..
        } => eprintln!("{address}: {} failed", verb(action).2),
        ApplyEvent::Skipped { address, because } => {
            eprintln!("{address}: skipped: {because}")
        }
        ApplyEvent::Output { address, line } => println!("{address} (output): {line}"),
    }
}

/// The closing lines: counts, what was not started and why, the outputs.
fn summarise(report: &ApplyReport, doc: &StateDocument, destroy: bool) {
    if !report.failed.is_empty() || report.interrupted {
        let what = if report.interrupted {
            "interrupted"
        } else {
            "failed"
        };
        // "Run it again" finishes an interrupted or temporarily failed apply; a
        // configuration the service refused needs changing first.
        let next = if report.retry_may_help() {
            "run the command again to finish"
        } else {
            "fix what the errors above say, then run the command again"
        };
        println!(
            "\n{} {what}. Resources: {} added, {} changed, {} destroyed; {} failed, {} skipped. State was saved: {next}.",
            if destroy { "Destroy" } else { "Apply" },
            report.added,
            report.changed,
            report.destroyed,
            report.failed.len(),
            report.skipped.len()
        );
    } else if destroy {
        let left = doc.resources().len();
        println!(
            "\nDestroy complete! {} destroyed, {left} left behind.",
            report.destroyed
        );
    } else {
        let imported = if report.imported > 0 {
            format!("{} imported, ", report.imported)
        } else {
            String::new()
        };
        println!(
            "\nApply complete! Resources: {imported}{} added, {} changed, {} destroyed.",
            report.added, report.changed, report.destroyed
        );
    }
    if let Some(why) = &report.stopped {
        eprintln!(
            "The {} stopped: {why}.",
            if destroy { "destroy" } else { "apply" }
        );
    }
    if !report.skipped.is_empty() {
        let why = if report.interrupted {
            "Not started (interrupted)"
        } else if report.stopped.is_some() {
            "Not started (stopped)"
        } else {
            "Skipped because a dependency failed"
        };
        println!("{why}: {}", report.skipped.join(", "));
    }
    if !destroy && !report.outputs.is_empty() {
        println!("\nOutputs:\n");
        for (name, v, sensitive) in &report.outputs {
            println!(
                "{name} = {}",
                if *sensitive {
                    "<sensitive>".to_string()
                } else {
                    v.to_string()
                }
            );
        }
    }
}
