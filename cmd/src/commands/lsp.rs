//! `brickform lsp`: the language server for editors, over standard input and output (see
//! the `brickform-lsp` crate and docs/editors.md). Thin: it hands the server the schemas
//! and `validate`'s check, so an editor shows what `brickform validate` reports.

use crate::context::{self, Ctx};
use crate::failure::Outcome;
use brickform_core::engine::inputs::VarInputs;
use std::process::ExitCode;

#[derive(clap::Args)]
pub struct Args {
    /// Accepted for clients that pass it (VS Code's generic clients do); standard input and
    /// output are the only transport.
    #[arg(long, hide = true)]
    stdio: bool,
}

pub async fn exec(ctx: &Ctx, _args: Args) -> Outcome {
    let handle = tokio::runtime::Handle::current();
    let environment = ctx.environment.clone();
    // As `validate` without `--var`: variables from BRICKFORM_VAR_*, missing ones unknown.
    let inputs = VarInputs {
        allow_unknown: true,
        ..VarInputs::default()
    }
    .with_process_env();
    let registry = context::registry();
    let check = move |config: &brickform_core::lang::load::Config, diags| {
        handle.block_on(super::validate::check(
            config,
            diags,
            &registry,
            environment.as_deref(),
            &inputs,
        ))
    };
    let schemas = context::registry();
    tokio::task::spawn_blocking(move || brickform_lsp::run_stdio(schemas, Box::new(check)))
        .await
        .map_err(anyhow::Error::from)??;
    Ok(ExitCode::SUCCESS)
}
