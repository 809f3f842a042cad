//! `brickform schema [--markdown]`: the resource kinds and data sources, from the schemas
//! they declare as data. The Markdown form is the reference in docs/resources.md.

use crate::failure::Outcome;
use brickform_core::provider::{AttrType, Nesting, Presence, Registry, Schema};
use serde_json::{Value, json};
use std::process::ExitCode;

fn presence(p: Presence) -> &'static str {
    match p {
        Presence::Required => "required",
        Presence::Optional => "optional",
        Presence::Computed => "computed",
        Presence::OptionalComputed => "optional, computed",
    }
}

fn ty(t: &AttrType) -> String {
    t.describe()
}

fn schema_json(s: &Schema) -> Value {
    let attributes: serde_json::Map<String, Value> = s
        .attributes
        .iter()
        .map(|a| {
            (
                a.name.to_string(),
                json!({
                    "type": ty(&a.ty),
                    "presence": presence(a.presence),
                    "forces_replacement": a.replace_on_change,
                    "sensitive": a.sensitive,
                    "server_default": a.server_default.as_ref().map(|v| v.to_json()),
                    "allowed_values": a.allowed.map(|al| al.values),
                    "allowed_values_any_case": a.allowed.is_some_and(|al| al.any_case),
                    "description": a.description,
                }),
            )
        })
        .collect();
    let blocks: serde_json::Map<String, Value> = s
        .blocks
        .iter()
        .map(|b| {
            let nesting = match b.nesting {
                Nesting::Single => json!("single"),
                Nesting::List if b.unordered => json!("set"),
                Nesting::List => json!("list"),
                Nesting::Keyed(k) => json!({ "keyed_by": k }),
            };
            (
                b.name.to_string(),
                json!({ "nesting": nesting, "min_items": b.min_items, "max_items": b.max_items, "forces_replacement": b.replace_on_change, "block": schema_json(&b.schema) }),
            )
        })
        .collect();
    json!({ "description": s.description, "attributes": attributes, "blocks": blocks })
}

fn markdown_body(s: &Schema, depth: usize, out: &mut String) {
    let indent = "  ".repeat(depth);
    for a in &s.attributes {
        let mut notes = vec![presence(a.presence).to_string()];
        if a.replace_on_change {
            notes.push("forces replacement".into());
        }
        if a.sensitive {
            notes.push("sensitive, write-only".into());
        }
        if let Some(d) = &a.server_default {
            notes.push(format!("default {d}"));
        }
        if let Some(al) = &a.allowed {
            let values: Vec<String> = al.values.iter().map(|v| format!("`{v}`")).collect();
            notes.push(format!(
                "one of {}{}",
                values.join(", "),
                if al.any_case { " (any case)" } else { "" }
            ));
        }
        let desc = if a.description.is_empty() {
            String::new()
        } else {
            format!(": {}", a.description)
        };
        out.push_str(&format!(
            "{indent}- `{}` ({}; {}){desc}\n",
            a.name,
            ty(&a.ty),
            notes.join("; ")
        ));
    }
    for b in &s.blocks {
        let how = match b.nesting {
            Nesting::Single => "block, at most one".to_string(),
            Nesting::List if b.unordered => "repeated block, in any order".to_string(),
            Nesting::List => "repeated block".to_string(),
            Nesting::Keyed(k) => format!("repeated block, matched by `{k}`"),
        };
        let desc = if b.description.is_empty() {
            String::new()
        } else {
            format!(": {}", b.description)
        };
        out.push_str(&format!("{indent}- `{}` ({how}){desc}\n", b.name));
        markdown_body(&b.schema, depth + 1, out);
    }
}

/// The reference of every kind and data source, in Markdown.
pub fn markdown(registry: &Registry) -> String {
    let mut out = String::from(
        "# Resource reference\n\nGenerated from the schemas the kinds declare (`brickform schema --markdown`); do not edit by hand.\n",
    );
    out.push_str("\n## Resource kinds\n");
    for (name, kind) in &registry.kinds {
        out.push_str(&format!(
            "\n### `{name}`\n\n{}\n\n",
            kind.schema().description
        ));
        markdown_body(kind.schema(), 0, &mut out);
    }
    out.push_str("\n## Data sources\n");
    for (name, ds) in &registry.data_sources {
        out.push_str(&format!(
            "\n### `data.{name}`\n\n{}\n\n",
            ds.schema().description
        ));
        markdown_body(ds.schema(), 0, &mut out);
    }
    out
}

#[derive(clap::Args)]
pub struct Args {
    #[arg(long)]
    markdown: bool,
}

pub fn exec(args: Args) -> Outcome {
    let registry = &crate::context::registry();
    if args.markdown {
        print!("{}", markdown(registry));
        return Ok(ExitCode::SUCCESS);
    }
    let resources: serde_json::Map<String, Value> = registry
        .kinds
        .iter()
        .map(|(n, k)| (n.to_string(), schema_json(k.schema())))
        .collect();
    let data: serde_json::Map<String, Value> = registry
        .data_sources
        .iter()
        .map(|(n, d)| (n.to_string(), schema_json(d.schema())))
        .collect();
    let providers: serde_json::Map<String, Value> = registry
        .providers
        .iter()
        .map(|p| (p.name().to_string(), schema_json(p.config_schema())))
        .collect();
    println!(
        "{}",
        serde_json::to_string_pretty(
            &json!({ "format_version": "1.0", "providers": providers, "resources": resources, "data_sources": data })
        )?
    );
    Ok(ExitCode::SUCCESS)
}
