//! The provider driven through the engine against an in-process local workspace.

#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use brickform_core::engine::apply::{ApplyOptions, ApplyReport};
use brickform_core::engine::inputs::{VarInputs, resolve};
use brickform_core::engine::{Engine, PlanRequest};
use brickform_core::lang::load::load_sources;
use brickform_core::plan::{Plan, PlanMode};
use brickform_core::provider::Registry;
use brickform_databricks::client::MemoryStore;
use brickform_databricks::{DatabricksProvider, Options};
use brickform_emulator::{Emulator, EmulatorConfig, RunningEmulator};
use brickform_state::{Backend, LocalBackend, StateDocument, recover};
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

pub struct Harness {
    pub emu: RunningEmulator,
    pub url: String,
    pub dir: tempfile::TempDir,
    registry: Registry,
}

impl Harness {
    pub async fn start() -> Harness {
        let emu = Emulator::start(EmulatorConfig::for_tests()).await.unwrap();
        let url = emu.url();
        let mut registry = Registry::new();
        registry.register(Arc::new(DatabricksProvider::new(Options {
            local: Some((url.clone(), "t".into())),
            secrets: Arc::new(MemoryStore::new()),
            env: Arc::new(|_: &str| None),
        })));
        Harness {
            emu,
            url,
            dir: tempfile::tempdir().unwrap(),
            registry,
        }
    }

    /// `src` loaded as the configuration of the harness's directory, with its variables.
    fn load(
        &self,
        src: &str,
    ) -> (
        brickform_core::lang::load::Config,
        brickform_core::engine::Variables,
    ) {
        let (config, d) = load_sources(
            self.dir.path(),
            vec![("main.bf.hcl".into(), "main.bf.hcl".into(), src.into())],
        );
        assert!(!d.has_errors(), "{}", d.render_plain(&config.sources));
        let (vars, _) = resolve(&config, &VarInputs::default(), None);
        (config, vars)
    }

    /// Plans `src` (and applies it when `apply`); returns the plan and the apply report.
    pub async fn run(&self, src: &str, mode: PlanMode, apply: bool) -> (Plan, Option<ApplyReport>) {
        self.run_between(src, mode, apply, async || {}).await
    }

    /// [`Harness::run`], with `between` done after the plan and before its apply.
    pub async fn run_between(
        &self,
        src: &str,
        mode: PlanMode,
        apply: bool,
        between: impl AsyncFnOnce(),
    ) -> (Plan, Option<ApplyReport>) {
        let (config, vars) = self.load(src);
        let engine = Engine::new(&config, &self.registry, &vars, "default");
        let backend: Arc<dyn Backend> = Arc::new(LocalBackend::new(self.dir.path()));
        let rec = recover(backend.clone(), "default").await.unwrap();
        let mut doc = rec.document;
        if !rec.existed {
            backend.save("default", &mut doc).await.unwrap();
        }
        let req = PlanRequest {
            mode,
            refresh: true,
            ..Default::default()
        };
        let (planned, d) = engine.plan(&doc, &req).await;
        let planned = planned.unwrap_or_else(|| panic!("{}", d.render_plain(&config.sources)));
        if !apply {
            return (planned.plan, None);
        }
        between().await;
        let opts = ApplyOptions {
            parallelism: 10,
            cancel: CancellationToken::new(),
            on_event: Arc::new(|_| {}),
        };
        let planned = Arc::new(planned);
        let (mut doc, report) = engine.apply(planned.clone(), doc, rec.journal, opts).await;
        backend.save("default", &mut doc).await.unwrap();
        (Arc::unwrap_or_clone(planned).plan, Some(report))
    }

    /// Plans `src` against the state so far: the plan, or none with why.
    pub async fn try_plan(
        &self,
        src: &str,
        mode: PlanMode,
    ) -> (Option<Plan>, brickform_core::diagnostics::Diagnostics) {
        let (config, vars) = self.load(src);
        let engine = Engine::new(&config, &self.registry, &vars, "default");
        let doc = LocalBackend::new(self.dir.path())
            .load("default")
            .await
            .unwrap()
            .unwrap_or_else(|| StateDocument::new("default"));
        let req = PlanRequest {
            mode,
            refresh: true,
            ..Default::default()
        };
        let (planned, d) = engine.plan(&doc, &req).await;
        (planned.map(|p| p.plan), d)
    }

    pub async fn state(&self) -> StateDocument {
        LocalBackend::new(self.dir.path())
            .load("default")
            .await
            .unwrap()
            .unwrap()
    }

    pub async fn control(
        &self,
        method: reqwest::Method,
        path: &str,
        body: serde_json::Value,
    ) -> serde_json::Value {
        let r = reqwest::Client::new()
            .request(method, format!("{}/__emulator/{path}", self.url))
            .json(&body)
            .send()
            .await
            .unwrap();
        r.json().await.unwrap_or(serde_json::Value::Null)
    }

    /// A GET against the workspace API.
    pub async fn api_get(&self, path: &str) -> serde_json::Value {
        reqwest::Client::new()
            .get(format!("{}{path}", self.url))
            .bearer_auth("t")
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap()
    }

    /// Paths of logged requests with this method.
    pub async fn requests(&self, method: &str) -> Vec<String> {
        self.logged(method)
            .await
            .iter()
            .map(|r| r["path"].as_str().unwrap().to_string())
            .collect()
    }

    /// The logged requests with this method, as the local workspace lists them.
    pub async fn logged(&self, method: &str) -> Vec<serde_json::Value> {
        let log = self
            .control(
                reqwest::Method::GET,
                &format!("requests?method={method}"),
                serde_json::Value::Null,
            )
            .await;
        log["requests"].as_array().unwrap().clone()
    }
}
