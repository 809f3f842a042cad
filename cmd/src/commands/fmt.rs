//! `brickform fmt`: rewrite configuration files in canonical format.

use crate::context::Ctx;
use crate::diag;
use crate::failure::{Failure, Outcome};
use std::process::ExitCode;

#[derive(clap::Args)]
pub struct Args {
    /// Only check; exit 3 when files need formatting.
    #[arg(long)]
    check: bool,
}

/// Exit status when a file cannot be read or parsed (as `terraform fmt` gives).
const UNREADABLE: u8 = 2;

/// Exit status of `--check` when a file needs formatting.
const NEEDS_FORMATTING: u8 = 3;

pub fn exec(ctx: &Ctx, args: Args) -> Outcome {
    let (files, diags) = brickform_core::lang::load::read_config_files(&ctx.dir);
    diag::print(&diags, &Default::default());
    let mut changed = Vec::new();
    let mut failed = diags.has_errors();
    for file in files {
        let (f, text) = (file.path, file.text);
        match brickform_core::lang::fmt::format_source(&text) {
            Ok(out) if out != text => {
                changed.push(f.clone());
                if !args.check {
                    std::fs::write(&f, out)?;
                }
            }
            Ok(_) => {}
            Err(e) => {
                eprintln!("Error: {}: {e}", f.display());
                failed = true;
            }
        }
    }
    for f in &changed {
        println!(
            "{}",
            f.file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default()
        );
    }
    if failed {
        return Err(Failure::reported_with(UNREADABLE));
    }
    Ok(if args.check && !changed.is_empty() {
        ExitCode::from(NEEDS_FORMATTING)
    } else {
        ExitCode::SUCCESS
    })
}
