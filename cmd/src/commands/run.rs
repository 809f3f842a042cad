//! `brickform run ADDR`: start a job run or a pipeline update of a managed resource and
//! follow it to its end; for a job, also repair a run that failed (`--repair`) or cancel
//! runs that are going (`--cancel`).

use crate::context::{self, Ctx, Reading};
use crate::failure::{Failure, Outcome, Said, fail};
use brickform_databricks::DatabricksProvider;
use brickform_databricks::client::Client;
use brickform_databricks::run::{
    Confirmation, Outcome as RunOutcome, Progress, RunRequest, Runner, Started, UpdateRequest,
};
use std::sync::Arc;

use std::io::{BufRead, IsTerminal, Write};
use std::process::ExitCode;
use std::time::Duration;

#[derive(clap::Args)]
pub struct Args {
    /// A managed job or pipeline, e.g. databricks_job.nightly.
    address: String,
    /// Job parameter NAME=VALUE (repeatable).
    #[arg(long = "param", value_name = "NAME=VALUE")]
    params: Vec<String>,
    /// Start it and return without waiting.
    #[arg(long = "no-wait")]
    no_wait: bool,
    /// Jobs: repair a run that did not succeed, re-running only its failed tasks and those
    /// after them, and follow it again (default: the job's latest run that did not succeed).
    #[arg(long = "repair", value_name = "RUN_ID", num_args = 0..=1,
          conflicts_with_all = ["cancel", "full_refresh", "refresh", "validate_only"])]
    repair: Option<Option<u64>>,
    /// Jobs: cancel the run RUN_ID, or every run of the job that is going, and wait for
    /// them to end.
    #[arg(long = "cancel", value_name = "RUN_ID", num_args = 0..=1,
          conflicts_with_all = ["params", "full_refresh", "refresh", "validate_only"])]
    cancel: Option<Option<u64>>,
    /// Pipelines: recompute every table from scratch (asks first).
    #[arg(long = "full-refresh")]
    full_refresh: bool,
    /// Pipelines: refresh only these tables (comma-separated).
    #[arg(long = "refresh", value_delimiter = ',')]
    refresh: Vec<String>,
    /// Pipelines: check the pipeline's code without updating any table.
    #[arg(long = "validate-only")]
    validate_only: bool,
    /// Do not ask for confirmation.
    #[arg(long = "auto-approve")]
    auto_approve: bool,
    /// Give up waiting after this long (e.g. 90s, 30m, 2h; a bare number is seconds).
    #[arg(long = "timeout", default_value = "1h", value_parser = crate::duration::parse)]
    timeout: Duration,
    #[command(flatten)]
    vars: crate::args::VarArgs,
}

/// Prints a run's progress. On a terminal one line is kept current (state, elapsed time,
/// the tasks running) and finished tasks are printed above it; elsewhere each state change
/// and each finished task is a line of its own, so logs stay short.
fn progress_printer() -> impl Fn(Progress) + Send + Sync {
    let live = std::io::stdout().is_terminal();
    move |p| match p {
        Progress::State { state, elapsed } if !live => {
            println!("{state} [{}s elapsed]", elapsed.as_secs());
        }
        Progress::State { .. } => {}
        Progress::Waiting {
            state,
            elapsed,
            running,
        } if live => {
            let tasks = if running.is_empty() {
                String::new()
            } else {
                format!(" running {}", running.join(", "))
            };
            print!("\r\x1b[2K{state} [{}s elapsed]{tasks}", elapsed.as_secs());
            let _ = std::io::stdout().flush();
        }
        Progress::Waiting { .. } => {}
        Progress::Link { url } => {
            if live {
                print!("\r\x1b[2K");
            }
            println!("  {url}");
        }
        Progress::Task {
            task_key,
            result,
            message,
        } => {
            if live {
                print!("\r\x1b[2K");
            }
            let msg = if message.is_empty() {
                String::new()
            } else {
                format!(": {message}")
            };
            println!("  task {task_key}: {result}{msg}");
        }
    }
}

/// Exit status after Ctrl-C left a run going.
use crate::interrupt::INTERRUPTED;

/// How long a cancelled run is waited for to say it ended.
const CANCEL_WAIT: Duration = Duration::from_secs(300);

/// Ctrl-C while following a run: stop following it, and cancel it when asked to (or with
/// --auto-approve), so it is never left running without a word.
async fn interrupted(
    runner: &dyn brickform_databricks::run::Runner,
    client: &brickform_databricks::client::Client,
    started: &brickform_databricks::run::Started,
    args: &Args,
    on: &(dyn Fn(Progress) + Send + Sync),
) -> Outcome {
    println!();
    let cancel = args.auto_approve
        || {
            if std::io::stdin().is_terminal() {
                print!(
                    "Interrupt received. Cancel {} {}? It goes on otherwise.\n  Only 'yes' will be accepted to cancel.\n\n  Enter a value: ",
                    args.address, started.id
                );
                let _ = std::io::stdout().flush();
                let mut line = String::new();
                std::io::stdin().lock().read_line(&mut line).is_ok() && line.trim() == "yes"
            } else {
                false
            }
        };
    if !cancel {
        eprintln!(
            "Interrupted: {}: {} goes on in the workspace; brickform no longer follows it (cancel it with --auto-approve when interrupting, or in the workspace).",
            args.address, started.id
        );
        return Err(Failure::reported_with(INTERRUPTED));
    }
    println!("{}: cancelling {}...", args.address, started.id);
    runner.cancel(client, started).await?;
    let outcome = runner.wait(client, started, CANCEL_WAIT, on).await?;
    fail!(
        "{}: {} was cancelled; it ended {}",
        args.address,
        outcome.id,
        outcome.result
    );
}

/// `--cancel`: cancels the run asked for, or every run of the object that is going, and
/// (unless --no-wait) waits for them to end. Nothing to cancel is a failure, so a script
/// can tell.
async fn cancel_runs(
    runner: &dyn brickform_databricks::run::Runner,
    client: &brickform_databricks::client::Client,
    id: &str,
    args: &Args,
    run: Option<u64>,
    on: &(dyn Fn(Progress) + Send + Sync),
) -> Outcome {
    let run = run.map(|r| r.to_string());
    let going = runner
        .active(client, &args.address, id, run.as_deref())
        .await?;
    if going.is_empty() {
        fail!(
            "{}: no run of it is going; there is nothing to cancel.",
            args.address
        );
    }
    for started in &going {
        println!("{}: cancelling {}...", args.address, started.message);
        runner.cancel(client, started).await?;
    }
    if args.no_wait {
        return Ok(ExitCode::SUCCESS);
    }
    let mut all = true;
    for started in &going {
        let outcome = runner.wait(client, started, CANCEL_WAIT, on).await?;
        println!(
            "{}: run {} ended {}.",
            args.address, outcome.id, outcome.result
        );
        // A run may have ended on its own before the cancel reached it.
        all &= outcome.result == "CANCELED";
    }
    if !all {
        fail!(
            "{}: not every run was cancelled: some ended before the cancel reached them.",
            args.address
        );
    }
    Ok(ExitCode::SUCCESS)
}

pub async fn exec(ctx: &Ctx, args: Args) -> Outcome {
    let target = Target::find(ctx, &args).await?;
    let (runner, client, id) = (target.runner.as_ref(), &target.client, &target.id);
    let req = RunRequest {
        params: args.params.clone(),
        update: UpdateRequest {
            full_refresh: args.full_refresh,
            refresh_selection: args.refresh.clone(),
            validate_only: args.validate_only,
        },
    };
    if let Some(ask) = runner.confirmation(&args.address, &req)
        && !args.auto_approve
    {
        confirmed(&ask)?;
    }
    let on = progress_printer();
    if let Some(run) = args.cancel {
        return cancel_runs(runner, client, id, &args, run, &on).await;
    }
    let started = match args.repair {
        Some(run) => {
            let run = run.map(|r| r.to_string());
            runner
                .repair(client, &args.address, id, run.as_deref(), &req)
                .await?
        }
        None => runner.start(client, &args.address, id, &req).await?,
    };
    println!("{}: {}", args.address, started.message);
    if args.no_wait {
        return Ok(ExitCode::SUCCESS);
    }
    let interrupted_by_user = crate::interrupt::graceful();
    let outcome = tokio::select! {
        outcome = runner.wait(client, &started, args.timeout, &on) => outcome?,
        () = interrupted_by_user.cancelled() => {
            return interrupted(runner, client, &started, &args, &on).await;
        }
    };
    if std::io::stdout().is_terminal() {
        println!();
    }
    ended(&args.address, &started, outcome)
}

/// The object run: its runner, the client of the workspace it is in, its id, and the
/// providers kept running while it is followed (the local workspace among them).
struct Target {
    runner: Arc<dyn Runner>,
    client: Client,
    id: String,
    _reading: Reading,
}

impl Target {
    /// The managed object at the address, with the workspace of the provider configuration
    /// it belongs to (an aliased one's when it was made through one). The kind says whether
    /// and how its objects run.
    async fn find(ctx: &Ctx, args: &Args) -> Result<Target, Failure> {
        let r = Reading::open(ctx, &args.vars).await?;
        let env = &r.env;
        let Some(doc) = &r.doc else {
            fail!("there is no state for environment \"{env}\"; apply the configuration first.");
        };
        // The command line's address, read once here: a text that is no address is refused
        // saying why.
        let addr = brickform_state::InstanceAddr::parse(&args.address)
            .map_err(|e| Failure::from(anyhow::anyhow!("{e}")))?;
        let Some(resource) = doc.get(&addr) else {
            fail!(
                "{} is not in the state of environment \"{env}\". `brickform state list` shows what is.",
                args.address
            );
        };
        let engine = r.engine();
        context::check(&engine.configure(doc).await, &r.config)?;
        let databricks = engine
            .registry_for(&resource.provider)
            .providers
            .iter()
            .find_map(|p| p.as_any()?.downcast_ref::<DatabricksProvider>())
            .unwrap_or(&r.providers.databricks);
        let client = databricks.shared().client().said()?;
        let Some(runner) = databricks.runner(resource.type_name()) else {
            fail!(
                "{} is a {}; only jobs and pipelines can be run.",
                args.address,
                resource.type_name()
            );
        };
        let id = resource.id.clone();
        drop(engine);
        Ok(Target {
            runner,
            client,
            id,
            _reading: r,
        })
    }
}

/// Asks the runner's question on a terminal; refuses without one.
fn confirmed(ask: &Confirmation) -> Result<(), Failure> {
    if !std::io::stdin().is_terminal() {
        fail!(
            "{}; confirm with --auto-approve when not running in a terminal.",
            ask.why
        );
    }
    print!(
        "{}\n  Only 'yes' will be accepted to confirm.\n\n  Enter a value: ",
        ask.prompt
    );
    let _ = std::io::stdout().flush();
    let mut line = String::new();
    if std::io::stdin().lock().read_line(&mut line).is_err() || line.trim() != "yes" {
        println!("\nRun cancelled.");
        return Err(Failure::reported());
    }
    Ok(())
}

/// How the run ended: a failure names the run, its result and message (and a repair's
/// re-run tasks); a success says what succeeded.
fn ended(address: &str, started: &Started, outcome: RunOutcome) -> Outcome {
    // What a repair did: which run it mended, and the tasks it re-ran.
    let (what, rerun) = match &started.repair {
        Some(r) => (
            format!("repair {} of run {}", r.repair_id, outcome.id),
            format!("; it re-ran {}", outcome.rerun.join(", ")),
        ),
        None => (outcome.id.clone(), String::new()),
    };
    if !outcome.succeeded {
        let url = outcome.url.map(|u| format!("\n  {u}")).unwrap_or_default();
        fail!(
            "{address}: {what} ended {}{}{rerun}{url}",
            outcome.result,
            if outcome.message.is_empty() {
                String::new()
            } else {
                format!(": {}", outcome.message)
            }
        );
    }
    if started.repair.is_some() {
        println!("{address}: {what} succeeded ({}){rerun}.", outcome.result);
    } else {
        println!(
            "{address}: {} {} succeeded ({}).",
            if outcome.tasks.is_empty() {
                "update"
            } else {
                "run"
            },
            outcome.id,
            outcome.result
        );
    }
    Ok(ExitCode::SUCCESS)
}
