//! Benchmark: render and validate 2,000 sdp-meta flows, target under 1 s.
//!
//! One generated configuration: a CSV of 2,000 rows (cloudFiles, delta, kafka and snapshot
//! sources; bronze and silver layers; CDC, snapshot CDC, expectations with quarantine,
//! partition columns, silver transformations) turned into `sdp_meta_flow` instances with
//! `for_each` over `csvdecode(file("flows.csv"))`, and one `sdp_meta_onboarding` listing them all
//! (`values(sdp_meta_flow.t)`). Measured, each three times (median reported):
//!
//! - (a) `load_sources` + `Engine::validate`: what `brickform validate` does;
//! - (b) the same plus a plan against an empty state with `--refresh=false`, and (b') load +
//!   that plan alone: what `brickform plan` does before any network call;
//! - (c) `sdp_meta::render::render` alone on the decoded onboarding (2,000 flows), and
//!   `render::derive` (what the onboarding's `prepare_config` runs);
//! - (d) `sdp_meta::checks::check_onboarding` + 2,000 × `check_flow` alone.
//!
//! Wall and CPU time are both shown (other builds may share the cores). A first validate runs
//! through wrappers that time the kinds' hooks, to split the engine's own time from the
//! sdp_meta work; (a) and (b') also run once in a child process for their own peak RSS.
//! `--flows=N` changes the size; `--only=validate|plan --repeat=K` runs one part K times (for
//! `perf record`).
//!
//! Run with `cargo bench -p brickform-databricks --bench flows_scale`.

#![allow(clippy::unwrap_used, clippy::expect_used)] // a benchmark may panic

use async_trait::async_trait;
use brickform_core::engine::inputs::{VarInputs, resolve};
use brickform_core::engine::{Engine, PlanRequest};
use brickform_core::lang::load::{Config, load_sources};
use brickform_core::provider::{
    Finding, OpContext, ProviderResult, Registry, Remote, ResourceKind, Schema,
};
use brickform_core::value::{Object, Value};
use brickform_databricks::client::MemoryStore;
use brickform_databricks::sdp_meta::{checks, render};
use brickform_databricks::{DatabricksProvider, Options};
use brickform_state::StateDocument;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const FLOWS: usize = 2_000;
const RUNS: usize = 3;
const TARGET: Duration = Duration::from_secs(1);
const FORMATS: [&str; 4] = ["cloudFiles", "delta", "kafka", "snapshot"];
const ENTITIES: [&str; 8] = [
    "orders",
    "customers",
    "payments",
    "invoices",
    "shipments",
    "products",
    "returns",
    "events",
];
const REGIONS: [&str; 4] = ["us", "eu", "apac", "latam"];

/// The CSV the flows are read from: one row per flow.
fn csv(n: usize) -> String {
    let mut s = String::from(
        "id,group,format,source,table,keys,partition_columns,bronze_expect,silver_cdc,silver_expect,select_exp,where_clause\n",
    );
    for i in 0..n {
        let format = FORMATS[i % 4];
        let entity = ENTITIES[(i / 4) % ENTITIES.len()];
        let region = REGIONS[(i / 32) % REGIONS.len()];
        let table = format!("{entity}_{region}_{i:04}");
        let key = format!("{}_id", entity.trim_end_matches('s'));
        // Two-column keys on every seventh flow.
        let keys = if i % 7 == 0 {
            format!("{key};region")
        } else {
            key.clone()
        };
        // Snapshot flows get groups of their own, as a pre-fix build would need (V11).
        let group = if format == "snapshot" {
            format!("snap_{}", i % 5)
        } else {
            format!("{region}_{}", i % 10)
        };
        let source = match format {
            "cloudFiles" => format!("{entity}/{region}/{i:04}"),
            "kafka" => format!("{entity}.{region}.v1"),
            _ => format!("{entity}_{region}_{i:04}"),
        };
        let partitions = match i % 5 {
            0 => "ingest_date",
            1 => "region;ingest_date",
            _ => "",
        };
        // Expectations only where the layer has no AUTO CDC (V13 warns on both).
        let appends = matches!(format, "cloudFiles" | "kafka");
        let bronze_expect = appends && i % 3 != 2;
        let silver_cdc = !appends || i % 2 == 0;
        let silver_expect = !silver_cdc && i % 3 == 0;
        let select = if i % 2 == 1 {
            format!("*;upper({key}) AS {key}_norm;current_timestamp() AS _silver_at")
        } else {
            String::new()
        };
        let where_clause = if i % 4 == 3 {
            format!("{key} IS NOT NULL")
        } else {
            String::new()
        };
        s.push_str(&format!(
            "{i:04},{group},{format},{source},{table},{keys},{partitions},{},{},{},{select},{where_clause}\n",
            u8::from(bronze_expect),
            u8::from(silver_cdc),
            u8::from(silver_expect),
        ));
    }
    s
}

const CONFIG: &str = r#"
provider "databricks" {
  host = "local"
}

locals {
  env      = "dev"
  flows    = { for row in csvdecode(file("flows.csv")) : row.id => row }
  cdc_cols = ["_change_type", "_commit_version", "_commit_timestamp"]
  bronze_reader = {
    cloudFiles = { "cloudFiles.format" = "json", "cloudFiles.inferColumnTypes" = "true" }
    delta      = { readChangeFeed = "true" }
    kafka      = { failOnDataLoss = "false" }
    snapshot   = {}
  }
}

resource "sdp_meta_flow" "t" {
  for_each        = local.flows
  data_flow_id    = each.key
  data_flow_group = each.value.group
  source_system   = each.value.format == "kafka" ? "kafka" : "lakehouse"

  source {
    format          = each.value.format
    source_path     = each.value.format == "cloudFiles" ? "/Volumes/bench/raw/landing/${each.value.source}/" : null
    table           = contains(["delta", "snapshot"], each.value.format) ? "bench.raw.${each.value.source}" : null
    snapshot_format = each.value.format == "snapshot" ? "delta" : null

    dynamic "kafka" {
      for_each = each.value.format == "kafka" ? [each.value.source] : []
      content {
        bootstrap_servers = "broker-1:9092,broker-2:9092"
        subscribe         = kafka.value
        options           = { startingOffsets = "earliest" }
      }
    }
  }

  bronze {
    database          = "bench.bronze"
    table             = each.value.table
    reader_options    = local.bronze_reader[each.value.format]
    table_properties  = { "delta.enableChangeDataFeed" = "true" }
    partition_columns = each.value.partition_columns == "" ? null : split(";", each.value.partition_columns)

    dynamic "cdc_apply_changes" {
      for_each = each.value.format == "delta" ? [1] : []
      content {
        keys               = split(";", each.value.keys)
        sequence_by        = "_commit_version"
        scd_type           = "1"
        apply_as_deletes   = "_change_type = 'delete'"
        except_column_list = local.cdc_cols
      }
    }

    dynamic "apply_changes_from_snapshot" {
      for_each = each.value.format == "snapshot" ? [1] : []
      content {
        keys     = split(";", each.value.keys)
        scd_type = "2"
      }
    }

    dynamic "expectations" {
      for_each = each.value.bronze_expect == "1" ? [1] : []
      content {
        expect               = { valid_key = "${split(";", each.value.keys)[0]} IS NOT NULL" }
        expect_or_drop       = { not_future = "_ingested_at <= current_timestamp()" }
        expect_or_quarantine = { bad_key = "${split(";", each.value.keys)[0]} IS NULL" }
      }
    }

    dynamic "quarantine" {
      for_each = each.value.bronze_expect == "1" ? [1] : []
      content {
        database   = "bench.bronze"
        table      = "${each.value.table}_quarantine"
        partitions = each.value.partition_columns == "" ? null : split(";", each.value.partition_columns)
      }
    }
  }

  silver {
    database          = "bench.silver"
    table             = each.value.table
    reader_options    = contains(["delta", "snapshot"], each.value.format) ? { readChangeFeed = "true" } : null
    partition_columns = each.value.partition_columns == "" ? null : split(";", each.value.partition_columns)
    select_exp        = each.value.select_exp == "" ? null : split(";", each.value.select_exp)
    where_clause      = each.value.where_clause == "" ? null : [each.value.where_clause]

    dynamic "cdc_apply_changes" {
      for_each = each.value.silver_cdc == "1" ? [1] : []
      content {
        keys               = split(";", each.value.keys)
        sequence_by        = contains(["delta", "snapshot"], each.value.format) ? "_commit_version" : "_ingested_at"
        scd_type           = "1"
        except_column_list = contains(["delta", "snapshot"], each.value.format) ? local.cdc_cols : null
      }
    }

    dynamic "expectations" {
      for_each = each.value.silver_expect == "1" ? [1] : []
      content {
        expect_or_drop = { valid_key = "${split(";", each.value.keys)[0]} IS NOT NULL" }
      }
    }
  }
}

resource "sdp_meta_onboarding" "all" {
  volume_path      = "/Volumes/bench/ops/conf"
  env              = local.env
  flows            = values(sdp_meta_flow.t)
  database         = "bench.sdp_meta_specs"
  # A wheel with the #266 / #268 fixes, so snapshot and other bronze flows may share the
  # runner that passes the snapshot function.
  sdp_meta_version = "0.1.0+pr267"
  dependency       = "/Volumes/bench/ops/wheels/databricks_labs_sdp_meta-0.1.0+pr267-py3-none-any.whl"

  runner {
    bronze_snapshot_function = true
  }
}
"#;

fn registry() -> Registry {
    let mut registry = Registry::new();
    registry.register(Arc::new(DatabricksProvider::new(Options {
        // A personal access token for a local address: configuring the provider makes no
        // request, and an offline plan makes none either.
        local: Some(("http://127.0.0.1:9".into(), "t".into())),
        secrets: Arc::new(MemoryStore::new()),
        env: Arc::new(|_: &str| None),
    })));
    registry
}

/// Wraps a kind, keeps a copy of every configuration its `check` sees (decoded, before
/// `prepare_config`: the inputs of measurements (c) and (d)) and times its hooks, for the
/// breakdown of one validate.
struct Capture {
    inner: Arc<dyn ResourceKind>,
    seen: Mutex<Vec<Object>>,
    check_time: Mutex<Duration>,
    prepare_time: Mutex<Duration>,
}

#[async_trait]
impl ResourceKind for Capture {
    fn type_name(&self) -> &'static str {
        self.inner.type_name()
    }
    fn schema(&self) -> &Schema {
        self.inner.schema()
    }
    fn prepare_config(
        &self,
        config: &mut Object,
        base_dir: &Path,
    ) -> Result<(), brickform_core::provider::PrepareError> {
        let t = Instant::now();
        let r = self.inner.prepare_config(config, base_dir);
        *self.prepare_time.lock().unwrap() += t.elapsed();
        r
    }
    fn plan_computed(&self, config: &Object) -> Object {
        self.inner.plan_computed(config)
    }
    fn check(&self, config: &Object) -> Vec<Finding> {
        self.seen.lock().unwrap().push(config.clone());
        let t = Instant::now();
        let r = self.inner.check(config);
        *self.check_time.lock().unwrap() += t.elapsed();
        r
    }
    async fn create(&self, ctx: &OpContext, config: &Object) -> ProviderResult<Remote> {
        self.inner.create(ctx, config).await
    }
    async fn read(
        &self,
        ctx: &OpContext,
        id: &str,
        prior: &Object,
    ) -> ProviderResult<Option<Remote>> {
        self.inner.read(ctx, id, prior).await
    }
    async fn update(
        &self,
        ctx: &OpContext,
        id: &str,
        prior: &Object,
        config: &Object,
    ) -> ProviderResult<Remote> {
        self.inner.update(ctx, id, prior, config).await
    }
    async fn delete(&self, ctx: &OpContext, id: &str, prior: &Object) -> ProviderResult<()> {
        self.inner.delete(ctx, id, prior).await
    }
}

fn capture(registry: &mut Registry, type_name: &'static str) -> Arc<Capture> {
    let c = Arc::new(Capture {
        inner: registry.kinds[type_name].clone(),
        seen: Mutex::new(Vec::new()),
        check_time: Mutex::new(Duration::ZERO),
        prepare_time: Mutex::new(Duration::ZERO),
    });
    registry.kinds.insert(type_name, c.clone());
    c
}

fn load(dir: &Path) -> Config {
    let (config, d) = load_sources(
        dir,
        vec![(
            "main.bf.hcl".into(),
            dir.join("main.bf.hcl"),
            CONFIG.to_string(),
        )],
    );
    assert!(!d.has_errors(), "{}", d.render_plain(&config.sources));
    config
}

/// What `brickform validate` does: load, resolve variables, validate. Asserts zero errors.
fn validate(rt: &tokio::runtime::Runtime, dir: &Path, registry: &Registry) -> Config {
    let config = load(dir);
    let (vars, vd) = resolve(&config, &VarInputs::default(), None);
    assert!(!vd.has_errors(), "{}", vd.render_plain(&config.sources));
    let engine = Engine::new(&config, registry, &vars, "bench");
    let diags = rt.block_on(engine.validate());
    assert!(
        !diags.has_errors(),
        "{}",
        diags.render_plain(&config.sources)
    );
    config
}

/// A plan of `config` against an empty state without refresh (`--refresh=false`): every
/// instance is a create. Returns the size of the planned onboarding JSON.
fn plan(rt: &tokio::runtime::Runtime, config: &Config, registry: &Registry, n: usize) -> usize {
    let (vars, _) = resolve(config, &VarInputs::default(), None);
    let engine = Engine::new(config, registry, &vars, "bench");
    let state = StateDocument::new("bench");
    let (planned, d) = rt.block_on(engine.plan(
        &state,
        &PlanRequest {
            refresh: false,
            ..Default::default()
        },
    ));
    assert!(!d.has_errors(), "{}", d.render_plain(&config.sources));
    let planned = planned.unwrap();
    assert_eq!(planned.plan.summary().add, n + 1);
    planned
        .plan
        .changes
        .iter()
        .find(|c| c.type_name() == "sdp_meta_onboarding")
        .and_then(|c| c.after.as_ref())
        .and_then(|a| a.0.get("onboarding_json"))
        .and_then(Value::as_str)
        .map_or(0, str::len)
}

fn peak_rss_mb() -> Option<f64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
        .map(|kb| kb / 1024.0)
}

/// CPU time (user + system) of this process so far, in clock ticks of 10 ms: with other
/// builds sharing the two cores, wall time alone overstates the work.
fn cpu_time() -> Option<Duration> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // Fields after the command name, which is in parentheses and may hold spaces.
    let rest = &stat[stat.rfind(')')? + 2..];
    let f: Vec<&str> = rest.split(' ').collect();
    let ticks: u64 = f.get(11)?.parse::<u64>().ok()? + f.get(12)?.parse::<u64>().ok()?;
    Some(Duration::from_millis(ticks * 10))
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// Wall and CPU times of each run.
struct Runs {
    wall: Vec<Duration>,
    cpu: Vec<Option<Duration>>,
}

impl Runs {
    fn median(&self) -> Duration {
        let mut v = self.wall.clone();
        v.sort();
        v[v.len() / 2]
    }
    fn median_cpu(&self) -> Option<Duration> {
        let mut v: Vec<Duration> = self.cpu.iter().copied().collect::<Option<_>>()?;
        v.sort();
        Some(v[v.len() / 2])
    }
    fn report(&self, label: &str, extra: &str) {
        let m = self.median();
        let all: Vec<String> = self.wall.iter().map(|d| format!("{:.0}", ms(*d))).collect();
        let cpu = self
            .median_cpu()
            .map(|c| format!("  cpu {:>6.0} ms", ms(c)))
            .unwrap_or_default();
        println!(
            "  {label:<46} {:>7.1} ms  {:>5.2}× target{}{cpu}  runs [{}] ms{extra}",
            ms(m),
            m.as_secs_f64() / TARGET.as_secs_f64(),
            if m > TARGET { " OVER" } else { "     " },
            all.join(", ")
        );
    }
}

/// Runs `f` RUNS times.
fn measure(mut f: impl FnMut()) -> Runs {
    let mut runs = Runs {
        wall: Vec::new(),
        cpu: Vec::new(),
    };
    for _ in 0..RUNS {
        let cpu = cpu_time();
        let t = Instant::now();
        f();
        runs.wall.push(t.elapsed());
        runs.cpu
            .push(cpu.and_then(|c| Some(cpu_time()?.saturating_sub(c))));
    }
    runs
}

fn main() {
    // `cargo bench` passes `--bench`; `--flows=N` changes the size (to check the scaling).
    let n = std::env::args()
        .find_map(|a| a.strip_prefix("--flows=").map(|v| v.parse().unwrap()))
        .unwrap_or(FLOWS);
    let dir = tempfile::tempdir().unwrap();
    let csv = csv(n);
    std::fs::write(dir.path().join("flows.csv"), &csv).unwrap();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    // `--only=validate|plan [--repeat=K]`: only (a) or (b'), K times, then the peak RSS of
    // this process; the parent runs each once this way so the peak is that run's own, and
    // it is the way to profile one part (`perf record … --only=validate --repeat=20`).
    if let Some(only) = std::env::args().find_map(|a| a.strip_prefix("--only=").map(String::from)) {
        let repeat = std::env::args()
            .find_map(|a| a.strip_prefix("--repeat=").map(|v| v.parse().unwrap()))
            .unwrap_or(1);
        let registry = registry();
        for _ in 0..repeat {
            match only.as_str() {
                "validate" => drop(validate(&rt, dir.path(), &registry)),
                "plan" => drop(plan(&rt, &load(dir.path()), &registry, n)),
                other => panic!("--only={other}: validate or plan"),
            }
        }
        println!("{:.0}", peak_rss_mb().unwrap_or(0.0));
        return;
    }
    println!(
        "{n} sdp_meta_flow instances (for_each over csvdecode(file(…)) of a {:.0} KB CSV; formats {}) + 1 sdp_meta_onboarding",
        csv.len() as f64 / 1024.0,
        FORMATS.join(", ")
    );
    if let Ok(l) = std::fs::read_to_string("/proc/loadavg") {
        let cores = std::thread::available_parallelism().map_or(0, usize::from);
        println!(
            "load average {} on {cores} cores (other builds may be running: compare wall and cpu)",
            l.split(' ').take(3).collect::<Vec<_>>().join(" ")
        );
    }

    // One validate through timing wrappers: the validity check with every finding shown, the
    // inputs of (c) and (d), and where the time goes.
    let mut capturing = registry();
    let flow_kind = capture(&mut capturing, "sdp_meta_flow");
    let onboarding_kind = capture(&mut capturing, "sdp_meta_onboarding");
    let t = Instant::now();
    let config = load(dir.path());
    let load_time = t.elapsed();
    let (vars, _) = resolve(&config, &VarInputs::default(), None);
    let engine = Engine::new(&config, &capturing, &vars, "bench");
    let t = Instant::now();
    let diags = rt.block_on(engine.validate());
    let validate_time = t.elapsed();
    let warnings = diags.iter().count();
    assert!(
        !diags.has_errors(),
        "{}",
        diags.render_plain(&config.sources)
    );
    println!("validate: 0 errors, {warnings} warnings");
    if warnings > 0 {
        println!("{}", diags.render_plain(&config.sources));
    }
    let flows = std::mem::take(&mut *flow_kind.seen.lock().unwrap());
    let onboarding = onboarding_kind.seen.lock().unwrap().pop().unwrap();
    assert_eq!(flows.len(), n);
    assert_eq!(
        onboarding
            .get("flows")
            .and_then(Value::as_list)
            .map(<[Value]>::len),
        Some(n)
    );
    let flow_checks = *flow_kind.check_time.lock().unwrap();
    let onboarding_check = *onboarding_kind.check_time.lock().unwrap();
    let onboarding_prepare = *onboarding_kind.prepare_time.lock().unwrap();
    let t = Instant::now();
    drop(engine);
    drop(config);
    let drop_time = t.elapsed();
    drop(capturing);
    let kinds = flow_checks + onboarding_check + onboarding_prepare;
    println!("\nwhere one validate's time goes (single run, through the wrappers):");
    println!(
        "  load_sources (parse)                     {:>7.1} ms",
        ms(load_time)
    );
    println!(
        "  Engine::validate                         {:>7.1} ms",
        ms(validate_time)
    );
    println!(
        "    sdp_meta_flow check ({n} × check_flow)   {:>7.1} ms",
        ms(flow_checks)
    );
    println!(
        "    sdp_meta_onboarding check                {:>7.1} ms",
        ms(onboarding_check)
    );
    println!(
        "    sdp_meta_onboarding prepare_config       {:>7.1} ms  (render::derive)",
        ms(onboarding_prepare)
    );
    println!(
        "    the engine itself (evaluate, decode, diff, drop the plan)  {:>7.1} ms",
        ms(validate_time.saturating_sub(kinds))
    );
    println!(
        "  dropping the loaded configuration        {:>7.1} ms",
        ms(drop_time)
    );

    let registry = registry();
    let a = measure(|| {
        validate(&rt, dir.path(), &registry);
    });
    let mut plan_part = Vec::new();
    let mut planned_json = 0;
    let b = measure(|| {
        let config = validate(&rt, dir.path(), &registry);
        let t = Instant::now();
        planned_json = plan(&rt, &config, &registry, n);
        plan_part.push(t.elapsed());
    });
    let b_plan = Runs {
        wall: plan_part,
        cpu: vec![None],
    };
    // A fresh process also pays for growing its heap (page faults), as every `brickform`
    // command does.
    let own_peak = |only: &str| -> String {
        let t = Instant::now();
        let out = std::process::Command::new(std::env::current_exe().unwrap())
            .arg(format!("--flows={n}"))
            .arg(format!("--only={only}"))
            .output()
            .unwrap();
        let took = t.elapsed();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        format!(
            "  fresh process {:.0} ms, peak RSS {} MB",
            ms(took),
            String::from_utf8_lossy(&out.stdout).trim()
        )
    };
    let a_peak = own_peak("validate");
    let b_cli_peak = own_peak("plan");
    let b_cli = measure(|| {
        let config = load(dir.path());
        plan(&rt, &config, &registry, n);
    });
    let mut rendered = None;
    let c = measure(|| rendered = Some(render::render(&onboarding).unwrap()));
    let mut derived = 0;
    let c_derive = measure(|| derived = render::derive(&onboarding).unwrap().len());
    let mut findings = 0;
    let d = measure(|| {
        let mut found = checks::check_onboarding(&onboarding).len();
        for f in &flows {
            found += checks::check_flow(f).len();
        }
        findings = found;
    });
    let rendered = rendered.unwrap();
    assert!(derived > 0);

    println!("\nmedian of {RUNS} runs (target 1 s):");
    a.report("(a) load + validate", &a_peak);
    b.report("(b) load + validate + plan", "");
    b_plan.report("    of which the plan (--refresh=false)", "");
    b_cli.report("(b') load + plan (= `brickform plan`)", &b_cli_peak);
    c.report(&format!("(c) render::render ({n} flows)"), "");
    c_derive.report("    render::derive (what prepare_config runs)", "");
    d.report(
        &format!("(d) check_onboarding + {n} × check_flow"),
        &format!("  {findings} findings"),
    );
    let files_bytes: usize = rendered.files.values().map(String::len).sum();
    println!(
        "\nrendered onboarding JSON: {:.1} KB ({} rows; {:.1} KB in the plan); {} files, {:.1} KB in all",
        rendered.onboarding_json.len() as f64 / 1024.0,
        rendered.rows.len(),
        planned_json as f64 / 1024.0,
        rendered.files.len(),
        files_bytes as f64 / 1024.0
    );
}
