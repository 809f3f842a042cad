//! `brickform local serve`: run the local workspace as a server.

use clap::{Args, Subcommand};
use std::process::ExitCode;

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
        LocalCommand::Serve(_a) => {
            anyhow::bail!("the local workspace server is not built yet")
        }
    }
}
