//! `brickform local serve`: run the local workspace as a server.

use brickform_emulator::{Emulator, EmulatorConfig};
use clap::{Args, Subcommand};
use std::io::Write;
use std::process::ExitCode;
use std::time::Duration;

#[derive(Args)]
pub struct LocalArgs {
    #[command(subcommand)]
    command: LocalCommand,
}

#[derive(Subcommand)]
enum LocalCommand {
    /// Serve the local workspace over HTTP on loopback.
    Serve(ServeArgs),
}

#[derive(Args)]
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
}

pub async fn run(args: LocalArgs) -> anyhow::Result<ExitCode> {
    match args.command {
        LocalCommand::Serve(a) => serve(a).await,
    }
}

async fn serve(a: ServeArgs) -> anyhow::Result<ExitCode> {
    let config = EmulatorConfig {
        port: a.port,
        data_dir: a.data,
        latency: Duration::from_millis(a.latency_ms),
        tokens: a.token.map(|t| vec![t]),
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

#[cfg(unix)]
async fn wait_for_signal() -> anyhow::Result<()> {
    use tokio::signal::unix::{SignalKind, signal};
    let mut term = signal(SignalKind::terminate())?;
    tokio::select! {
        r = tokio::signal::ctrl_c() => r?,
        _ = term.recv() => {}
    }
    Ok(())
}

#[cfg(not(unix))]
async fn wait_for_signal() -> anyhow::Result<()> {
    tokio::signal::ctrl_c().await?;
    Ok(())
}
