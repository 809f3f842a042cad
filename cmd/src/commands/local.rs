//! `brickform local serve`: run the local workspace as a server.

use crate::context::{self, Ctx};
use crate::failure::{Outcome, fail};
use brickform_emulator::{Emulator, EmulatorConfig, Timings};
use clap::Subcommand;
use std::io::Write;
use std::process::ExitCode;
use std::time::Duration;

#[derive(clap::Args)]
pub struct Args {
    #[command(subcommand)]
    command: LocalCommand,
}

#[derive(Subcommand)]
enum LocalCommand {
    /// Serve the local workspace over HTTP on loopback.
    Serve(ServeArgs),
}

#[derive(clap::Args)]
struct ServeArgs {
    /// Port to listen on (0 picks a free one; the chosen URL is printed).
    #[arg(long, default_value_t = 8765)]
    port: u16,
    /// Directory where the workspace is persisted (same format as `.brickform/local`).
    #[arg(long)]
    data: Option<std::path::PathBuf>,
    /// Latency added to every request, in milliseconds.
    #[arg(long, default_value_t = 0)]
    latency_ms: u64,
    /// Accept only this bearer token (by default any non-empty token is accepted).
    #[arg(long)]
    token: Option<String>,
    /// Time each pipeline update state lasts (QUEUED … RUNNING), in milliseconds.
    #[arg(long)]
    update_step_ms: Option<u64>,
    /// Time a job run is PENDING before its first task, in milliseconds.
    #[arg(long)]
    run_setup_ms: Option<u64>,
    /// Time each job task takes, in milliseconds.
    #[arg(long)]
    task_ms: Option<u64>,
    /// The user every request acts as (owner and creator of what it makes), so two
    /// developers sharing one workspace can be played one after the other on the same data.
    #[arg(long)]
    user: Option<String>,
    /// Create the workspace without what a new Databricks workspace starts with (the
    /// catalog `main`); a workspace already saved under --data is served as it is.
    #[arg(long)]
    empty: bool,
}

pub async fn exec(ctx: &Ctx, args: Args) -> Outcome {
    match args.command {
        LocalCommand::Serve(mut a) => {
            // `--local` names the workspace the other commands use with it: serve that one
            // (serving an empty one instead would look as if everything had gone).
            if ctx.local {
                if a.data.is_some() {
                    fail!("--local serves .brickform/local; leave out --data, or --local");
                }
                a.data = Some(context::local_dir(&ctx.dir));
            }
            Ok(serve(a).await?)
        }
    }
}

async fn serve(a: ServeArgs) -> anyhow::Result<ExitCode> {
    let d = Timings::default();
    let ms = |v: Option<u64>, default: Duration| v.map_or(default, Duration::from_millis);
    let timings = Timings {
        update_step: ms(a.update_step_ms, d.update_step),
        run_setup: ms(a.run_setup_ms, d.run_setup),
        task: ms(a.task_ms, d.task),
    };
    let d_user = EmulatorConfig::default().user_name;
    let (mut behaviours, normalise_seed) = context::local_behaviours()?;
    if a.empty {
        behaviours.set(brickform_emulator::Behaviour::NewWorkspaceMain, false);
    }
    let config = EmulatorConfig {
        behaviours,
        normalise_seed,
        timings,
        port: a.port,
        data_dir: a.data,
        latency: Duration::from_millis(a.latency_ms),
        tokens: a.token.map(|t| vec![t]),
        user_name: a.user.unwrap_or(d_user),
        ..EmulatorConfig::default()
    };
    let emu = Emulator::start(config).await?;
    // The first stdout line is the contract with scripts and tests that start us with `--port 0`.
    let mut out = std::io::stdout().lock();
    writeln!(out, "Listening on {}", emu.url())?;
    out.flush()?;
    drop(out);
    if let Some(dir) = emu.data_dir() {
        eprintln!("Workspace persisted in {}", dir.display());
    }
    wait_for_signal().await?;
    eprintln!("Stopping the local workspace");
    emu.shutdown().await;
    Ok(ExitCode::SUCCESS)
}

/// Ctrl-C (the first one, see `interrupt`) or SIGTERM: the workspace stops cleanly.
#[cfg(unix)]
async fn wait_for_signal() -> anyhow::Result<()> {
    use tokio::signal::unix::{SignalKind, signal};
    let interrupted = crate::interrupt::graceful();
    let mut term = signal(SignalKind::terminate())?;
    tokio::select! {
        () = interrupted.cancelled() => {}
        _ = term.recv() => {}
    }
    Ok(())
}

#[cfg(not(unix))]
async fn wait_for_signal() -> anyhow::Result<()> {
    crate::interrupt::graceful().cancelled().await;
    Ok(())
}
