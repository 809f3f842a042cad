//! `brickform promote --from dev --to prod`: the plan for the target environment, and next to
//! it every place where the two environments' resolved configurations differ, with what
//! explains each difference. A difference nothing declared explains is flagged.

use crate::args::PlanArgs;
use crate::context::{self, Ctx};
use crate::failure::{Failure, Outcome};
use brickform_core::diagnostics::Diagnostic;
use brickform_core::engine::Engine;
use brickform_core::engine::inputs::{self, Variables};
use brickform_core::engine::promote::{Difference, Explanation, Side, compare};
use brickform_core::lang::environment::{self, EnvMode};
use brickform_core::lang::load::Config;
use brickform_core::plan::render_text;
use brickform_core::value::Value;
use std::process::ExitCode;

#[derive(clap::Args)]
pub struct Args {
    /// The environment the configuration was tried in (e.g. dev).
    #[arg(long)]
    from: String,
    /// The environment to plan (e.g. prod).
    #[arg(long)]
    to: String,
    #[command(flatten)]
    plan: PlanArgs,
    /// Exit 0 with no changes, 2 with changes, 1 on error.
    #[arg(long = "detailed-exitcode")]
    detailed_exitcode: bool,
}

fn show(v: &Option<Value>) -> String {
    match v {
        None => "(absent)".into(),
        Some(Value::Null) => "null".into(),
        Some(v) => {
            let s = v.to_json().to_string();
            if s.chars().count() > 60 {
                format!("{}…", s.chars().take(59).collect::<String>())
            } else {
                s
            }
        }
    }
}

fn table(from: &str, to: &str, diffs: &[Difference]) -> String {
    if diffs.is_empty() {
        return format!("\nThe resolved configurations of {from} and {to} do not differ.\n");
    }
    let rows: Vec<[String; 5]> = diffs
        .iter()
        .map(|d| {
            [
                d.address.to_string(),
                if d.field.is_empty() {
                    "(the resource)".into()
                } else {
                    d.field.clone()
                },
                show(&d.from),
                show(&d.to),
                d.explained_by
                    .iter()
                    .map(Explanation::to_string)
                    .collect::<Vec<_>>()
                    .join("; "),
            ]
        })
        .collect();
    let head = ["RESOURCE", "FIELD", from, to, "EXPLAINED BY"].map(str::to_string);
    let mut width = [0usize; 5];
    for r in rows.iter().chain(std::iter::once(&head)) {
        for (w, c) in width.iter_mut().zip(r) {
            *w = (*w).max(c.chars().count());
        }
    }
    let line = |r: &[String; 5]| {
        let cells: Vec<String> = r
            .iter()
            .zip(width)
            .enumerate()
            .map(|(i, (c, w))| {
                if i == 4 {
                    c.clone()
                } else {
                    format!("{c:<w$}")
                }
            })
            .collect();
        format!("  {}\n", cells.join("  ").trim_end())
    };
    let mut out = format!("\nDifferences between {from} and {to} (resolved configuration):\n\n");
    out.push_str(&line(&head));
    for r in &rows {
        out.push_str(&line(r));
    }
    let unexplained = diffs.iter().filter(|d| d.unexplained()).count();
    if unexplained > 0 {
        out.push_str(&format!(
            "\nWarning: {unexplained} difference{} that no variable, preset or environment setting explains. Check {} before promoting.\n",
            if unexplained == 1 { "" } else { "s" },
            if unexplained == 1 { "it" } else { "them" }
        ));
    }
    out
}

pub async fn exec(ctx: &Ctx, args: Args) -> Outcome {
    let (from, to) = (args.from.as_str(), args.to.as_str());
    let to_ctx = ctx.in_environment(to);
    let config = context::load(&to_ctx)?;
    for env in [from, to] {
        declared(&config, env)?;
    }
    // The target's plan, exactly as `plan --env TO` makes it.
    let (s, planned, _) = super::plan::fresh(&to_ctx, &args.plan).await?;
    // Who would get the development presets: the user the target's provider acts as.
    let mut user = None;
    for provider in &s.env.providers.registry.providers {
        if let Ok(Some(u)) = provider.current_user().await {
            user = Some(u);
            break;
        }
    }
    print!(
        "{}",
        render_text::render(&planned.plan, &to_ctx.text_options())
    );
    let diffs = differences(&config, &args, &s.env.vars, user.as_deref()).await?;
    print!("{}", table(from, to, &diffs));
    Ok(if args.detailed_exitcode && planned.plan.has_changes() {
        ExitCode::from(super::plan::HAS_CHANGES)
    } else {
        ExitCode::SUCCESS
    })
}

/// Refuses an environment the configuration does not declare: promotion compares declared
/// environments, so a name is checked even when there are none.
fn declared(config: &Config, env: &str) -> Result<(), Failure> {
    let checked = if config.environments.is_empty() {
        Err(Box::new(Diagnostic::error(format!(
            "There is no environment \"{env}\" in the configuration"
        ))
        .detail("promote compares two environments that the configuration declares with environment blocks.")))
    } else {
        environment::select(config, Some(env))
    };
    if let Err(d) = checked {
        context::check(&(*d).into(), config)?;
    }
    Ok(())
}

/// Both environments' resolved configurations, compared (the target's with the variables
/// its plan used), with the development presets of `user`.
async fn differences(
    config: &Config,
    args: &Args,
    to_vars: &Variables,
    user: Option<&str>,
) -> Result<Vec<Difference>, Failure> {
    let (from, to) = (args.from.as_str(), args.to.as_str());
    let registry = context::registry();
    let inputs_from = context::var_inputs(&args.plan.vars, false)?;
    let (from_vars, d) = inputs::resolve(config, &inputs_from, Some(from));
    context::check(&d, config)?;
    let from_engine = Engine::new(config, &registry, &from_vars, from);
    let to_engine = Engine::new(config, &registry, to_vars, to);
    if from_engine.settings.mode == Some(EnvMode::Development) && user.is_none() {
        eprintln!(
            "Warning: environment \"{from}\" is in development mode but the current user is unknown; its presets are left out of the comparison."
        );
    }
    let (fp, fnotes, fd) = from_engine.resolve_offline(user).await;
    let (tp, tnotes, td) = to_engine.resolve_offline(user).await;
    let (Some(fp), Some(tp)) = (fp, tp) else {
        context::print_diags(&fd, config);
        context::print_diags(&td, config);
        return Err(Failure::reported());
    };
    let is_computed = |type_name: &str, attr: &str| {
        registry
            .kind(type_name)
            .and_then(|k| k.schema().attribute(attr).map(|a| a.is_computed_only()))
            .unwrap_or(false)
    };
    Ok(compare(
        config,
        &is_computed,
        &Side {
            planned: &fp,
            vars: &from_vars.values,
            presets: &fnotes,
        },
        &Side {
            planned: &tp,
            vars: &to_vars.values,
            presets: &tnotes,
        },
    ))
}
