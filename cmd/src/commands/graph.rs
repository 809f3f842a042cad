//! `brickform graph`: the dependency graph as DOT, or SVG / PNG through Graphviz.

use crate::context::{self, Ctx};
use crate::failure::{Outcome, fail};
use std::io::Write;
use std::process::ExitCode;

#[derive(clap::Args)]
pub struct Args {
    #[arg(long, default_value = "dot")]
    format: String,
}

pub async fn exec(ctx: &Ctx, args: Args) -> Outcome {
    let mut config = context::load(ctx)?;
    if !config.module_calls.is_empty() {
        // The graph shows every module instance: the calls expand with the variables known
        // here (the others unknown, as validate takes them).
        let env = context::environment(ctx, &config)?;
        context::require_known_connecting(ctx, &config, &env).await?;
        let inputs = brickform_core::engine::VarInputs {
            allow_unknown: true,
            ..Default::default()
        }
        .with_process_env();
        let (vars, _) = brickform_core::engine::inputs::resolve(&config, &inputs, Some(&env));
        let d =
            brickform_core::lang::modules::expand(&mut config, &vars.values, &vars.sensitive, &env);
        context::check(&d, &config)?;
    }
    let (g, diags) = brickform_core::graph::build(&config);
    context::check(&diags, &config)?;
    let dot = g.to_dot();
    let format = args.format.as_str();
    match format {
        "dot" => print!("{dot}"),
        "svg" | "png" => {
            let child = std::process::Command::new("dot")
                .arg(format!("-T{format}"))
                .stdin(std::process::Stdio::piped())
                .stdout(std::process::Stdio::piped())
                .spawn();
            let Ok(mut child) = child else {
                fail!(
                    "rendering {format} needs Graphviz's `dot` command, which was not found on PATH. Install Graphviz (for example `apt-get install graphviz`), or use `brickform graph` (DOT text) and render it elsewhere."
                );
            };
            if let Some(mut stdin) = child.stdin.take() {
                stdin.write_all(dot.as_bytes())?;
            }
            let out = child.wait_with_output()?;
            if !out.status.success() {
                fail!("dot failed: {}", String::from_utf8_lossy(&out.stderr));
            }
            std::io::stdout().write_all(&out.stdout)?;
        }
        other => fail!("unknown graph format {other:?}; use dot, svg or png."),
    }
    Ok(ExitCode::SUCCESS)
}
