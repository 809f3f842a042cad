//! `brickform console`: try expressions against the configuration and its state, as
//! `terraform console` does. The state is only read: no lock is taken, nothing is written,
//! and no provider is called (a state kept in a volume is read through the workspace).

mod format;
mod lines;

use crate::args::VarArgs;
use crate::backend::BackendSpec;
use crate::context::{self, Ctx, Providers};
use crate::diag;
use crate::failure::{Failure, Outcome};
use anyhow::anyhow;
use brickform_core::diagnostics::{Diagnostic, Diagnostics};
use brickform_core::engine::Engine;
use brickform_core::engine::console::{Evaluated, Scope};
use brickform_core::engine::inputs::Variables;
use brickform_core::lang::load::Config;
use brickform_core::source::{FileId, SourceFile, SourceMap};
use brickform_state::{Backend, LocalBackend, StateDocument};
use std::io::{IsTerminal, Write};
use std::process::ExitCode;
use std::sync::Arc;

/// The variable options of `plan`, without `--input`: the console never asks for a value.
#[derive(clap::Args)]
pub struct Args {
    /// Set a variable: --var name=value (repeatable).
    #[arg(long = "var", value_name = "NAME=VALUE")]
    vars: Vec<String>,
    /// Read variables from an HCL file (repeatable).
    #[arg(long = "var-file", value_name = "FILE")]
    var_files: Vec<std::path::PathBuf>,
}

pub async fn exec(ctx: &Ctx, args: Args) -> Outcome {
    let config = context::load(ctx)?;
    let env = context::environment(ctx, &config)?;
    // A required variable with no value is unknown, as in `terraform console`: nothing is
    // asked, since the lines that follow on standard input are expressions.
    let given = VarArgs {
        vars: args.vars,
        var_files: args.var_files,
        input: false,
    };
    let vars = context::variables(&config, &given, &env, true)?;
    let state = read_state(ctx, &config, &vars, &env).await?;
    let registry = context::registry();
    let engine = Engine::new(&config, &registry, &vars, &env);
    let (scope, diags) = engine.console(&state);
    context::print_diags(&diags, &config);
    if diags.has_errors() {
        let note = Diagnostic::warning(
            "Due to the problems above, some expressions may produce unexpected results.",
        );
        context::print_diags(&note.into(), &config);
    }
    let interactive = std::io::stdin().is_terminal();
    let failed = converse(&scope, interactive).await?;
    // A script learns that an expression failed; at the prompt the user has seen it.
    if failed && !interactive {
        return Err(Failure::reported());
    }
    Ok(ExitCode::SUCCESS)
}

/// The selected environment's state as last saved (empty when there is none), read
/// without its lock.
async fn read_state(
    ctx: &Ctx,
    config: &Config,
    vars: &Variables,
    env: &str,
) -> Result<StateDocument, Failure> {
    let spec = context::backend_spec(config)?;
    // A state on disk needs no provider; one in a volume is reached through the workspace,
    // whose connection lives as long as `_providers`.
    let (backend, _providers): (Arc<dyn Backend>, Option<Providers>) = match spec {
        BackendSpec::Local => (Arc::new(LocalBackend::new(&ctx.dir)), None),
        _ => {
            let providers = Providers::start(ctx, config, env).await?;
            let backend = providers.backend(&spec, ctx, config, vars, env).await?;
            (backend, Some(providers))
        }
    };
    context::require_known(ctx, config, env, backend.as_ref()).await?;
    let doc = backend
        .load(env)
        .await
        .map_err(|e| anyhow!("cannot read the state of environment \"{env}\": {e}"))?;
    Ok(doc.unwrap_or_else(|| StateDocument::new(env)))
}

/// Evaluates each line until `exit` or the end of the input; says whether one failed.
async fn converse(scope: &Scope, interactive: bool) -> Result<bool, Failure> {
    let mut input = lines::spawn();
    let mut failed = false;
    let mut number = 0usize;
    loop {
        if interactive {
            print!("> ");
            std::io::stdout().flush()?;
        }
        let Some(line) = input.recv().await else {
            // Ctrl-D: the shell's prompt starts on a line of its own.
            if interactive {
                println!();
            }
            break;
        };
        number += 1;
        let text = match line.map_err(|e| anyhow!("cannot read standard input: {e}"))? {
            lines::Line::Text(t) => t,
            lines::Line::TooLong => {
                failed = true;
                let d = Diagnostic::error("Expression too long").detail(format!(
                    "Line {number} is longer than {} MiB, the longest expression the console reads.",
                    lines::MAX_LINE_BYTES >> 20
                ));
                diag::print(&d.into(), &SourceMap::new());
                continue;
            }
        };
        let text = text.trim();
        if text.is_empty() {
            continue;
        }
        if text == "exit" {
            break;
        }
        match scope.evaluate(text, FileId(0)) {
            Ok(Evaluated::Value(v)) => println!("{}", format::render(&v)),
            Ok(Evaluated::Sensitive) => println!("{}", format::SENSITIVE),
            Err(d) => {
                failed = true;
                let name = if interactive {
                    "<console>".to_string()
                } else {
                    format!("<stdin line {number}>")
                };
                diag::print(&Diagnostics::from(*d), &source(name, text));
            }
        }
    }
    Ok(failed)
}

/// The line as the source a diagnostic shows (file 0), with control characters replaced
/// by placeholders of the same length in bytes, so spans still fit and what was typed or
/// piped (binary bytes, escape sequences) does not act on the terminal.
fn source(name: String, text: &str) -> SourceMap {
    let shown: String = text
        .chars()
        .map(|c| match c {
            '\t' => c,
            c if c.is_control() && c.len_utf8() == 1 => '?',
            c if c.is_control() => '\u{bf}',
            c => c,
        })
        .collect();
    let mut sources = SourceMap::new();
    sources.add(SourceFile::new(name.clone(), name.into(), shown));
    sources
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_shown_as_source_keeps_its_length_and_loses_its_controls() {
        let text = "\u{1b}[2J\u{85}x\t\u{0}";
        let sources = source("<console>".into(), text);
        let shown = sources.get(FileId(0)).map(|f| f.text.to_string());
        assert_eq!(shown.as_deref(), Some("?[2J\u{bf}x\t?"));
        assert_eq!(shown.map(|s| s.len()), Some(text.len()));
    }
}
