//! `brickform validate`: check the configuration without any network access.

use crate::args::VarArgs;
use crate::backend::BackendSpec;
use crate::context::{self, Ctx};
use crate::diag;
use crate::failure::{Failure, Outcome};
use brickform_core::diagnostics::Diagnostics;
use brickform_core::engine::Engine;
use brickform_core::engine::inputs::{self, VarInputs};
use brickform_core::lang::load::Config;
use brickform_core::lang::load::load_dir;
use brickform_core::provider::Registry;
use std::process::ExitCode;

#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    vars: VarArgs,
    /// Machine-readable output.
    #[arg(long)]
    json: bool,
}

pub async fn exec(ctx: &Ctx, args: Args) -> Outcome {
    // Every problem is reported, so loading errors do not stop here: what loaded is checked.
    let (config, diags) = load_dir(&ctx.dir);
    let registry = context::registry();
    let inputs = context::var_inputs(&args.vars, true)?;
    let mut diags = check(
        &config,
        diags,
        &registry,
        ctx.environment.as_deref(),
        &inputs,
    )
    .await;
    diags.sort();
    if args.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&diag::to_json(&diags, &config.sources))?
        );
    } else {
        context::print_diags(&diags, &config);
        if !diags.has_errors() {
            println!("Success! The configuration is valid.");
        }
    }
    if diags.has_errors() {
        return Err(Failure::reported());
    }
    Ok(ExitCode::SUCCESS)
}

/// What `validate` reports of a loaded configuration, `diags` what loading it found: the
/// environment, the variables, every block against its kind's schema, the backend. The
/// language server (`brickform lsp`) checks an editor's buffers with it too.
pub async fn check(
    config: &Config,
    mut diags: Diagnostics,
    registry: &Registry,
    environment: Option<&str>,
    inputs: &VarInputs,
) -> Diagnostics {
    let env = brickform_core::lang::environment::select(config, environment);
    if let Err(d) = &env {
        diags.push((**d).clone());
    }
    if let (false, Ok(env)) = (diags.has_errors(), env) {
        let (vars, vd) = inputs::resolve(config, inputs, Some(&env));
        diags.extend(vd);
        let engine = Engine::new(config, registry, &vars, &env);
        diags.extend(engine.validate().await);
        if let Err(d) = BackendSpec::of(config) {
            diags.extend(d);
        }
    }
    diags
}
