//! Every enumerated attribute of every kind, data source and the provider block — found by
//! walking the schemas, so an attribute declared tomorrow is covered too — accepts each of
//! its values and rejects values outside them where they are written, through the decoder
//! `validate` and `plan` use. The wrong values are generated from the allowed ones (a
//! letter dropped, a suffix, the wrong case, a pseudo-random word), not picked by hand.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use brickform_core::lang::decode::Decoder;
use brickform_core::lang::eval::{Evaluator, Roots};
use brickform_core::provider::{AttrType, Attribute, Registry, Schema};
use brickform_core::source::FileId;
use brickform_core::value::{Value, quote};
use brickform_databricks::client::MemoryStore;
use brickform_databricks::{DatabricksProvider, Options};
use std::sync::Arc;

struct NoRoots;
impl Roots for NoRoots {
    fn root(&self, _: &str) -> Option<&Value> {
        None
    }
}

/// `(where, schema, attribute)` for every configurable attribute with allowed values.
fn enumerated(path: &str, schema: &Schema, out: &mut Vec<(String, Schema, Attribute)>) {
    for a in &schema.attributes {
        if a.allowed.is_some() && a.can_configure() {
            out.push((format!("{path}.{}", a.name), schema.clone(), a.clone()));
        }
    }
    for b in &schema.blocks {
        enumerated(&format!("{path}.{}", b.name), &b.schema, out);
    }
}

fn all_enumerated() -> Vec<(String, Schema, Attribute)> {
    let mut registry = Registry::new();
    registry.register(Arc::new(DatabricksProvider::new(Options {
        local: None,
        secrets: Arc::new(MemoryStore::new()),
        env: Arc::new(|_: &str| None),
    })));
    let mut out = Vec::new();
    for (name, kind) in &registry.kinds {
        enumerated(name, kind.schema(), &mut out);
    }
    for (name, ds) in &registry.data_sources {
        enumerated(&format!("data.{name}"), ds.schema(), &mut out);
    }
    for p in &registry.providers {
        enumerated(
            &format!("provider.{}", p.name()),
            p.config_schema(),
            &mut out,
        );
    }
    out
}

/// The diagnostics about `attr` when a body of `schema` sets it to `value` (HCL text).
fn value_diagnostics(
    schema: &Schema,
    attr: &Attribute,
    value: &str,
) -> Vec<(String, String, Option<String>)> {
    let literal = match attr.ty {
        AttrType::List(_) | AttrType::Set(_) => format!("[{}]", quote(value)),
        _ => quote(value),
    };
    let src = format!("{} = {literal}\n", attr.name);
    let body: hcl_edit::structure::Body = src.parse().unwrap();
    let mut ev = Evaluator::new(&NoRoots, std::path::Path::new("."));
    let (_, diags) = Decoder::new(&mut ev, FileId(0)).decode(&body, schema, Some(0..1));
    diags
        .iter()
        .filter(|d| d.summary == format!("Invalid value for {}", attr.name))
        .map(|d| {
            let span = d.span.as_ref().unwrap().range.clone();
            (src[span].to_string(), d.summary.clone(), d.hint.clone())
        })
        .collect()
}

/// Values outside the set, derived from the set itself.
fn wrong_values(allowed: &[&str], any_case: bool, seed: &mut u64) -> Vec<String> {
    let mut out = Vec::new();
    for v in allowed {
        let mut dropped = v.to_string();
        if dropped.len() > 2 {
            dropped.remove(dropped.len() / 2);
            out.push(dropped);
        }
        out.push(format!("{v}X"));
        if !any_case {
            let flipped: String = v
                .chars()
                .map(|c| {
                    if c.is_ascii_uppercase() {
                        c.to_ascii_lowercase()
                    } else {
                        c.to_ascii_uppercase()
                    }
                })
                .collect();
            out.push(flipped);
        }
    }
    // A pseudo-random word (xorshift), seeded so every run sees the same ones.
    *seed ^= *seed << 13;
    *seed ^= *seed >> 7;
    *seed ^= *seed << 17;
    out.push(format!("zq{:x}", *seed));
    out.retain(|w| {
        !allowed
            .iter()
            .any(|a| *a == w || (any_case && a.eq_ignore_ascii_case(w)))
    });
    out
}

#[test]
fn every_enumerated_attribute_rejects_values_outside_its_set() {
    let found = all_enumerated();
    // The examples are among them: the walk reaches nested blocks.
    for expected in [
        "databricks_volume.volume_type",
        "databricks_connection.connection_type",
        "databricks_job.task.run_if",
        "databricks_job.task.depends_on.outcome",
        "databricks_job.schedule.pause_status",
        "databricks_job.performance_target",
        "databricks_ingestion_pipeline.object.table.table_configuration.scd_type",
        "databricks_pipeline.channel",
        "databricks_pipeline.edition",
        "databricks_pipeline.restart_window.days_of_week",
    ] {
        assert!(
            found.iter().any(|(p, _, _)| p == expected),
            "{expected} declares no allowed values"
        );
    }
    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    let mut checked = 0;
    for (path, schema, attr) in &found {
        let allowed = attr.allowed.unwrap();
        for v in allowed.values {
            assert_eq!(
                value_diagnostics(schema, attr, v),
                vec![],
                "{path} rejects its own value {v:?}"
            );
            if allowed.any_case {
                let lower = v.to_lowercase();
                assert_eq!(
                    value_diagnostics(schema, attr, &lower),
                    vec![],
                    "{path} takes any case but rejects {lower:?}"
                );
            }
        }
        for w in wrong_values(allowed.values, allowed.any_case, &mut seed) {
            let diags = value_diagnostics(schema, attr, &w);
            assert_eq!(
                diags.len(),
                1,
                "{path} = {w:?} was not rejected once: {diags:?}"
            );
            let (at, _, hint) = &diags[0];
            assert_eq!(at, &quote(&w), "{path} = {w:?}: not located at the value");
            if !allowed.any_case
                && let Some(v) = allowed.values.iter().find(|v| v.eq_ignore_ascii_case(&w))
            {
                assert_eq!(
                    hint.as_deref(),
                    Some(format!("did you mean {}?", quote(v)).as_str()),
                    "{path} = {w:?}: the case-fixed value is suggested"
                );
            }
            checked += 1;
        }
    }
    assert!(checked > 500, "only {checked} wrong values were tried");
}
