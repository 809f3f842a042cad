//! `brickform show [FILE]`: the state as configuration-like text, or a saved plan.

use crate::context::{Ctx, StateAccess};
use crate::failure::Outcome;
use crate::saved;
use brickform_core::plan::{render_json, render_text};
use brickform_core::value::Value;
use brickform_state::{ResourceMode, ResourceState};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(clap::Args)]
pub struct Args {
    file: Option<PathBuf>,
    #[arg(long)]
    json: bool,
}

pub async fn exec(ctx: &Ctx, args: Args) -> Outcome {
    if let Some(f) = args.file {
        let sp = saved::read(&f)?;
        if args.json {
            println!("{}", serde_json::to_string(&render_json::render(&sp.plan))?);
        } else {
            print!("{}", render_text::render(&sp.plan, &ctx.text_options()));
        }
        return Ok(ExitCode::SUCCESS);
    }
    let access = StateAccess::open(ctx).await?;
    let Some(doc) = access.load().await? else {
        println!("No state (environment \"{}\").", access.env);
        return Ok(ExitCode::SUCCESS);
    };
    if args.json {
        println!("{}", serde_json::to_string_pretty(&doc)?);
        return Ok(ExitCode::SUCCESS);
    }
    for r in doc.resources() {
        println!("{}", resource_text(r));
    }
    super::output::print(&doc, None, false, false)
}

/// One instance as `terraform show` and `terraform state show` print it: its address, then
/// a block with `id` first and every attribute it holds (configured or set by the service),
/// names aligned; a sensitive attribute is named, never shown.
pub fn resource_text(r: &ResourceState) -> String {
    let mut lines: Vec<(String, String)> = vec![("id".into(), brickform_core::value::quote(&r.id))];
    let mut merged = r.computed.clone();
    for (k, v) in &r.config {
        if !v.is_null() {
            merged.insert(k.clone(), v.clone());
        }
    }
    for (k, v) in &merged {
        if k == "id" || v.is_null() {
            continue;
        }
        lines.push((k.clone(), Value::from_json(v).to_string()));
    }
    for k in r.sensitive.keys() {
        lines.push((k.clone(), "(sensitive value)".into()));
    }
    let width = lines
        .iter()
        .map(|(k, _)| k.chars().count())
        .max()
        .unwrap_or(0);
    let block = match r.mode() {
        ResourceMode::Managed => "resource",
        ResourceMode::Data => "data",
    };
    let mut out = format!(
        "# {}:\n{block} \"{}\" \"{}\" {{\n",
        r.address(),
        r.type_name(),
        r.name()
    );
    for (k, v) in lines {
        out.push_str(&format!("    {k:<width$} = {v}\n"));
    }
    out.push_str("}\n");
    out
}
