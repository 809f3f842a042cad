//! `brickform output [NAME]`: the output values kept in state.

use crate::context::{Ctx, StateAccess};
use crate::failure::{Outcome, fail};
use brickform_core::value::Value;
use brickform_state::StateDocument;
use std::process::ExitCode;

#[derive(clap::Args)]
pub struct Args {
    name: Option<String>,
    #[arg(long)]
    json: bool,
    #[arg(long)]
    raw: bool,
}

pub async fn exec(ctx: &Ctx, args: Args) -> Outcome {
    let doc = StateAccess::open(ctx)
        .await?
        .load()
        .await?
        .unwrap_or_else(|| StateDocument::new("default"));
    print(&doc, args.name, args.json, args.raw)
}

/// Prints one output (`name`) or all of them; sensitive values are never printed.
pub fn print(doc: &StateDocument, name: Option<String>, json: bool, raw: bool) -> Outcome {
    if let Some(n) = name {
        let Some(o) = doc.outputs().get(&n) else {
            fail!(
                "Output \"{n}\" not found. The output variable requested could not be found in the state. Apply the configuration first, or check the name."
            );
        };
        let Some(v) = o.value() else {
            fail!("Output \"{n}\" is sensitive; its value is not stored in state.");
        };
        if raw {
            match v {
                serde_json::Value::String(s) => println!("{s}"),
                serde_json::Value::Number(_) | serde_json::Value::Bool(_) => println!("{v}"),
                _ => fail!(
                    "Unsupported value for raw output: only strings, numbers and bools can be printed with --raw."
                ),
            }
        } else if json {
            println!("{}", serde_json::to_string_pretty(v)?);
        } else {
            println!("{}", Value::from_json(v));
        }
        return Ok(ExitCode::SUCCESS);
    }
    if json {
        let m: serde_json::Map<String, serde_json::Value> = doc
            .outputs()
            .iter()
            .map(|(k, o)| {
                (
                    k.clone(),
                    serde_json::json!({"sensitive": o.sensitive(), "value": o.value()}),
                )
            })
            .collect();
        println!("{}", serde_json::to_string_pretty(&m)?);
        return Ok(ExitCode::SUCCESS);
    }
    if !doc.outputs().is_empty() {
        println!("Outputs:\n");
    }
    for (k, o) in doc.outputs() {
        match o.value() {
            Some(v) if !o.sensitive() => println!("{k} = {}", Value::from_json(v)),
            _ => println!("{k} = <sensitive>"),
        }
    }
    Ok(ExitCode::SUCCESS)
}
