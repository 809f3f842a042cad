//! The test-only provider the engine tests drive: an in-memory service with one kind,
//! `test_thing`, and a data source, `test_info`, and a harness that plans and applies
//! configurations against it with real state and write-ahead log files.
#![allow(clippy::unwrap_used, clippy::expect_used, dead_code)] // test helpers may panic

use async_trait::async_trait;
use brickform_core::engine::apply::{ApplyEvent, ApplyOptions, ApplyReport};
use brickform_core::engine::inputs::{VarInputs, resolve};
use brickform_core::engine::{Engine, PlanRequest};
use brickform_core::lang::load::load_sources;
use brickform_core::plan::PlanMode;
use brickform_core::provider::*;
use brickform_core::value::{Object, Value};
use brickform_state::{
    Backend, LocalBackend, LockInfo, StateDocument, StateError, StateLock, WalRecord, recover,
};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use std::sync::{Arc, Mutex};
use tokio_util::sync::CancellationToken;

/// An in-memory service with one kind, `test_thing`, and a data source `test_info`.
#[derive(Default)]
pub struct Service {
    pub objects: Mutex<BTreeMap<String, Object>>,
    pub next: Mutex<u64>,
    pub fail_names: Mutex<Vec<String>>,
    /// Names whose create panics, as a bug in a provider would.
    pub panic_names: Mutex<Vec<String>>,
    /// Names whose lookup by natural key panics (a plan looks a new object up).
    pub lookup_panic_names: Mutex<Vec<String>>,
    pub configured: Mutex<Option<Object>>,
    /// An interruption armed for a coming write (see `Cut`).
    pub cut: Mutex<Option<Cut>>,
    /// Signalled when a `Cut::Kill` halts a write.
    pub halted: tokio::sync::Notify,
    /// How the service rewrites what it is sent, as the real one does (off by default).
    pub normalise: Mutex<Normalise>,
    /// Every write, in order: (id, create or update, the configuration sent).
    pub writes: Mutex<Vec<(String, Write, Object)>>,
    /// How long each create takes to answer (none by default).
    pub create_takes: Mutex<Option<std::time::Duration>>,
    /// How long a create works locally before its request, as a kind builds what it sends
    /// (none by default).
    pub create_works: Mutex<Option<std::time::Duration>>,
    /// Create requests in flight, and the most that ever were at once.
    pub creating: std::sync::atomic::AtomicUsize,
    pub most_creating: std::sync::atomic::AtomicUsize,
    /// Creates working locally now, and the most creates that were ever either working or
    /// in flight at once.
    pub working: std::sync::atomic::AtomicUsize,
    pub most_busy: std::sync::atomic::AtomicUsize,
    /// Lookups in order: `ahead ADDRESS` when a plan asks for them ahead of a block's turn,
    /// `listed ahead ADDRESS` when what it asked for ran, `lookup KEY` for a lookup, `read
    /// ID` for a read, `impact ahead ADDRESS NAME` when a plan asks for a delete's data
    /// impact ahead and `ran impact ahead …` when that ran.
    pub lookups: Mutex<Vec<String>>,
}

/// Which write a logged configuration was sent by.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Write {
    Create,
    Update,
}

/// The service's own rewriting of what it is sent: deterministic, so the answer to a write
/// is what every later read shows until something else changes the object.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Normalise {
    /// A comment is kept in capitals (an identifier answered in another spelling).
    pub comment_case: bool,
    /// `tier` is answered by its newer name (an enum's alias).
    pub alias: bool,
    /// `label` is filled in when nobody set it (a default nobody configured).
    pub fill_label: bool,
    /// `force` is acted on, never returned (a write-only flag).
    pub drop_force: bool,
    /// `tags` come back sorted (a list reordered).
    pub sort_tags: bool,
}

impl Normalise {
    pub fn all() -> Self {
        Normalise {
            comment_case: true,
            alias: true,
            fill_label: true,
            drop_force: true,
            sort_tags: true,
        }
    }

    /// What the service keeps of a written object.
    pub fn apply(&self, o: &mut Object) {
        if self.comment_case
            && let Some(Value::String(c)) = o.get_mut("comment")
        {
            *c = c.to_uppercase();
        }
        if self.alias
            && let Some(Value::String(t)) = o.get_mut("tier")
            && t == "basic"
        {
            *t = "standard".into();
        }
        if self.fill_label && o.get("label").is_none_or(Value::is_null) {
            o.insert("label".into(), Value::from("auto"));
        }
        if self.drop_force {
            o.swap_remove("force");
        }
        if self.sort_tags
            && let Some(Value::List(tags)) = o.get_mut("tags")
        {
            tags.sort_by_key(|t| t.as_str().map(str::to_string));
        }
    }
}

/// Interrupts an apply at its `after`-th write from now (1 is the next one).
pub struct Cut {
    pub after: usize,
    pub how: CutHow,
}

pub enum CutHow {
    /// The write never answers, as if the process were killed waiting for it: with `effect`
    /// the service made the change first (the answer was lost), without it the request never
    /// arrived. `Service::halted` is signalled so the caller can drop the apply.
    Kill { effect: bool },
    /// Ctrl-C: the token is cancelled as the write starts, and the write completes.
    Cancel(CancellationToken),
}

impl Service {
    /// The lookups so far, once `n` of them start with `prefix` (or after a second): work a
    /// plan starts ahead may still run after the plan is done.
    pub async fn lookups_once(&self, prefix: &str, n: usize) -> Vec<String> {
        for _ in 0..100 {
            let seen = self.lookups.lock().unwrap().clone();
            if seen.iter().filter(|l| l.starts_with(prefix)).count() >= n {
                return seen;
            }
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        }
        self.lookups.lock().unwrap().clone()
    }

    /// Counts a write; returns the cut when this is the write it is armed for.
    fn tick(&self) -> Option<CutHow> {
        let mut cut = self.cut.lock().unwrap();
        let c = cut.as_mut()?;
        c.after = c.after.saturating_sub(1);
        if c.after == 0 {
            return cut.take().map(|c| c.how);
        }
        None
    }

    /// Before a write's effect: a kill without effect halts here; a cancel fires.
    async fn before(&self, cut: &Option<CutHow>) {
        match cut {
            Some(CutHow::Kill { effect: false }) => self.halt().await,
            Some(CutHow::Cancel(token)) => token.cancel(),
            _ => {}
        }
    }

    /// After a write's effect: a kill with effect halts here, the answer lost.
    async fn after(&self, cut: &Option<CutHow>) {
        if let Some(CutHow::Kill { effect: true }) = cut {
            self.halt().await
        }
    }

    async fn halt(&self) {
        self.halted.notify_one();
        std::future::pending::<()>().await
    }
}

/// `test_thing` updates merge (a PATCH); `test_whole` writes the whole object (a reset):
/// what its configuration leaves out goes back to the default.
pub struct Thing {
    pub svc: Arc<Service>,
    pub schema: Schema,
    pub type_name: &'static str,
}

/// `test_whole`: as `test_thing`, written whole, with a `size` the service defaults to 1.
pub fn whole_schema() -> Schema {
    thing_schema()
        .attr(Attribute::optional("size", AttrType::Number).server_default(1i64))
        .whole_writes()
}

impl Thing {
    fn whole(&self) -> bool {
        self.schema.writes == Writes::Whole
    }

    /// What a create does to the service.
    fn make(&self, config: &Object) -> ProviderResult<Remote> {
        let name = config
            .get("name")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string();
        if self.svc.fail_names.lock().unwrap().contains(&name) {
            return Err(ProviderError::invalid(format!("cannot create {name}")));
        }
        if self.svc.panic_names.lock().unwrap().contains(&name) {
            panic!("the provider broke on {name}");
        }
        // Names are one object's, as in Unity Catalog (both kinds share the namespace).
        if self
            .svc
            .objects
            .lock()
            .unwrap()
            .values()
            .any(|o| o.get("name").and_then(Value::as_str) == Some(name.as_str()))
        {
            return Err(ProviderError::new(
                ErrorKind::AlreadyExists,
                format!("{name} already exists"),
            ));
        }
        let mut n = self.svc.next.lock().unwrap();
        *n += 1;
        let id = format!("id-{n}");
        let mut o = config.clone();
        o.swap_remove("secret");
        if self.whole() && o.get("size").is_none_or(Value::is_null) {
            o.insert("size".into(), Value::from(1i64));
        }
        o.insert("id".into(), Value::from(id.as_str()));
        o.insert("owner".into(), Value::from("service"));
        self.svc.normalise.lock().unwrap().apply(&mut o);
        self.svc
            .writes
            .lock()
            .unwrap()
            .push((id.clone(), Write::Create, config.clone()));
        self.svc
            .objects
            .lock()
            .unwrap()
            .insert(id.clone(), o.clone());
        Ok(Remote { id, attrs: o })
    }

    /// What an update does to the service.
    fn change(&self, id: &str, prior: &Object, config: &Object) -> ProviderResult<Remote> {
        let mut objs = self.svc.objects.lock().unwrap();
        let o = objs
            .get_mut(id)
            .ok_or_else(|| ProviderError::not_found("gone"))?;
        for (k, v) in config {
            if k == "secret" {
                continue;
            }
            let computed = self
                .schema
                .attribute(k)
                .is_some_and(|a| a.presence == Presence::OptionalComputed);
            if self.whole() && !(computed && v.is_null()) {
                // A reset: everything as configured, defaults where it is silent; what the
                // service computes when unset it computes again.
                let v = match (k.as_str(), v) {
                    ("size", Value::Null) => Value::from(1i64),
                    _ => v.clone(),
                };
                o.insert(k.clone(), v);
            } else if !v.is_null() {
                o.insert(k.clone(), v.clone());
            } else if prior.get(k).is_some_and(|p| !p.is_null())
                && self
                    .schema
                    .attribute(k)
                    .is_some_and(|a| a.presence == Presence::Optional)
            {
                // A PATCH sends the removal of what was configured before.
                o.insert(k.clone(), Value::Null);
            }
        }
        self.svc.normalise.lock().unwrap().apply(o);
        self.svc
            .writes
            .lock()
            .unwrap()
            .push((id.to_string(), Write::Update, config.clone()));
        Ok(Remote {
            id: id.to_string(),
            attrs: o.clone(),
        })
    }
}

pub fn thing_schema() -> Schema {
    Schema::new()
        .attr(
            Attribute::required("name", AttrType::String)
                .force_new()
                .normalize(Normalize::LowerCase),
        )
        .attr(Attribute::optional("comment", AttrType::String))
        .attr(Attribute::optional("parent", AttrType::String))
        .attr(Attribute::optional("secret", AttrType::String).sensitive())
        .attr(Attribute::optional("tier", AttrType::String))
        .attr(Attribute::optional("label", AttrType::String))
        .attr(Attribute::optional("force", AttrType::Bool))
        .attr(Attribute::optional(
            "tags",
            AttrType::List(Box::new(AttrType::String)),
        ))
        .attr(Attribute::optional_computed("owner", AttrType::String))
        .attr(Attribute::computed("id", AttrType::String))
        // Declared, never reported by the service (as some variants of real objects do).
        .attr(Attribute::computed("url", AttrType::String))
        .block(BlockType::keyed(
            "item",
            "key",
            Schema::new()
                .attr(Attribute::required("key", AttrType::String))
                .attr(Attribute::optional("note", AttrType::String)),
        ))
}

#[async_trait]
impl ResourceKind for Thing {
    fn type_name(&self) -> &'static str {
        self.type_name
    }
    fn schema(&self) -> &Schema {
        &self.schema
    }
    async fn create(&self, _: &OpContext, config: &Object) -> ProviderResult<Remote> {
        use std::sync::atomic::Ordering::SeqCst;
        let works = *self.svc.create_works.lock().unwrap();
        if let Some(works) = works {
            let now = self.svc.working.fetch_add(1, SeqCst) + 1;
            let busy = now + self.svc.creating.load(SeqCst);
            self.svc.most_busy.fetch_max(busy, SeqCst);
            tokio::time::sleep(works).await;
            self.svc.working.fetch_sub(1, SeqCst);
        }
        // The request, in one of the engine's call slots as a client takes it.
        let _slot = brickform_core::call_slots::take().await;
        let now = self.svc.creating.fetch_add(1, SeqCst) + 1;
        self.svc.most_creating.fetch_max(now, SeqCst);
        let busy = now + self.svc.working.load(SeqCst);
        self.svc.most_busy.fetch_max(busy, SeqCst);
        let takes = *self.svc.create_takes.lock().unwrap();
        if let Some(takes) = takes {
            tokio::time::sleep(takes).await;
        }
        let cut = self.svc.tick();
        self.svc.before(&cut).await;
        let made = self.make(config);
        self.svc.after(&cut).await;
        self.svc.creating.fetch_sub(1, SeqCst);
        made
    }
    async fn read(&self, _: &OpContext, id: &str, _: &Object) -> ProviderResult<Option<Remote>> {
        self.svc.lookups.lock().unwrap().push(format!("read {id}"));
        Ok(self.svc.objects.lock().unwrap().get(id).map(|o| Remote {
            id: id.to_string(),
            attrs: o.clone(),
        }))
    }
    async fn update(
        &self,
        _: &OpContext,
        id: &str,
        prior: &Object,
        config: &Object,
    ) -> ProviderResult<Remote> {
        let cut = self.svc.tick();
        self.svc.before(&cut).await;
        let changed = self.change(id, prior, config);
        self.svc.after(&cut).await;
        changed
    }
    async fn delete(&self, _: &OpContext, id: &str, _: &Object) -> ProviderResult<()> {
        let cut = self.svc.tick();
        self.svc.before(&cut).await;
        self.svc.objects.lock().unwrap().remove(id);
        self.svc.after(&cut).await;
        Ok(())
    }
    fn natural_key(&self, _: &OpContext, config: &Object) -> Option<String> {
        config
            .get("name")
            .and_then(Value::as_str)
            .map(str::to_lowercase)
    }
    fn lookups_ahead(&self, ctx: &OpContext) -> Option<Ahead> {
        let svc = self.svc.clone();
        let address = ctx.address.clone();
        svc.lookups.lock().unwrap().push(format!("ahead {address}"));
        Some(Box::pin(async move {
            svc.lookups
                .lock()
                .unwrap()
                .push(format!("listed ahead {address}"));
        }))
    }
    fn impact_ahead(
        &self,
        ctx: &OpContext,
        applied: &serde_json::Map<String, serde_json::Value>,
    ) -> Option<Ahead> {
        let svc = self.svc.clone();
        let name = applied.get("name").and_then(|n| n.as_str()).unwrap_or("");
        let asked = format!("impact ahead {} {name}", ctx.address);
        svc.lookups.lock().unwrap().push(asked.clone());
        Some(Box::pin(async move {
            svc.lookups.lock().unwrap().push(format!("ran {asked}"));
        }))
    }
    async fn find_by_key(&self, _: &OpContext, key: &str) -> ProviderResult<Option<Remote>> {
        self.svc
            .lookups
            .lock()
            .unwrap()
            .push(format!("lookup {key}"));
        if self
            .svc
            .lookup_panic_names
            .lock()
            .unwrap()
            .iter()
            .any(|n| n == key)
        {
            panic!("the provider broke looking up {key}");
        }
        let objs = self.svc.objects.lock().unwrap();
        Ok(objs
            .iter()
            .find(|(_, o)| o.get("name").and_then(Value::as_str) == Some(key))
            .map(|(id, o)| Remote {
                id: id.clone(),
                attrs: o.clone(),
            }))
    }
}

pub struct Info {
    pub schema: Schema,
}
#[async_trait]
impl DataSource for Info {
    fn type_name(&self) -> &'static str {
        "test_info"
    }
    fn schema(&self) -> &Schema {
        &self.schema
    }
    async fn read(&self, config: &Object) -> ProviderResult<Object> {
        let mut out = Object::from_iter([("user".to_string(), Value::from("me@example.com"))]);
        // `team`, when not given, is found from `about`, as a lookup by name finds an id.
        if config.get("team").is_none_or(Value::is_null) {
            let about = config.get("about").and_then(Value::as_str).unwrap_or("");
            out.insert("team".into(), Value::from(format!("team of {about}")));
        }
        Ok(out)
    }
}

pub struct TestProvider {
    pub svc: Arc<Service>,
    pub schema: Schema,
}
#[async_trait]
impl Provider for TestProvider {
    fn name(&self) -> &'static str {
        "test"
    }
    fn config_schema(&self) -> &Schema {
        &self.schema
    }
    fn resource_kinds(&self) -> Vec<Arc<dyn ResourceKind>> {
        vec![
            Arc::new(Thing {
                svc: self.svc.clone(),
                schema: thing_schema(),
                type_name: "test_thing",
            }),
            Arc::new(Thing {
                svc: self.svc.clone(),
                schema: whole_schema(),
                type_name: "test_whole",
            }),
        ]
    }
    fn data_sources(&self) -> Vec<Arc<dyn DataSource>> {
        vec![Arc::new(Info {
            schema: Schema::new()
                .attr(Attribute::computed("user", AttrType::String))
                .attr(Attribute::computed("region", AttrType::String))
                .attr(Attribute::optional("about", AttrType::String))
                .attr(Attribute::optional_computed("team", AttrType::String)),
        })]
    }
    async fn configure(&self, settings: &Object) -> ProviderResult<()> {
        if settings.get("region").and_then(Value::as_str) == Some("nowhere") {
            return Err(ProviderError::invalid("no such region"));
        }
        *self.svc.configured.lock().unwrap() = Some(settings.clone());
        Ok(())
    }
}

pub struct Harness {
    pub svc: Arc<Service>,
    pub registry: Registry,
    pub dir: tempfile::TempDir,
    /// How many more write-ahead log writes succeed; `None`: all of them.
    pub wal_writes_left: Arc<Mutex<Option<usize>>>,
    /// The most nodes an apply had started and not yet finished at once.
    pub most_running: Arc<std::sync::atomic::AtomicUsize>,
}

/// The local backend whose write-ahead log stops accepting writes after a number of them,
/// as when the state's lock is lost to another run: every later write fails.
#[derive(Debug)]
struct LosesLock {
    inner: LocalBackend,
    left: Arc<Mutex<Option<usize>>>,
}

#[async_trait]
impl Backend for LosesLock {
    async fn load(&self, env: &str) -> brickform_state::Result<Option<StateDocument>> {
        self.inner.load(env).await
    }
    async fn save(&self, env: &str, doc: &mut StateDocument) -> brickform_state::Result<()> {
        self.inner.save(env, doc).await
    }
    async fn lock(
        &self,
        env: &str,
        info: LockInfo,
        timeout: std::time::Duration,
    ) -> brickform_state::Result<Box<dyn StateLock>> {
        self.inner.lock(env, info, timeout).await
    }
    async fn force_unlock(
        &self,
        env: &str,
        id: &str,
        even_if_running: bool,
    ) -> brickform_state::Result<()> {
        self.inner.force_unlock(env, id, even_if_running).await
    }
    async fn lock_holder(&self, env: &str) -> brickform_state::Result<Option<LockInfo>> {
        self.inner.lock_holder(env).await
    }
    async fn environments(&self) -> brickform_state::Result<Vec<String>> {
        self.inner.environments().await
    }
    async fn delete(&self, env: &str) -> brickform_state::Result<()> {
        self.inner.delete(env).await
    }
    async fn wal_append(&self, env: &str, record: &WalRecord) -> brickform_state::Result<()> {
        self.wal_append_many(env, std::slice::from_ref(record))
            .await
    }
    async fn wal_append_many(
        &self,
        env: &str,
        records: &[WalRecord],
    ) -> brickform_state::Result<()> {
        {
            let mut left = self.left.lock().unwrap();
            match left.as_mut() {
                Some(0) => {
                    return Err(StateError::LockLost {
                        location: "test".into(),
                        reason: "it is held by another run".into(),
                    });
                }
                Some(n) => *n -= 1,
                None => {}
            }
        }
        self.inner.wal_append_many(env, records).await
    }
    async fn wal_read(&self, env: &str) -> brickform_state::Result<Vec<WalRecord>> {
        self.inner.wal_read(env).await
    }
    async fn wal_truncate(&self, env: &str) -> brickform_state::Result<()> {
        self.inner.wal_truncate(env).await
    }
}

impl Harness {
    pub fn new() -> Self {
        let svc = Arc::new(Service::default());
        let mut registry = Registry::new();
        registry.register(Arc::new(TestProvider {
            svc: svc.clone(),
            schema: Schema::new().attr(Attribute::optional("region", AttrType::String)),
        }));
        Harness {
            svc,
            registry,
            dir: tempfile::tempdir().unwrap(),
            wal_writes_left: Arc::new(Mutex::new(None)),
            most_running: Default::default(),
        }
    }

    pub async fn run(
        &self,
        src: &str,
        mode: PlanMode,
        apply: bool,
    ) -> (brickform_core::plan::Plan, Option<ApplyReport>) {
        let (config, d) = load_sources(
            self.dir.path(),
            vec![("main.bf.hcl".into(), "main.bf.hcl".into(), src.into())],
        );
        assert!(!d.has_errors(), "{}", d.render_plain(&config.sources));
        let (vars, d) = resolve(&config, &VarInputs::default(), None);
        assert!(!d.has_errors(), "{}", d.render_plain(&config.sources));
        let backend: Arc<dyn Backend> = Arc::new(LosesLock {
            inner: LocalBackend::new(self.dir.path()),
            left: self.wal_writes_left.clone(),
        });
        let rec = recover(backend.clone(), "default").await.unwrap();
        let mut doc = rec.document;
        if !rec.existed {
            backend.save("default", &mut doc).await.unwrap();
        }
        let engine = Engine::new(&config, &self.registry, &vars, "default");
        let (planned, d) = engine
            .plan(
                &doc,
                &PlanRequest {
                    mode,
                    refresh: true,
                    ..Default::default()
                },
            )
            .await;
        let planned = planned.unwrap_or_else(|| panic!("{}", d.render_plain(&config.sources)));
        if !apply {
            return (planned.plan, None);
        }
        let (running, most) = (Arc::new(AtomicUsize::new(0)), self.most_running.clone());
        let opts = ApplyOptions {
            parallelism: 4,
            cancel: CancellationToken::new(),
            on_event: Arc::new(move |e| match e {
                ApplyEvent::Started { .. } => {
                    most.fetch_max(running.fetch_add(1, SeqCst) + 1, SeqCst);
                }
                ApplyEvent::Finished { .. } | ApplyEvent::Failed { .. } => {
                    running.fetch_sub(1, SeqCst);
                }
                _ => {}
            }),
        };
        let planned = Arc::new(planned);
        let (mut doc, report) = engine.apply(planned.clone(), doc, rec.journal, opts).await;
        backend.save("default", &mut doc).await.unwrap();
        (Arc::unwrap_or_clone(planned).plan, Some(report))
    }

    /// What a plan of `src` was made from ([`Engine::describe`]).
    pub fn describe(
        &self,
        src: &str,
        plan: &brickform_core::plan::Plan,
    ) -> brickform_core::plan::PlanContext {
        let (config, d) = load_sources(
            self.dir.path(),
            vec![("main.bf.hcl".into(), "main.bf.hcl".into(), src.into())],
        );
        assert!(!d.has_errors(), "{}", d.render_plain(&config.sources));
        let (vars, _) = resolve(&config, &VarInputs::default(), None);
        Engine::new(&config, &self.registry, &vars, "default").describe(plan)
    }

    /// The state, when an apply has written one.
    #[allow(dead_code)] // not every test file reads it
    pub async fn state_if_any(&self) -> Option<StateDocument> {
        LocalBackend::new(self.dir.path())
            .load("default")
            .await
            .unwrap()
    }

    pub async fn state(&self) -> StateDocument {
        LocalBackend::new(self.dir.path())
            .load("default")
            .await
            .unwrap()
            .unwrap()
    }
}

/// Runs `case` on values of `strategy` from a fixed seed, so every CI run tries the same
/// cases: `cases` of them, or `BRICKFORM_GENERATIVE_CASES` (scripts/long-generated). One
/// thread: a killed apply must not go on writing on another. A failure panics with the
/// case, shrunk.
#[allow(dead_code)] // not every test file generates cases
pub fn run_generated<S, F, Fut>(cases: u32, strategy: &S, case: F)
where
    S: proptest::strategy::Strategy,
    F: Fn(S::Value) -> Fut,
    Fut: std::future::Future<Output = Result<(), String>>,
{
    use proptest::test_runner::{Config, RngAlgorithm, TestCaseError, TestRng, TestRunner};
    let cases = std::env::var("BRICKFORM_GENERATIVE_CASES")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(cases);
    let mut runner = TestRunner::new_with_rng(
        Config {
            cases,
            failure_persistence: None,
            ..Config::default()
        },
        TestRng::deterministic_rng(RngAlgorithm::ChaCha),
    );
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let result = runner.run(strategy, |v| {
        rt.block_on(case(v)).map_err(TestCaseError::fail)
    });
    if let Err(e) = result {
        panic!("{e}");
    }
}
