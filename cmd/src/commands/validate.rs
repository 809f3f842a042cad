//! `brickform validate`: check the configuration without any network access.

use crate::args::VarArgs;
use crate::backend::BackendSpec;
use crate::context::{self, Ctx};
use crate::diag;
use crate::failure::{Failure, Outcome};
use brickform_core::engine::Engine;
use brickform_core::engine::inputs;
use brickform_core::lang::load::load_dir;
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
    let (config, mut diags) = load_dir(&ctx.dir);
    let registry = context::registry();
    let env = brickform_core::lang::environment::select(&config, ctx.environment.as_deref());
    if let Err(d) = &env {
        diags.push((**d).clone());
    }
    if let (false, Ok(env)) = (diags.has_errors(), env) {
        let inputs = context::var_inputs(&args.vars, true)?;
        let (vars, vd) = inputs::resolve(&config, &inputs, Some(&env));
        diags.extend(vd);
        let engine = Engine::new(&config, &registry, &vars, &env);
        diags.extend(engine.validate().await);
        if let Err(d) = BackendSpec::of(&config) {
            diags.extend(d);
        }
    }
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
