//! `brickform fmt [PATH…]`: rewrite configuration files in canonical format, as
//! `terraform fmt` does: the configuration directory by default, or the files and
//! directories given; `-` formats standard input to standard output.

use crate::context::Ctx;
use crate::diag;
use crate::failure::{Failure, Outcome};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[derive(clap::Args)]
pub struct Args {
    /// Files (*.bf.hcl, *.bfvars.hcl) or directories (their *.bf.hcl files) to format;
    /// `-` reads standard input and writes the result to standard output. Default: the
    /// configuration directory.
    paths: Vec<PathBuf>,
    /// Only check; exit 3 when files need formatting.
    #[arg(long)]
    check: bool,
    /// Show what formatting changes, as a unified diff.
    #[arg(long)]
    diff: bool,
    /// Also format the configuration files of every subdirectory (modules), hidden ones
    /// (.brickform, .git) aside.
    #[arg(long)]
    recursive: bool,
}

/// Exit status when a file cannot be read or parsed: an error like any other (2 is kept
/// for `--detailed-exitcode`'s "there are changes", which scripts act on).
const UNREADABLE: u8 = 1;

/// Exit status of `--check` when a file needs formatting.
const NEEDS_FORMATTING: u8 = 3;

/// What `fmt` formats besides a directory's configuration files, when named.
const FORMATTABLE: &[&str] = &[brickform_core::lang::load::CONFIG_SUFFIX, ".bfvars.hcl"];

/// One text to format: where it came from (as shown) and where it goes.
struct Source {
    shown: String,
    /// `None`: standard input, written back to standard output.
    path: Option<PathBuf>,
    text: String,
}

pub fn exec(ctx: &Ctx, args: Args) -> Outcome {
    let mut failed = false;
    let mut sources = Vec::new();
    let targets = if args.paths.is_empty() {
        vec![ctx.dir.clone()]
    } else {
        args.paths.clone()
    };
    for target in &targets {
        failed |= !collect(target, args.paths.is_empty(), args.recursive, &mut sources);
    }
    let mut changed = false;
    for s in sources {
        let formatted = match brickform_core::lang::fmt::format_source(&s.text) {
            Ok(out) => out,
            Err(e) => {
                eprintln!("Error: {}: {e}", s.shown);
                failed = true;
                continue;
            }
        };
        let differs = formatted != s.text;
        changed |= differs;
        let mut stdout = std::io::stdout().lock();
        match &s.path {
            // Standard input: the result is the output, unless only checking or diffing.
            None if !args.check && !args.diff => stdout.write_all(formatted.as_bytes())?,
            _ if differs => writeln!(stdout, "{}", s.shown)?,
            _ => {}
        }
        if differs && args.diff {
            let diff = similar::TextDiff::from_lines(&s.text, &formatted);
            let old = format!("old/{}", s.shown);
            let new = format!("new/{}", s.shown);
            write!(stdout, "{}", diff.unified_diff().header(&old, &new))?;
        }
        if let (Some(path), true, false) = (&s.path, differs, args.check) {
            std::fs::write(path, formatted)?;
        }
    }
    if failed {
        return Err(Failure::reported_with(UNREADABLE));
    }
    Ok(if args.check && changed {
        ExitCode::from(NEEDS_FORMATTING)
    } else {
        ExitCode::SUCCESS
    })
}

/// Adds what `target` names to `into`; false when something could not be read (reported).
/// `default` is the configuration directory, whose files are shown by their path in it;
/// `recursive` takes the directories below a directory too.
fn collect(target: &Path, default: bool, recursive: bool, into: &mut Vec<Source>) -> bool {
    if target == Path::new("-") {
        let mut text = String::new();
        if let Err(e) = std::io::stdin().read_to_string(&mut text) {
            eprintln!("Error: reading standard input: {e}");
            return false;
        }
        into.push(Source {
            shown: "<stdin>".into(),
            path: None,
            text,
        });
        return true;
    }
    if target.is_dir() {
        let base = default.then_some(target);
        let mut ok = collect_dir(target, base, into);
        if recursive {
            let mut below = Vec::new();
            directories_under(target, &mut below);
            for dir in below {
                ok &= collect_dir(&dir, base, into);
            }
        }
        return ok;
    }
    let name = target.to_string_lossy();
    if !FORMATTABLE.iter().any(|suffix| name.ends_with(suffix)) {
        eprintln!(
            "Error: {name}: only configuration files ({}) and variable files (*.bfvars.hcl) are formatted",
            brickform_core::lang::load::CONFIG_SUFFIX
        );
        return false;
    }
    match brickform_core::limits::read_text_file(target) {
        Ok(text) => {
            into.push(Source {
                shown: name.into_owned(),
                path: Some(target.to_path_buf()),
                text,
            });
            true
        }
        Err(why) => {
            eprintln!("Error: reading {name}: {why}");
            false
        }
    }
}

/// The configuration files of one directory. Shown by their path in `base` when given (the
/// configuration directory), else by their path as named.
fn collect_dir(dir: &Path, base: Option<&Path>, into: &mut Vec<Source>) -> bool {
    let (files, diags) = brickform_core::lang::load::read_config_files(dir);
    diag::print(&diags, &Default::default());
    for f in files {
        let shown = match base {
            Some(b) => f
                .path
                .strip_prefix(b)
                .unwrap_or(&f.path)
                .display()
                .to_string(),
            None => f.path.display().to_string(),
        };
        into.push(Source {
            shown,
            path: Some(f.path),
            text: f.text,
        });
    }
    !diags.has_errors()
}

/// Every directory below `dir`, depth first in name order, without hidden ones (state,
/// the local workspace, version control) and without following links (a link back up
/// would never end).
fn directories_under(dir: &Path, into: &mut Vec<std::path::PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut dirs: Vec<std::path::PathBuf> = entries
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
        .filter(|e| !e.file_name().to_string_lossy().starts_with('.'))
        .map(|e| e.path())
        .collect();
    dirs.sort();
    for d in dirs {
        into.push(d.clone());
        directories_under(&d, into);
    }
}
