//! `brickform run ADDR`: start a job run or a pipeline update of a managed resource and
//! follow it to its end.

use crate::ops::{self, Ctx};
use anyhow::anyhow;
use brickform_core::engine::Engine;
use brickform_databricks::run::{self as runner, Progress, UpdateRequest};
use clap::Args;
use std::io::{BufRead, IsTerminal, Write};
use std::process::ExitCode;
use std::time::Duration;

#[derive(Args)]
pub struct RunArgs {
    /// A managed job or pipeline, e.g. databricks_job.nightly.
    address: String,
    /// Job parameter NAME=VALUE (repeatable).
    #[arg(long = "param", value_name = "NAME=VALUE")]
    params: Vec<String>,
    /// Start it and return without waiting.
    #[arg(long = "no-wait")]
    no_wait: bool,
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
    /// Give up waiting after this many seconds.
    #[arg(long = "timeout", default_value_t = 3600)]
    timeout: u64,
    #[command(flatten)]
    vars: crate::VarArgs,
}

fn progress_printer() -> impl Fn(Progress) + Send + Sync {
    let live = std::io::stdout().is_terminal();
    move |p| match p {
        Progress::State { state, elapsed } => {
            if live {
                print!("\r\x1b[2K{state} [{}s elapsed]", elapsed.as_secs());
                let _ = std::io::stdout().flush();
            } else {
                println!("{state} [{}s elapsed]", elapsed.as_secs());
            }
        }
        Progress::Task {
            task_key,
            result,
            message,
        } => {
            if live {
                println!();
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

pub async fn run(ctx: &Ctx, args: RunArgs) -> anyhow::Result<ExitCode> {
    let config = match ops::load(ctx) {
        Ok(c) => c,
        Err(code) => return Ok(code),
    };
    let env = match ops::environment(ctx, &config) {
        Ok(e) => e,
        Err(code) => return Ok(code),
    };
    let vars = match ops::variables(&config, &args.vars, &env, false) {
        Ok(v) => v,
        Err(code) => return Ok(code),
    };
    let p = ops::providers(ctx, &config, &env).await?;
    let backend = ctx.backend(&config, &vars, &env, &p).await?;
    let Some(doc) = backend.load(&env).await.map_err(|e| anyhow!("{e}"))? else {
        eprintln!(
            "Error: there is no state for environment \"{env}\"; apply the configuration first."
        );
        return Ok(ExitCode::from(1));
    };
    let Some(resource) = doc.get(&args.address) else {
        eprintln!(
            "Error: {} is not in the state of environment \"{env}\". `brickform state list` shows what is.",
            args.address
        );
        return Ok(ExitCode::from(1));
    };
    let engine = Engine::new(&config, &p.registry, &vars, &env);
    let diags = engine.configure(&doc).await;
    if diags.has_errors() {
        ops::print_diags(&diags, &config);
        return Ok(ExitCode::from(1));
    }
    let client = p.databricks.shared().client().map_err(|e| anyhow!("{e}"))?;
    let timeout = Duration::from_secs(args.timeout);
    let on = progress_printer();
    let outcome = match resource.resource_type.as_str() {
        "databricks_job" => {
            let job_id: i64 = resource.id.parse().map_err(|_| {
                anyhow!(
                    "{} has a non-numeric job id {:?}",
                    args.address,
                    resource.id
                )
            })?;
            let mut params = Vec::new();
            for p in &args.params {
                let (k, v) = p
                    .split_once('=')
                    .ok_or_else(|| anyhow!("invalid --param {p:?}: expected NAME=VALUE"))?;
                params.push((k.to_string(), v.to_string()));
            }
            let run_id = runner::start_job_run(&client, job_id, &params, None).await?;
            println!("{}: started run {run_id} of job {job_id}", args.address);
            if args.no_wait {
                return Ok(ExitCode::SUCCESS);
            }
            runner::wait_job_run(&client, run_id, timeout, &on).await?
        }
        "databricks_pipeline"
        | "databricks_ingestion_pipeline"
        | "databricks_ingestion_gateway" => {
            if args.full_refresh && !args.auto_approve {
                if !std::io::stdin().is_terminal() {
                    eprintln!(
                        "Error: a full refresh recomputes every table from scratch; confirm with --auto-approve when not running in a terminal."
                    );
                    return Ok(ExitCode::from(1));
                }
                print!(
                    "A full refresh of {} recomputes every table from scratch and may take long.\n  Only 'yes' will be accepted to confirm.\n\n  Enter a value: ",
                    args.address
                );
                let _ = std::io::stdout().flush();
                let mut line = String::new();
                if std::io::stdin().lock().read_line(&mut line).is_err() || line.trim() != "yes" {
                    println!("\nRun cancelled.");
                    return Ok(ExitCode::from(1));
                }
            }
            let req = UpdateRequest {
                full_refresh: args.full_refresh,
                refresh_selection: args.refresh.clone(),
                validate_only: args.validate_only,
            };
            let update_id = runner::start_pipeline_update(&client, &resource.id, &req).await?;
            println!(
                "{}: started update {update_id} of pipeline {}",
                args.address, resource.id
            );
            if args.no_wait {
                return Ok(ExitCode::SUCCESS);
            }
            runner::wait_pipeline_update(&client, &resource.id, &update_id, timeout, &on).await?
        }
        other => {
            eprintln!(
                "Error: {} is a {other}; only jobs and pipelines can be run.",
                args.address
            );
            return Ok(ExitCode::from(1));
        }
    };
    if std::io::stdout().is_terminal() {
        println!();
    }
    if outcome.succeeded {
        println!(
            "{}: {} {} succeeded ({}).",
            args.address,
            if outcome.tasks.is_empty() {
                "update"
            } else {
                "run"
            },
            outcome.id,
            outcome.result
        );
        Ok(ExitCode::SUCCESS)
    } else {
        eprintln!(
            "Error: {}: {} ended {}{}",
            args.address,
            outcome.id,
            outcome.result,
            if outcome.message.is_empty() {
                String::new()
            } else {
                format!(": {}", outcome.message)
            }
        );
        if let Some(u) = outcome.url {
            eprintln!("  {u}");
        }
        Ok(ExitCode::from(1))
    }
}
