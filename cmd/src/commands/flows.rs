//! `brickform flows import FILE`: an existing sdp-meta onboarding file as `sdp_meta_flow`
//! configuration, printed (or written with `--out`).

use crate::failure::{Outcome, fail};
use anyhow::Context as _;
use brickform_databricks::sdp_meta::import;
use clap::Subcommand;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[derive(clap::Args)]
pub struct Args {
    #[command(subcommand)]
    command: FlowsCommand,
}

#[derive(Subcommand)]
enum FlowsCommand {
    /// Print sdp_meta_flow configuration equivalent to an onboarding file (.json, .yml, .yaml).
    Import(ImportArgs),
}

#[derive(clap::Args)]
struct ImportArgs {
    /// The onboarding file.
    file: PathBuf,
    /// Which env's keys to import when the file has several (bronze_database_<ENV>, …);
    /// detected otherwise. (The global --env names a brickform environment.)
    #[arg(long, value_name = "ENV")]
    onboarding_env: Option<String>,
    /// Where the volume files the onboarding file names (expectations, silver
    /// transformations) are found locally: /Volumes/c/s/v/x.json is read as
    /// DIR/Volumes/c/s/v/x.json. Without it they are looked for next to the onboarding file.
    #[arg(long, value_name = "DIR")]
    files_root: Option<PathBuf>,
    /// Write the configuration to this file instead of printing it.
    #[arg(long)]
    out: Option<PathBuf>,
}

pub fn exec(args: Args) -> Outcome {
    match args.command {
        FlowsCommand::Import(a) => import_file(a),
    }
}

/// Finds a referenced volume file locally: under `--files-root`, else by the longest tail of
/// its path that exists next to the onboarding file (`/Volumes/c/s/v/conf/dqe/x.json` found
/// as `conf/dqe/x.json` or `dqe/x.json` beside it), as a checked-out bundle lays them out.
fn local_copy(path: &str, files_root: Option<&Path>, beside: &Path) -> Option<PathBuf> {
    if let Some(root) = files_root {
        let p = root.join(path.trim_start_matches('/'));
        return p.is_file().then_some(p);
    }
    let parts: Vec<&str> = path.split('/').filter(|s| !s.is_empty()).collect();
    (0..parts.len())
        .map(|skip| beside.join(parts[skip..].join("/")))
        .find(|p| p.is_file())
}

fn import_file(a: ImportArgs) -> Outcome {
    let text = brickform_core::limits::read_text_file(&a.file)
        .map_err(|why| anyhow::anyhow!("reading {}: {why}", a.file.display()))?;
    let beside = a
        .file
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from("."));
    let files_root = a.files_root.clone();
    let read = move |path: &str| {
        local_copy(path, files_root.as_deref(), &beside)
            .and_then(|p| brickform_core::limits::read_text_file(&p).ok())
    };
    let name = a.file.to_string_lossy().into_owned();
    let imported = match import::import(&text, &name, a.onboarding_env.as_deref(), &read) {
        Ok(i) => i,
        Err(e) => fail!("{e}"),
    };
    for w in &imported.warnings {
        eprintln!("Warning: {w}");
    }
    match &a.out {
        Some(out) => {
            std::fs::write(out, &imported.hcl)
                .with_context(|| format!("writing {}", out.display()))?;
            eprintln!("Wrote {} (env {}).", out.display(), imported.env);
        }
        None => print!("{}", imported.hcl),
    }
    Ok(ExitCode::SUCCESS)
}
