//! Benchmark (issue 13): load, validate and plan (`--refresh=false`) generated configurations
//! of 1,000, 10,000 and 100,000 resource instances through a test-only provider, reporting
//! wall time and peak memory after validate and after plan, and the time per tenfold (×10
//! when the cost is linear). Each size runs in a child process so its peak memory is its own.
//!
//! Then one block of instances that depends on another of the same size (each instance of
//! one reads an instance of the other, so each waits for the whole other block, as a
//! dependency names a resource as a whole): the order of the changes must not cost one
//! edge per pair.
//!
//! Run with `cargo bench -p brickform-core --bench plan_scale`.

#![allow(clippy::unwrap_used, clippy::expect_used)] // a benchmark may panic

use async_trait::async_trait;
use brickform_core::engine::inputs::{VarInputs, resolve};
use brickform_core::engine::{Engine, PlanRequest};
use brickform_core::lang::load::load_dir;
use brickform_core::provider::*;
use brickform_core::value::Object;
use brickform_state::StateDocument;
use std::sync::Arc;
use std::time::Instant;

struct Thing(Schema);
#[async_trait]
impl ResourceKind for Thing {
    fn type_name(&self) -> &'static str {
        "bench_thing"
    }
    fn schema(&self) -> &Schema {
        &self.0
    }
    async fn create(&self, _: &OpContext, c: &Object) -> ProviderResult<Remote> {
        Ok(Remote {
            id: "x".into(),
            attrs: c.clone(),
        })
    }
    async fn read(&self, _: &OpContext, _: &str, _: &Object) -> ProviderResult<Option<Remote>> {
        Ok(None)
    }
    async fn update(
        &self,
        _: &OpContext,
        _: &str,
        _: &Object,
        c: &Object,
    ) -> ProviderResult<Remote> {
        Ok(Remote {
            id: "x".into(),
            attrs: c.clone(),
        })
    }
    async fn delete(&self, _: &OpContext, _: &str, _: &Object) -> ProviderResult<()> {
        Ok(())
    }
}

struct Bench(Schema);
#[async_trait]
impl Provider for Bench {
    fn name(&self) -> &'static str {
        "bench"
    }
    fn config_schema(&self) -> &Schema {
        &self.0
    }
    fn resource_kinds(&self) -> Vec<Arc<dyn ResourceKind>> {
        let schema = Schema::new()
            .attr(Attribute::required("name", AttrType::String).force_new())
            .attr(Attribute::optional("parent", AttrType::String))
            .attr(Attribute::optional(
                "tags",
                AttrType::Map(Box::new(AttrType::String)),
            ))
            .attr(Attribute::computed("id", AttrType::String))
            .block(BlockType::list(
                "rule",
                Schema::new().attr(Attribute::required("expr", AttrType::String)),
            ));
        vec![Arc::new(Thing(schema))]
    }
    fn data_sources(&self) -> Vec<Arc<dyn DataSource>> {
        Vec::new()
    }
    async fn configure(&self, _: &Object) -> ProviderResult<()> {
        Ok(())
    }
}

/// A configuration of `n` instances: one parent block per ten instances, each with nine
/// counted children that reference it, plus variables and locals the bodies read.
fn generate(dir: &std::path::Path, n: usize) {
    let groups = n / 10;
    let mut s = String::from(
        "variable \"env\" { default = \"dev\" }\nlocals {\n  tags = { env = var.env, team = \"data\" }\n}\n",
    );
    for g in 0..groups {
        s.push_str(&format!(
            "resource \"bench_thing\" \"p{g}\" {{\n  name = \"${{var.env}}_parent_{g}\"\n  tags = local.tags\n  rule {{ expr = \"x > {g}\" }}\n}}\n\
             resource \"bench_thing\" \"c{g}\" {{\n  count  = 9\n  name   = \"child_{g}_${{count.index}}\"\n  parent = bench_thing.p{g}.id\n  tags   = merge(local.tags, {{ index = tostring(count.index) }})\n}}\n"
        ));
    }
    std::fs::write(dir.join("main.bf.hcl"), s).unwrap();
}

/// A configuration of `n` instances: two blocks of `n / 2`, the second reading the first.
fn generate_wide(dir: &std::path::Path, n: usize) {
    let half = n / 2;
    let s = format!(
        "resource \"bench_thing\" \"p\" {{\n  count = {half}\n  name  = \"parent_${{count.index}}\"\n}}\n\
         resource \"bench_thing\" \"c\" {{\n  count  = {half}\n  name   = \"child_${{count.index}}\"\n  parent = bench_thing.p[count.index].id\n}}\n"
    );
    std::fs::write(dir.join("main.bf.hcl"), s).unwrap();
}

fn peak_rss_mb() -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
        .map(|kb| kb / 1024.0)
        .unwrap_or(0.0)
}

fn run_one(n: usize, wide: bool) {
    let dir = tempfile::tempdir().unwrap();
    if wide {
        generate_wide(dir.path(), n);
    } else {
        generate(dir.path(), n);
    }
    let mut registry = Registry::new();
    registry.register(Arc::new(Bench(Schema::new())));
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let total = Instant::now();

    let t = Instant::now();
    let (config, d) = load_dir(dir.path());
    assert!(!d.has_errors());
    let load = t.elapsed();

    let (vars, _) = resolve(&config, &VarInputs::default(), None);
    let engine = Engine::new(&config, &registry, &vars, "default");
    let t = Instant::now();
    let diags = rt.block_on(engine.validate());
    assert!(!diags.has_errors(), "{diags:?}");
    let validate = t.elapsed();
    let validate_rss = peak_rss_mb();

    let t = Instant::now();
    let state = StateDocument::new("default");
    let (planned, d) = rt.block_on(engine.plan(
        &state,
        &PlanRequest {
            refresh: false,
            ..Default::default()
        },
    ));
    assert!(!d.has_errors());
    let planned = planned.unwrap();
    assert_eq!(planned.plan.summary().add, n);
    let plan = t.elapsed();

    let total = total.elapsed();
    println!(
        "{n:>7} instances{}: load {:>7.1} ms  validate {:>7.1} ms (peak RSS {validate_rss:>6.1} MB)  plan {:>7.1} ms  total {:>7.1} ms  peak RSS {:>6.1} MB",
        if wide { " (two blocks)" } else { "" },
        load.as_secs_f64() * 1e3,
        validate.as_secs_f64() * 1e3,
        plan.as_secs_f64() * 1e3,
        total.as_secs_f64() * 1e3,
        peak_rss_mb()
    );
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if let Some(n) = args.iter().find_map(|a| a.strip_prefix("--instances=")) {
        run_one(n.parse().unwrap(), false);
        return;
    }
    if let Some(n) = args.iter().find_map(|a| a.strip_prefix("--wide=")) {
        run_one(n.parse().unwrap(), true);
        return;
    }
    let me = std::env::current_exe().unwrap();
    let runs = [1_000, 10_000, 100_000]
        .map(|n| format!("--instances={n}"))
        .into_iter()
        .chain([2_000, 6_000, 20_000].map(|n| format!("--wide={n}")));
    for arg in runs {
        let status = std::process::Command::new(&me).arg(arg).status().unwrap();
        assert!(status.success());
    }
}
