//! What the steps' tests run against: a small in-memory service with one kind,
//! `test_thing`, whose calls can be refused or lose their answer (the service did the work,
//! or not, and the step cannot tell), and a data source, `test_info`; and a `Kit` that
//! builds a step's node (its work, change and context, as the walk builds them) and the
//! shared state it records in, with a real write-ahead log in a temp dir.

use super::evaluate::Work;
use super::graph::Part;
use super::{Shared, Step, reading};
use crate::addrs::ModuleInstance;
use crate::engine::instance::{Slot, state_entry};
use crate::engine::world::World;
use crate::lang::eval::Roots;
use crate::lang::load::{Config, load_sources};
use crate::plan::{Action, Mode, ResourceChange, SerObject};
use crate::provider::{
    AttrType, Attribute, DataSource, ErrorKind, Location, OpContext, ProviderError, ProviderResult,
    Registry, Remote, ResourceKind, Schema,
};
use crate::value::{Object, PathStep, Value};
use async_trait::async_trait;
use brickform_state::{Backend, LocalBackend, Outcome, WalOp, WalRecord, recover};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::{Arc, Mutex};

/// The configuration the tests apply: `a` plainly, `b` with a sensitive value, and a
/// data source.
const CONFIG: &str = r#"
resource "test_thing" "a" {
  name    = "a"
  comment = "first"
}

resource "test_thing" "b" {
  name   = "b"
  secret = "hunter2"
}

data "test_info" "me" {
  about = "a"
}
"#;

/// A call of the service, to arm a fault for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Op {
    Create,
    Read,
    Update,
    Delete,
    /// A lookup by natural key.
    Find,
}

/// How the next call of an operation goes wrong.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Fault {
    /// The service refuses it, and nothing changes.
    Refuse,
    /// The service does it, and the answer is lost.
    LoseAnswer,
    /// The service does nothing, and no answer comes.
    LoseRequest,
    /// A create makes the object, then fails to set its comment (a later step of the
    /// create): the error carries the object.
    FailAfterMaking,
}

/// The in-memory service.
#[derive(Default)]
pub(super) struct Service {
    objects: Mutex<BTreeMap<String, Object>>,
    next: Mutex<u64>,
    faults: Mutex<Vec<(Op, Fault)>>,
    /// Every call made, in order.
    calls: Mutex<Vec<Op>>,
    /// The object each create token made.
    tokens: Mutex<HashMap<String, String>>,
    /// What a container lists as lying in it.
    contents: Mutex<Vec<Location>>,
}

impl Service {
    /// Arms `fault` for the next call of `op` (faults for one operation fire in order).
    pub fn fail_next(&self, op: Op, fault: Fault) {
        self.faults.lock().unwrap().push((op, fault));
    }

    /// The object `id`, if the service holds it.
    pub fn object(&self, id: &str) -> Option<Object> {
        self.objects.lock().unwrap().get(id).cloned()
    }

    pub fn count(&self) -> usize {
        self.objects.lock().unwrap().len()
    }

    /// The calls made so far, in order.
    pub fn calls(&self) -> Vec<Op> {
        self.calls.lock().unwrap().clone()
    }

    /// What a container holds from now on: locations by their steps, in the namespace
    /// `""` (so `/a/seen` as shown).
    pub fn set_contents(&self, locations: &[&[&str]]) {
        *self.contents.lock().unwrap() = locations
            .iter()
            .map(|steps| Location::new("", steps.iter().copied()))
            .collect();
    }

    /// Counts a call of `op`; the fault armed for it, if any.
    fn call(&self, op: Op) -> Option<Fault> {
        self.calls.lock().unwrap().push(op);
        let mut faults = self.faults.lock().unwrap();
        let i = faults.iter().position(|(o, _)| *o == op)?;
        Some(faults.remove(i).1)
    }

    /// Makes an object of `config`; its id.
    fn make(&self, config: &Object) -> Remote {
        let mut n = self.next.lock().unwrap();
        *n += 1;
        let id = format!("id-{n}");
        let mut attrs = config.clone();
        // Sensitive values are taken, never answered.
        attrs.swap_remove("secret");
        attrs.insert("id".into(), Value::from(id.as_str()));
        self.objects
            .lock()
            .unwrap()
            .insert(id.clone(), attrs.clone());
        Remote { id, attrs }
    }
}

fn refused(op: &str) -> ProviderError {
    ProviderError::invalid(format!("the service refused the {op}"))
}

fn lost(op: &str) -> ProviderError {
    ProviderError::new(ErrorKind::Transient, format!("no answer to the {op}")).uncertain(true)
}

/// `test_thing`: found by its name; with `tokens`, its create takes a token.
struct Thing {
    svc: Arc<Service>,
    schema: Schema,
    tokens: bool,
}

#[async_trait]
impl ResourceKind for Thing {
    fn type_name(&self) -> &'static str {
        "test_thing"
    }
    fn schema(&self) -> &Schema {
        &self.schema
    }
    fn create_token(&self) -> bool {
        self.tokens
    }
    async fn create(&self, ctx: &OpContext, config: &Object) -> ProviderResult<Remote> {
        let fault = self.svc.call(Op::Create);
        match fault {
            Some(Fault::Refuse) => return Err(refused("create")),
            Some(Fault::LoseRequest) => return Err(lost("create")),
            _ => {}
        }
        let known = ctx
            .create_token
            .as_ref()
            .and_then(|t| self.svc.tokens.lock().unwrap().get(t).cloned());
        let made = match known.and_then(|id| self.svc.object(&id).map(|o| (id, o))) {
            // A create repeated with its token answers with what the first one made.
            Some((id, attrs)) => Remote { id, attrs },
            None if fault == Some(Fault::FailAfterMaking) => {
                let mut first = config.clone();
                first.swap_remove("comment");
                let made = self.svc.make(&first);
                let e = ProviderError::other("setting its comment failed");
                return Err(e.made(made));
            }
            None => self.svc.make(config),
        };
        if let Some(t) = &ctx.create_token {
            let mut tokens = self.svc.tokens.lock().unwrap();
            tokens.insert(t.clone(), made.id.clone());
        }
        match fault {
            Some(Fault::LoseAnswer) => Err(lost("create")),
            _ => Ok(made),
        }
    }
    async fn read(&self, _: &OpContext, id: &str, _: &Object) -> ProviderResult<Option<Remote>> {
        match self.svc.call(Op::Read) {
            Some(Fault::Refuse) => Err(refused("read")),
            Some(_) => Err(lost("read")),
            None => Ok(self.svc.object(id).map(|attrs| Remote {
                id: id.to_string(),
                attrs,
            })),
        }
    }
    async fn update(
        &self,
        _: &OpContext,
        id: &str,
        _: &Object,
        config: &Object,
    ) -> ProviderResult<Remote> {
        let fault = self.svc.call(Op::Update);
        match fault {
            Some(Fault::Refuse) => return Err(refused("update")),
            Some(Fault::LoseRequest) => return Err(lost("update")),
            _ => {}
        }
        let mut objects = self.svc.objects.lock().unwrap();
        let o = objects
            .get_mut(id)
            .ok_or_else(|| ProviderError::not_found(format!("{id} does not exist")))?;
        for (k, v) in config
            .iter()
            .filter(|(k, v)| *k != "secret" && !v.is_null())
        {
            o.insert(k.clone(), v.clone());
        }
        match fault {
            Some(Fault::LoseAnswer) => Err(lost("update")),
            _ => Ok(Remote {
                id: id.to_string(),
                attrs: o.clone(),
            }),
        }
    }
    async fn delete(&self, _: &OpContext, id: &str, _: &Object) -> ProviderResult<()> {
        let fault = self.svc.call(Op::Delete);
        match fault {
            Some(Fault::Refuse) => return Err(refused("delete")),
            Some(Fault::LoseRequest) => return Err(lost("delete")),
            _ => {}
        }
        self.svc.objects.lock().unwrap().remove(id);
        match fault {
            Some(Fault::LoseAnswer) => Err(lost("delete")),
            _ => Ok(()),
        }
    }
    fn natural_key(&self, _: &OpContext, config: &Object) -> Option<String> {
        config
            .get("name")
            .and_then(Value::as_str)
            .map(str::to_string)
    }
    async fn find_by_key(&self, _: &OpContext, key: &str) -> ProviderResult<Option<Remote>> {
        if self.svc.call(Op::Find).is_some() {
            return Err(lost("lookup"));
        }
        let objects = self.svc.objects.lock().unwrap();
        Ok(objects
            .iter()
            .find(|(_, o)| o.get("name").and_then(Value::as_str) == Some(key))
            .map(|(id, attrs)| Remote {
                id: id.clone(),
                attrs: attrs.clone(),
            }))
    }
    async fn contents(&self, _: &OpContext, _: &str, _: &Object) -> ProviderResult<Vec<Location>> {
        Ok(self.svc.contents.lock().unwrap().clone())
    }
}

/// `test_info`: tells who asks about what, unless its read is refused.
struct Info {
    svc: Arc<Service>,
    schema: Schema,
}

#[async_trait]
impl DataSource for Info {
    fn type_name(&self) -> &'static str {
        "test_info"
    }
    fn schema(&self) -> &Schema {
        &self.schema
    }
    async fn read(&self, _: &Object) -> ProviderResult<Object> {
        match self.svc.call(Op::Read) {
            Some(_) => Err(refused("read")),
            None => Ok(Object::from_iter([(
                "user".to_string(),
                Value::from("me@example.com"),
            )])),
        }
    }
}

/// Builds nodes and the state they record in, over one service and one temp dir.
pub(super) struct Kit {
    pub svc: Arc<Service>,
    kind: Arc<dyn ResourceKind>,
    info: Arc<dyn DataSource>,
    config: Config,
    dir: tempfile::TempDir,
}

/// A node as the walk builds it: what its step runs with.
pub(super) struct Node {
    work: Work,
    change: ResourceChange,
    ctx: OpContext,
}

impl Node {
    /// The step of this node, recording in `shared`.
    pub fn step<'a>(&'a self, shared: &'a Shared) -> Step<'a> {
        Step {
            work: &self.work,
            change: &self.change,
            ctx: &self.ctx,
            shared,
            kind: self.work.kind.as_deref().expect("a managed node"),
        }
    }

    /// What the walk hands `run_node`.
    pub fn into_parts(self) -> (Work, ResourceChange, OpContext) {
        (self.work, self.change, self.ctx)
    }

    pub fn work(&self) -> &Work {
        &self.work
    }

    pub fn change(&self) -> &ResourceChange {
        &self.change
    }
}

impl Kit {
    pub fn new() -> Kit {
        Kit::build(false)
    }

    /// A kit whose kind's create takes a token.
    pub fn with_tokens() -> Kit {
        Kit::build(true)
    }

    fn build(tokens: bool) -> Kit {
        let svc = Arc::new(Service::default());
        let schema = Schema::new()
            .attr(Attribute::required("name", AttrType::String))
            .attr(Attribute::optional("comment", AttrType::String))
            .attr(Attribute::optional("secret", AttrType::String).sensitive())
            .attr(Attribute::computed("id", AttrType::String));
        let info = Schema::new()
            .attr(Attribute::optional("about", AttrType::String))
            .attr(Attribute::computed("user", AttrType::String));
        let dir = tempfile::tempdir().unwrap();
        let (config, d) = load_sources(
            dir.path(),
            vec![("main.bf.hcl".into(), "main.bf.hcl".into(), CONFIG.into())],
        );
        assert!(!d.has_errors(), "{}", d.render_plain(&config.sources));
        Kit {
            kind: Arc::new(Thing {
                svc: svc.clone(),
                schema,
                tokens,
            }),
            info: Arc::new(Info {
                svc: svc.clone(),
                schema: info,
            }),
            svc,
            config,
            dir,
        }
    }

    /// What the nodes of one walk share: a world with nothing applied yet, an empty state,
    /// and its journal.
    pub async fn shared(&self) -> Shared {
        let backend: Arc<dyn Backend> = Arc::new(LocalBackend::new(self.dir.path()));
        let rec = recover(backend.clone(), "default").await.unwrap();
        let mut doc = rec.document;
        backend.save("default", &mut doc).await.unwrap();
        let world = World::new(
            Object::default(),
            HashSet::new(),
            "default",
            self.dir.path(),
            &Registry::new(),
        );
        Shared {
            world: std::sync::RwLock::new(world),
            redactor: doc.redactor(),
            doc: tokio::sync::Mutex::new(doc),
            journal: rec.journal,
            locations: crate::engine::containers::Locations::new(),
            calls: std::sync::Arc::new(tokio::sync::Semaphore::new(1)),
        }
    }

    /// The planned change of `test_thing.NAME`, as far as the steps read it.
    pub fn change(&self, name: &str, action: Action) -> ResourceChange {
        let mut c = ResourceChange::bare("test_thing", name, "test", action);
        c.sensitive_paths = vec![vec![PathStep::Key("secret".into())]];
        c
    }

    /// The planned change of an object that exists: `id` and what the plan read it as.
    pub fn change_of(&self, name: &str, action: Action, id: &str) -> ResourceChange {
        let mut c = self.change(name, action);
        c.id = Some(id.to_string());
        c.before = self.svc.object(id).map(SerObject);
        c
    }

    /// The read of `data.test_info.me`.
    pub fn data_change(&self) -> ResourceChange {
        let mut c = ResourceChange::bare("test_info", "me", "test", Action::Read);
        c.addr.resource.mode = Mode::Data;
        c
    }

    /// The node of `change` (its `part`).
    pub fn node(&self, change: ResourceChange, part: Part) -> Node {
        let data = change.mode() == Mode::Data;
        let ctx = OpContext {
            address: change.address(),
            lineage: "lineage".into(),
            environment: "default".into(),
            base_dir: self.dir.path().to_path_buf(),
            create_token: None,
            output: None,
            planned: None,
        };
        let work = Work {
            part,
            kind: (!data).then(|| self.kind.clone()),
            data_source: data.then(|| self.info.clone()),
            resource: change
                .addr
                .whole()
                .and_then(|r| self.config.resources.get(r))
                .cloned(),
            key: None,
            each_value: None,
            base_dir: self.dir.path().to_path_buf(),
            presets: None,
            production: false,
            referenced: true,
        };
        Node { work, change, ctx }
    }

    /// An object made outside this state: its id.
    pub fn outside(&self, name: &str, comment: &str) -> String {
        self.svc
            .make(&object(&[("name", name), ("comment", comment)]))
            .id
    }

    /// An object made before the apply and recorded in state: its id.
    pub async fn existing(&self, shared: &Shared, name: &str, comment: &str) -> String {
        let config = object(&[("name", name), ("comment", comment)]);
        let remote = self.svc.make(&config);
        let mut doc = shared.doc.lock().await;
        let address = crate::addrs::InstanceAddr::parse(&format!("test_thing.{name}")).unwrap();
        let slot = Slot {
            addr: &address,
            provider: "test",
            dependencies: &[],
        };
        let rs = state_entry(
            &doc.redactor(),
            slot,
            self.kind.as_ref(),
            &remote,
            &config,
            &[],
        )
        .unwrap();
        doc.insert(rs).unwrap();
        remote.id
    }

    /// The write-ahead log so far, a line a record: an intent as `intent OP [ID]
    /// [key=KEY] [token]`, a result as its outcome (`created ID`, `failed: MESSAGE`, …).
    pub async fn log(&self, shared: &Shared) -> Vec<String> {
        // Results are written with the next group of records: write them.
        shared.journal.sync().await.unwrap();
        let records = LocalBackend::new(self.dir.path())
            .wal_read("default")
            .await
            .unwrap();
        records.iter().map(line).collect()
    }
}

fn line(r: &WalRecord) -> String {
    match r {
        WalRecord::Intent(i) => {
            let op = match i.op {
                WalOp::Create => "create",
                WalOp::Update => "update",
                WalOp::Delete => "delete",
                WalOp::Import => "import",
                WalOp::Forget => "forget",
            };
            let mut s = format!("intent {op}");
            if let Some(id) = &i.id {
                s.push_str(&format!(" {id}"));
            }
            if let Some(k) = &i.natural_key {
                s.push_str(&format!(" key={k}"));
            }
            if i.token.is_some() {
                s.push_str(" token");
            }
            s
        }
        WalRecord::Result(r) => match &r.outcome {
            Outcome::Created(rs) => format!("created {}", rs.id),
            Outcome::Updated(rs) => format!("updated {}", rs.id),
            Outcome::Imported(rs) => format!("imported {}", rs.id),
            Outcome::Deleted {} => "deleted".into(),
            Outcome::Forgotten {} => "forgotten".into(),
            Outcome::Failed(m) => format!("failed: {m}"),
            Outcome::Pending {} => "pending".into(),
        },
    }
}

/// The id state records for `address`, if any.
pub(super) async fn state_id(shared: &Shared, address: &str) -> Option<String> {
    shared
        .doc
        .lock()
        .await
        .get(&crate::addrs::InstanceAddr::parse(address).unwrap())
        .map(|r| r.id.clone())
}

/// The ids of the objects state holds deposed.
pub(super) async fn deposed_ids(shared: &Shared) -> Vec<String> {
    let doc = shared.doc.lock().await;
    doc.deposed().iter().map(|r| r.id.clone()).collect()
}

/// What references see of `test_thing.NAME` (or of the data source `test_info.NAME` when
/// `data`).
pub(super) fn world_value(shared: &Shared, name: &str, data: bool) -> Option<Object> {
    let world = reading(&shared.world);
    let at = world.at(&ModuleInstance::root());
    let by_type = match data {
        true => at.root("data")?.as_object()?.get("test_info")?.clone(),
        false => at.root("test_thing")?.clone(),
    };
    match by_type.as_object()?.get(name)? {
        Value::Object(o) => Some(Object::clone(o)),
        _ => None,
    }
}

/// Whether references to `test_thing.NAME.ATTR` read a sensitive value.
pub(super) fn world_marks_sensitive(shared: &Shared, name: &str, attr: &str) -> bool {
    let world = reading(&shared.world);
    world
        .at(&ModuleInstance::root())
        .is_sensitive("test_thing", &[name, attr])
}

/// `attrs[key]` as a string.
pub(super) fn text<'o>(attrs: &'o Object, key: &str) -> Option<&'o str> {
    attrs.get(key).and_then(Value::as_str)
}

/// `pairs` as an object.
pub(super) fn object(pairs: &[(&str, &str)]) -> Object {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), Value::from(*v)))
        .collect()
}

/// How a step that should have failed failed, as the report tells it.
pub(super) fn failure<T: std::fmt::Debug>(r: Result<T, super::error::NodeError>) -> super::Failure {
    r.expect_err("the step should have failed").failure()
}
