//! What the provider benchmarks share: a local workspace with injected latency (and
//! optionally a rate limit), the engine applying, re-planning and destroying a generated
//! configuration, and the comparison of each phase with its bound
//! `max(depth × latency, calls × latency / parallelism, calls / rate limit)`, both for the
//! calls made and for the calls needed (issue 33 point 11): the calls the guarantees need
//! (one write per object, the read-back of a job or pipeline create, a volume listed again
//! just before its delete, the polls that wait for a pipeline's delete, and a read that can
//! be batched, such as `jobs/list`, counted per page), with `depth` the critical path in
//! calls. A workload states both per phase ([`Needs`]): they follow from its shape, not
//! from what the phase happened to call.
//!
//! Each phase's planning is also reported with the part of it during which no call was in
//! flight: the plan's own work on the critical path, which overlapping it with the plan's
//! reads cannot hide (taken from the client's log of each call, its end and duration).
//!
//! `BENCH_TRACE=FILE` writes every API call (its end, with its duration) to FILE with the
//! time since start, and marks each phase's start and end, for a timeline of the calls in
//! flight (`scripts/` has none: read it with any tool).

#![allow(clippy::unwrap_used, clippy::expect_used, dead_code)] // a benchmark may panic

use brickform_core::engine::apply::ApplyOptions;
use brickform_core::engine::inputs::{VarInputs, resolve};
use brickform_core::engine::{Engine, PlanRequest};
use brickform_core::lang::load::load_sources;
use brickform_core::plan::PlanMode;
use brickform_core::provider::Registry;
use brickform_databricks::client::MemoryStore;
use brickform_databricks::{DatabricksProvider, Options};
use brickform_emulator::{Emulator, EmulatorConfig};
use brickform_state::{Backend, LocalBackend, recover};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;

/// The command's allocator (cmd/src/main.rs): what is measured is what the command does.
#[cfg(unix)]
#[global_allocator]
static ALLOCATOR: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

pub const LATENCY_MS: u64 = 20;
pub const PARALLELISM: usize = 10;

/// The shape of what is measured.
pub struct Workload {
    /// The configuration applied.
    pub config: String,
    /// Objects it makes (for calls per object).
    pub objects: usize,
    /// The calls each phase needs, and its critical path in calls.
    pub apply: Needs,
    pub no_op: Needs,
    pub destroy: Needs,
}

/// What a phase cannot do without: the calls its guarantees need, and the longest chain of
/// them that must follow one another (each waits for the one before to answer).
#[derive(Clone, Copy, Debug)]
pub struct Needs {
    pub calls: usize,
    pub depth: usize,
}

impl Workload {
    pub fn needs(&self, phase: &str) -> Needs {
        match phase {
            "apply" => self.apply,
            "no-op plan" => self.no_op,
            _ => self.destroy,
        }
    }
}

pub struct Phase {
    pub name: &'static str,
    pub took: Duration,
    pub calls: usize,
    /// The part of `took` and `calls` that was planning (the rest applied the plan).
    pub plan_took: Duration,
    /// The part of `plan_took` with no call in flight.
    pub plan_idle: Duration,
    pub plan_calls: usize,
    /// Calls by endpoint, most first.
    pub endpoints: Vec<(String, usize)>,
}

pub async fn count_requests(url: &str) -> usize {
    requests(url).await.len()
}

/// The requests the local workspace logged since the last reset.
pub async fn requests(url: &str) -> Vec<serde_json::Value> {
    let log: serde_json::Value = reqwest::get(format!("{url}/__emulator/requests"))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    log["requests"].as_array().cloned().unwrap_or_default()
}

/// Calls by endpoint (`METHOD /path`, ids and names after a collection left out), most
/// first: where a phase's calls go.
pub fn by_endpoint(requests: &[serde_json::Value]) -> Vec<(String, usize)> {
    let mut counts: std::collections::BTreeMap<String, usize> = Default::default();
    for r in requests {
        let path = r["path"].as_str().unwrap_or("");
        // `/api/2.1/unity-catalog/volumes/bench.s0.v1` → `/api/2.1/unity-catalog/volumes/…`:
        // the path up to its first segment that is not a plain word (a name, an id).
        let mut shown = Vec::new();
        for (i, seg) in path.split('/').enumerate() {
            let word = seg
                .chars()
                .all(|c| c.is_ascii_lowercase() || c == '-' || c == '_');
            if i >= 3 && !word {
                shown.push("…");
                break;
            }
            shown.push(seg);
        }
        let shown = shown.join("/");
        *counts
            .entry(format!("{} {shown}", r["method"].as_str().unwrap_or("")))
            .or_default() += 1;
    }
    let mut v: Vec<_> = counts.into_iter().collect();
    v.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    v
}

pub async fn control(url: &str, path: &str, body: serde_json::Value) {
    let r = reqwest::Client::new()
        .post(format!("{url}/__emulator/{path}"))
        .json(&body)
        .send()
        .await
        .unwrap();
    assert!(
        r.status().is_success(),
        "{path}: {}",
        r.text().await.unwrap_or_default()
    );
}

/// A configuration loaded for the local workspace at `url`, in a directory of its own.
pub struct Setup {
    pub dir: tempfile::TempDir,
    registry: Registry,
    config: brickform_core::lang::load::Config,
    vars: brickform_core::engine::Variables,
}

impl Setup {
    pub fn new(url: &str, text: &str) -> Setup {
        let dir = tempfile::tempdir().unwrap();
        let mut registry = Registry::new();
        registry.register(Arc::new(DatabricksProvider::new(Options {
            local: Some((url.to_string(), "t".into())),
            secrets: Arc::new(MemoryStore::new()),
            env: Arc::new(|_: &str| None),
        })));
        let (config, d) = load_sources(
            dir.path(),
            vec![("main.bf.hcl".into(), "main.bf.hcl".into(), text.to_string())],
        );
        assert!(!d.has_errors(), "{d:?}");
        let (vars, _) = resolve(&config, &VarInputs::default(), None);
        Setup {
            dir,
            registry,
            config,
            vars,
        }
    }

    pub fn engine(&self) -> Engine<'_> {
        Engine::new(&self.config, &self.registry, &self.vars, "bench")
    }
}

/// The client's log of each call, kept as when each ended and how long it took, and with
/// `BENCH_TRACE=FILE` written to FILE, timed from the start, with the phases' marks (once
/// per process).
fn listen_to_the_client() {
    use tracing_subscriber::Layer as _;
    use tracing_subscriber::layer::SubscriberExt as _;
    use tracing_subscriber::util::SubscriberInitExt as _;
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let calls = tracing_subscriber::filter::Targets::new()
            .with_target("brickform_databricks::client", tracing::Level::DEBUG);
        let file = std::env::var_os("BENCH_TRACE").map(|path| {
            tracing_subscriber::fmt::layer()
                .with_timer(tracing_subscriber::fmt::time::uptime())
                .with_ansi(false)
                .with_writer(std::sync::Mutex::new(std::fs::File::create(path).unwrap()))
                .with_filter(tracing_subscriber::EnvFilter::new(
                    "info,brickform_databricks::client=debug,brickform_core::engine::planner=debug",
                ))
        });
        let _ = tracing_subscriber::registry()
            .with(CallTimes.with_filter(calls))
            .with(file)
            .try_init();
    });
}

/// The calls the client logged since the last [`CallTimes::clear`]: when each ended, and
/// how long it took.
static CALLS: std::sync::Mutex<Vec<(Instant, Duration)>> = std::sync::Mutex::new(Vec::new());

/// Keeps each call the client logs in [`CALLS`].
struct CallTimes;

impl CallTimes {
    fn clear() {
        CALLS.lock().unwrap().clear();
    }

    /// How much of `from..to` no call was in flight for. A call's duration is logged in
    /// whole milliseconds, so each is taken as up to a millisecond shorter than it was.
    fn idle(from: Instant, to: Instant) -> Duration {
        let mut spans: Vec<(Instant, Instant)> = CALLS
            .lock()
            .unwrap()
            .iter()
            .map(|&(end, took)| (end.checked_sub(took).unwrap_or(end).max(from), end.min(to)))
            .filter(|(start, end)| start < end)
            .collect();
        spans.sort();
        let (mut busy, mut reached) = (Duration::ZERO, from);
        for (start, end) in spans {
            let start = start.max(reached);
            if end > start {
                busy += end - start;
                reached = end;
            }
        }
        (to - from).saturating_sub(busy)
    }
}

impl<S: tracing::Subscriber> tracing_subscriber::Layer<S> for CallTimes {
    fn on_event(&self, event: &tracing::Event<'_>, _: tracing_subscriber::layer::Context<'_, S>) {
        struct Elapsed(Option<u64>);
        impl tracing::field::Visit for Elapsed {
            fn record_u64(&mut self, field: &tracing::field::Field, value: u64) {
                if field.name() == "elapsed_ms" {
                    self.0 = Some(value);
                }
            }
            fn record_debug(&mut self, _: &tracing::field::Field, _: &dyn std::fmt::Debug) {}
        }
        let mut elapsed = Elapsed(None);
        event.record(&mut elapsed);
        if let Some(ms) = elapsed.0 {
            let end = Instant::now();
            CALLS.lock().unwrap().push((end, Duration::from_millis(ms)));
        }
    }
}

pub async fn reset_requests(url: &str) {
    reqwest::Client::new()
        .delete(format!("{url}/__emulator/requests"))
        .send()
        .await
        .unwrap();
}

pub fn bound(calls: usize, depth: usize, rate_limit: Option<f64>) -> Duration {
    let lat = LATENCY_MS as f64 / 1000.0;
    let by_depth = depth as f64 * lat;
    let by_parallelism = calls as f64 * lat / PARALLELISM as f64;
    let by_rate = rate_limit.map(|r| calls as f64 / r).unwrap_or(0.0);
    Duration::from_secs_f64(by_depth.max(by_parallelism).max(by_rate))
}

/// One phase against both bounds: the one from the calls it made, and the one from the
/// calls its guarantees need (what counts: a phase that makes extra calls is not excused
/// by them), with where its calls went.
pub fn report(p: &Phase, work: &Workload, rate_limit: Option<f64>) {
    let took = p.took.as_secs_f64();
    let needs = work.needs(p.name);
    let by_calls = bound(p.calls, needs.depth, rate_limit).as_secs_f64();
    let needed = bound(needs.calls, needs.depth, rate_limit).as_secs_f64();
    println!(
        "  {:<11} {took:>6.2} s {:>5} calls ({:.2}/object)  calls made: bound {by_calls:>5.2} s  ratio {:.2}  needed {} calls, depth {}: bound {needed:>5.2} s  ratio {:.2}",
        p.name,
        p.calls,
        p.calls as f64 / work.objects as f64,
        took / by_calls.max(1e-9),
        needs.calls,
        needs.depth,
        took / needed.max(1e-9),
    );
    let shown: Vec<String> = p
        .endpoints
        .iter()
        .map(|(e, n)| format!("{n} {e}"))
        .collect();
    println!(
        "      planning {:.3} s ({:.3} s with no call in flight), {} calls; {}",
        p.plan_took.as_secs_f64(),
        p.plan_idle.as_secs_f64(),
        p.plan_calls,
        shown.join(", ")
    );
}

/// Applies, re-plans (no-op) and destroys `work`, printing each phase against its bound.
pub async fn scenario(label: &str, work: &Workload, rate_limit: Option<f64>) -> Vec<Phase> {
    listen_to_the_client();
    let mut cfg = EmulatorConfig::for_tests();
    cfg.request_log_capacity = 100_000;
    let (emu, emu_rt) = own_runtime(cfg);
    let url = emu.url();
    control(
        &url,
        "latency",
        serde_json::json!({ "fixed_ms": std::env::var("BENCH_LATENCY_MS").ok().and_then(|v| v.parse::<u64>().ok()).unwrap_or(LATENCY_MS) }),
    )
    .await;
    if let Some(r) = rate_limit {
        // Whole numbers: the control API takes burst and retry_after as integers.
        control(
            &url,
            "rate-limits",
            serde_json::json!({ "per_second": r as u64, "burst": r as u64, "retry_after": 1 }),
        )
        .await;
    }
    let setup = Setup::new(&url, &work.config);
    let engine = setup.engine();
    let dir = &setup.dir;
    let backend: Arc<dyn Backend> = Arc::new(LocalBackend::new(dir.path()));
    let mut phases = Vec::new();
    for (name, mode) in [
        ("apply", PlanMode::Normal),
        ("no-op plan", PlanMode::Normal),
        ("destroy", PlanMode::Destroy),
    ] {
        let rec = recover(backend.clone(), "bench").await.unwrap();
        let mut doc = rec.document;
        if !rec.existed {
            backend.save("bench", &mut doc).await.unwrap();
        }
        reset_requests(&url).await;
        CallTimes::clear();
        tracing::info!(phase = name, label, "phase started");
        let started = Instant::now();
        let req = PlanRequest {
            mode,
            refresh: true,
            parallelism: PARALLELISM,
            ..Default::default()
        };
        let (planned, d) = engine.plan(&doc, &req).await;
        let planned = planned.unwrap_or_else(|| panic!("{d:?}"));
        let mut took = started.elapsed();
        let plan_took = took;
        // The benchmark's own bookkeeping (a request to the local workspace's log, which
        // holds a hundred entries after a destroy's reads) is not the command's time.
        let counting = Instant::now();
        let plan_calls = count_requests(&url).await;
        let bookkeeping = counting.elapsed();
        if name == "no-op plan" {
            assert!(!planned.plan.has_changes());
            // The part of a no-op plan that is the engine's own work (no reads), to tell it
            // apart from waiting on the service.
            let local = Instant::now();
            let req = PlanRequest {
                refresh: false,
                ..req
            };
            let (offline, d) = engine.plan(&doc, &req).await;
            assert!(offline.is_some(), "{d:?}");
            println!(
                "  ({label}: no-op plan without refresh {:.3} s)",
                local.elapsed().as_secs_f64()
            );
        } else {
            let opts = ApplyOptions {
                parallelism: PARALLELISM,
                cancel: CancellationToken::new(),
                on_event: Arc::new(|_| {}),
            };
            // As the command does: the plan is freed once the state is saved, on a thread
            // of its own (`drop_later`), not before the save.
            let planned = Arc::new(planned);
            let (mut doc, report) = engine.apply(planned.clone(), doc, rec.journal, opts).await;
            tracing::info!(phase = name, "applied; saving state");
            assert!(
                report.failed.is_empty(),
                "{label} {name}: {:?}",
                report.failed
            );
            backend.save("bench", &mut doc).await.unwrap();
            took = started.elapsed().saturating_sub(bookkeeping);
            brickform_core::drop_later::drop_later(planned);
        }
        tracing::info!(
            phase = name,
            plan_ms = plan_took.as_millis() as u64,
            "phase ended"
        );
        // Taken now, when every call made while planning has ended (work a plan starts
        // ahead may outlast it) and been logged.
        let plan_idle = CallTimes::idle(started, started + plan_took);
        let log = requests(&url).await;
        phases.push(Phase {
            name,
            took,
            calls: log.len(),
            plan_took,
            plan_idle,
            plan_calls,
            endpoints: by_endpoint(&log),
        });
    }
    drop(emu);
    emu_rt.shutdown_background();
    println!("\n{label}");
    for p in &phases {
        report(p, work, rate_limit);
    }
    phases
}

/// The local workspace on a runtime of its own, as a service is apart from its client: on
/// the client's runtime, the client's planning and recording would hold up its answers.
fn own_runtime(
    cfg: EmulatorConfig,
) -> (brickform_emulator::RunningEmulator, tokio::runtime::Runtime) {
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        let emu = rt.block_on(async move { Emulator::start(cfg).await.unwrap() });
        (emu, rt)
    })
    .join()
    .unwrap()
}
