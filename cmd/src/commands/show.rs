//! `brickform show [FILE]`: the state as configuration-like text, or a saved plan.

use crate::context::{Ctx, StateAccess};
use crate::failure::Outcome;
use crate::saved;
use brickform_core::plan::{render_json, render_text};
use brickform_core::value::Value;
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
            println!(
                "{}",
                serde_json::to_string_pretty(&render_json::render(&sp.plan))?
            );
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
        println!("# {}:", r.address);
        println!("resource \"{}\" \"{}\" {{", r.resource_type, r.name);
        println!("    id = {}", brickform_core::value::quote(&r.id));
        let mut merged = r.computed.clone();
        for (k, v) in &r.config {
            if !v.is_null() {
                merged.insert(k.clone(), v.clone());
            }
        }
        for (k, v) in &merged {
            if v.is_null() {
                continue;
            }
            println!("    {k} = {}", Value::from_json(v));
        }
        for k in r.sensitive.keys() {
            println!("    {k} = (sensitive value)");
        }
        println!("}}\n");
    }
    super::output::print(&doc, None, false, false)
}
