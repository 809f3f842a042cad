//! What a plan is: the data the planner produces and the renderers (text, JSON, Markdown)
//! and saved plans consume. It is self-contained, so `show FILE` renders a saved plan without
//! the configuration or providers.

use crate::value::{Object, PathStep, Value};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::sync::Arc;

pub use crate::change::{Action, DataEffect, DataImpact, DataImpactKind};

/// Why an instance gets its action, when there is more to say than "the configuration changed".
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ActionReason {
    /// An attribute that cannot change in place changed.
    ReplaceBecauseCannotUpdate,
    /// `--replace ADDR`.
    ReplaceByRequest,
    /// `lifecycle { replace_triggered_by }`.
    ReplaceByTriggers,
    /// The container the object lies in is replaced, which takes the object with it.
    ReplaceBecauseContainerReplaced,
    /// The object was deleted outside brickform; it is created again.
    CreateBecauseDeletedOutside,
    DeleteBecauseNoResourceConfig,
    DeleteBecauseEachKey,
    DeleteBecauseCountIndex,
    DeleteBecauseNoMoveTarget,
    /// `removed` block without destroy.
    ForgetBecauseRemoved,
    /// An object a `create_before_destroy` replacement put aside, whose delete did not
    /// finish: it is deleted now.
    DeleteBecauseDeposed,
    /// A deposed object that is already gone: only its record goes.
    ForgetBecauseGone,
    ReadBecauseConfigUnknown,
    ReadBecauseDependencyPending,
}

/// The plan's names for the shared address types (one mode and one instance key for plan,
/// state and graph).
pub use crate::addrs::{InstanceKey, ResourceMode as Mode};

/// Why one field changes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FieldReason {
    /// The configuration sets a new value.
    Configuration,
    /// The live value moved away from the last applied value; the plan puts it back.
    Drift,
    /// The value is only known after apply (server-assigned, or depends on one).
    KnownAfterApply,
    /// The object is created.
    Create,
    /// The object is deleted.
    Delete,
}

/// One changed field of a resource instance.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FieldChange {
    pub path: Vec<PathStep>,
    /// The last applied value (from state); `None` when absent.
    #[serde(default, skip_serializing_if = "Option::is_none", with = "present")]
    pub before: Option<SerValue>,
    /// The planned value; `Some(Unknown)` when known only after apply.
    #[serde(default, skip_serializing_if = "Option::is_none", with = "present")]
    pub after: Option<SerValue>,
    /// The live value read from the service, when refreshed.
    #[serde(default, skip_serializing_if = "Option::is_none", with = "present")]
    pub live: Option<SerValue>,
    pub reason: FieldReason,
    /// This field's change is why the instance is replaced.
    pub forces_replacement: bool,
    pub sensitive: bool,
}

/// One resource instance in the plan.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(try_from = "ResourceChangeWire")]
pub struct ResourceChange {
    /// `TYPE.NAME`, `TYPE.NAME[0]`, `TYPE.NAME["key"]`, `data.TYPE.NAME`, in its module
    /// instance (`module.src["mysql"].TYPE.NAME`). Saved plans and JSON write it as text and
    /// in parts (see [`ResourceChangeWire`]).
    pub addr: crate::addrs::InstanceAddr,
    pub provider: String,
    pub action: Action,
    pub reason: Option<ActionReason>,
    /// The object's id when it exists already.
    pub id: Option<String>,
    /// The object before: last applied values merged with live computed values. `None` for
    /// creates.
    pub before: Option<SerObject>,
    /// The object after: planned values; unknown leaves are `Value::Unknown`. `None` for
    /// deletes.
    pub after: Option<SerObject>,
    /// Every field that differs between `before` and `after`, with its reason.
    pub fields: Vec<FieldChange>,
    /// Paths (without list indexes) that are nested blocks rather than attributes, so the
    /// renderers can write `task { … }` instead of `task = [ … ]`. The schema's, shared by
    /// every change of its kind: a kind of many nested blocks has hundreds of them, which a
    /// copy per instance (and per node of an apply) spent most of its time on.
    pub block_paths: std::sync::Arc<Vec<Vec<String>>>,
    /// Keyed blocks (paths without list indexes) with their key attribute: a changed `task`
    /// always shows its `task_key`, so a reviewer knows which one changes. Shared as
    /// `block_paths` is.
    pub block_keys: std::sync::Arc<Vec<(Vec<String>, String)>>,
    /// Paths of sensitive attributes; their values are never rendered.
    pub sensitive_paths: Vec<Vec<PathStep>>,
    /// Set when the instance is being imported: the id it is imported from.
    pub importing: Option<String>,
    /// For a delete or replace that deletes what lies inside the object: what goes with it.
    pub contents: Option<Contents>,
    /// Set when this instance is deleted or replaced because the container it lies in is:
    /// the container's address.
    pub container: Option<crate::addrs::InstanceAddr>,
    /// Set when a `moved` block (or `state mv`) renamed the instance: its address before.
    pub moved_from: Option<crate::addrs::InstanceAddr>,
    /// Set for the delete of an object a `create_before_destroy` replacement put aside (its
    /// delete failed or was interrupted): `id` is that object's, and the address belongs to
    /// its replacement.
    pub deposed: bool,
    /// What this instance depends on: the engine names resources (addresses without a
    /// key, each standing for all of its instances); an address with a key names that one
    /// instance.
    pub dependencies: Vec<crate::addrs::InstanceAddr>,
    /// For a replacement: what the object it replaces depended on when it was made (from
    /// state), which orders that object's delete; `None` (a plan saved before this was
    /// recorded) orders it by `dependencies`.
    pub replaced_dependencies: Option<Vec<crate::addrs::InstanceAddr>>,
}

/// A resource change as saved plans and `show -json` write it: the address as text and in
/// parts, then the change (see [`ResourceChange`] for the fields).
#[derive(Deserialize)]
struct ResourceChangeWire {
    address: String,
    /// Left out for the root module.
    #[serde(default, rename = "module_address")]
    module: Option<crate::addrs::ModuleInstance>,
    mode: Mode,
    type_name: String,
    name: String,
    index: Option<InstanceKey>,
    provider: String,
    action: Action,
    reason: Option<ActionReason>,
    id: Option<String>,
    before: Option<SerObject>,
    after: Option<SerObject>,
    fields: Vec<FieldChange>,
    block_paths: Vec<Vec<String>>,
    #[serde(default)]
    block_keys: Vec<(Vec<String>, String)>,
    sensitive_paths: Vec<Vec<PathStep>>,
    importing: Option<String>,
    #[serde(default)]
    contents: Option<Contents>,
    #[serde(default)]
    container: Option<String>,
    moved_from: Option<String>,
    #[serde(default)]
    deposed: bool,
    dependencies: Vec<String>,
    #[serde(default)]
    replaced_dependencies: Option<Vec<String>>,
}

impl TryFrom<ResourceChangeWire> for ResourceChange {
    type Error = crate::addrs::RecordedAddressError;

    fn try_from(w: ResourceChangeWire) -> Result<Self, Self::Error> {
        let addr = crate::addrs::InstanceAddr::from_recorded(
            &w.address,
            w.module.as_ref(),
            w.mode,
            &w.type_name,
            &w.name,
            &w.index,
        )?;
        // The addresses a change names besides its own, read here so a malformed one is
        // refused naming its field.
        use crate::addrs::{FieldAddressError, InstanceAddr};
        let one = |field, text: &Option<String>| {
            text.as_deref()
                .map(|t| FieldAddressError::parse(&addr, field, t, InstanceAddr::parse))
                .transpose()
        };
        let all = |field, texts: &[String]| {
            texts
                .iter()
                .map(|t| FieldAddressError::parse(&addr, field, t, InstanceAddr::parse))
                .collect::<Result<Vec<_>, _>>()
        };
        let container = one("container", &w.container)?;
        let moved_from = one("moved_from", &w.moved_from)?;
        let dependencies = all("dependencies", &w.dependencies)?;
        let replaced_dependencies = w
            .replaced_dependencies
            .as_deref()
            .map(|d| all("replaced_dependencies", d))
            .transpose()?;
        Ok(ResourceChange {
            addr,
            provider: w.provider,
            action: w.action,
            reason: w.reason,
            id: w.id,
            before: w.before,
            after: w.after,
            fields: w.fields,
            block_paths: w.block_paths.into(),
            block_keys: w.block_keys.into(),
            sensitive_paths: w.sensitive_paths,
            importing: w.importing,
            contents: w.contents,
            container,
            moved_from,
            deposed: w.deposed,
            dependencies,
            replaced_dependencies,
        })
    }
}

impl Serialize for ResourceChange {
    /// Field by field in the wire's order, the address's parts written from the one address,
    /// without copying the objects.
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let mut out = s.serialize_struct("ResourceChange", 23)?;
        self.addr.serialize_parts(&mut out, &PLAN_PARTS)?;
        out.serialize_field("provider", &self.provider)?;
        out.serialize_field("action", &self.action)?;
        out.serialize_field("reason", &self.reason)?;
        out.serialize_field("id", &self.id)?;
        out.serialize_field("before", &self.before)?;
        out.serialize_field("after", &self.after)?;
        out.serialize_field("fields", &self.fields)?;
        out.serialize_field("block_paths", &*self.block_paths)?;
        if self.block_keys.is_empty() {
            out.skip_field("block_keys")?;
        } else {
            out.serialize_field("block_keys", &*self.block_keys)?;
        }
        out.serialize_field("sensitive_paths", &self.sensitive_paths)?;
        out.serialize_field("importing", &self.importing)?;
        match &self.contents {
            None => out.skip_field("contents")?,
            Some(contents) => out.serialize_field("contents", contents)?,
        }
        match &self.container {
            None => out.skip_field("container")?,
            Some(container) => out.serialize_field("container", container)?,
        }
        out.serialize_field("moved_from", &self.moved_from)?;
        if self.deposed {
            out.serialize_field("deposed", &self.deposed)?;
        } else {
            out.skip_field("deposed")?;
        }
        out.serialize_field("dependencies", &self.dependencies)?;
        match &self.replaced_dependencies {
            None => out.skip_field("replaced_dependencies")?,
            Some(deps) => out.serialize_field("replaced_dependencies", deps)?,
        }
        out.end()
    }
}

/// Saved plans' names for the parts of an instance's address.
const PLAN_PARTS: crate::addrs::PartNames = crate::addrs::PartNames {
    address: "address",
    module: "module_address",
    mode: "mode",
    type_name: "type_name",
    name: "name",
    key: "index",
};

/// What a container's delete takes with it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Contents {
    /// Managed instances inside it; each has its own delete or replace in the plan.
    /// Written as their text.
    pub managed: Vec<crate::addrs::InstanceAddr>,
    /// Locations of the live objects inside it that this state does not manage, as the
    /// plan saw them (`None` when they could not be listed: an offline plan). Apply refuses
    /// to delete the container when they differ.
    pub unmanaged: Option<Vec<String>>,
}

/// A change made outside brickform, found by refresh.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Drift {
    /// The instance, written as its text (beside its type and name, as plans always have).
    pub address: crate::addrs::InstanceAddr,
    pub type_name: String,
    pub name: String,
    /// The object no longer exists.
    pub deleted: bool,
    /// `before` = last applied, `after` = live value.
    pub fields: Vec<FieldChange>,
    pub block_paths: Vec<Vec<String>>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub block_keys: Vec<(Vec<String>, String)>,
    pub sensitive_paths: Vec<Vec<PathStep>>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OutputChange {
    pub name: String,
    /// Create, Update, Delete or NoOp.
    pub action: Action,
    #[serde(default, skip_serializing_if = "Option::is_none", with = "present")]
    pub before: Option<SerValue>,
    #[serde(default, skip_serializing_if = "Option::is_none", with = "present")]
    pub after: Option<SerValue>,
    pub sensitive: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum PlanMode {
    #[default]
    Normal,
    Destroy,
    RefreshOnly,
}

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Plan {
    pub mode: PlanMode,
    pub environment: String,
    /// Instances in apply order (dependencies first); no-ops included.
    pub changes: Vec<ResourceChange>,
    pub drift: Vec<Drift>,
    pub outputs: Vec<OutputChange>,
    /// Plan-level warnings (targeting in effect, upper-case names, …).
    pub warnings: Vec<String>,
    /// What the changes do to data: tables dropped or loaded again, streaming state reset.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub data_impact: Vec<DataImpact>,
    /// `--target` was given.
    pub targeted: bool,
    /// What the plan was made from, for its JSON form (absent from plans saved before it).
    #[serde(default)]
    pub context: PlanContext,
}

/// What a plan was made from beyond its changes, for the JSON form's Terraform sections
/// (`variables`, `configuration`, `relevant_attributes`, `timestamp`, provider addresses).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct PlanContext {
    /// When the plan was made: RFC 3339, UTC, whole seconds. Empty when unknown.
    #[serde(default)]
    pub timestamp: String,
    /// The root variables' values; sensitive ones are left out.
    #[serde(default)]
    pub variables: std::collections::BTreeMap<String, SerValue>,
    /// Every provider by local name, with its source address
    /// (`registry.terraform.io/NAMESPACE/TYPE`).
    #[serde(default)]
    pub providers: std::collections::BTreeMap<String, String>,
    /// The configuration as Terraform's JSON plan describes it: expressions, not values.
    #[serde(default)]
    pub configuration: serde_json::Value,
    /// The resource attributes the configuration's references read.
    #[serde(default)]
    pub relevant_attributes: Vec<serde_json::Value>,
    /// The attributes each kind of the plan declares (by [`PlanContext::kind_key`]): the JSON
    /// form lists every one, unset ones as null, as Terraform's does, while a configuration's
    /// nested blocks hold only what is set.
    #[serde(default)]
    pub declared: std::collections::BTreeMap<String, Vec<Declared>>,
}

/// The attributes one block of a schema declares: the kind's own at the empty path, a
/// nested block's at its path (block names, no indexes).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Declared {
    pub block: Vec<String>,
    pub attributes: Vec<String>,
}

impl PlanContext {
    /// How [`PlanContext::declared`] names a kind: its type, `data.` before a data source's.
    pub fn kind_key(mode: Mode, type_name: &str) -> String {
        match mode {
            Mode::Managed => type_name.to_string(),
            Mode::Data => format!("data.{type_name}"),
        }
    }

    /// `o` with every attribute its kind declares and every nested block: null where unset
    /// or absent. As it is when the kind is not known.
    pub fn completed(&self, mode: Mode, type_name: &str, o: &Object) -> Value {
        let mut v = Value::object(o.clone());
        if let Some(declared) = self.declared.get(&Self::kind_key(mode, type_name)) {
            complete_declared(&mut v, &mut Vec::new(), &Shape::of(declared));
        }
        v
    }
}

/// A kind's blocks by path, each with its attributes and the names of the blocks nested
/// directly in it: [`PlanContext::declared`] indexed once for every object completed.
struct Shape<'d>(HashMap<&'d [String], (&'d [String], Vec<&'d String>)>);

impl<'d> Shape<'d> {
    fn of(declared: &'d [Declared]) -> Self {
        let mut by_block: HashMap<&[String], (&[String], Vec<&String>)> = declared
            .iter()
            .map(|d| (d.block.as_slice(), (d.attributes.as_slice(), Vec::new())))
            .collect();
        for d in declared {
            if let Some((name, parent)) = d.block.split_last()
                && let Some((_, children)) = by_block.get_mut(parent)
            {
                children.push(name);
            }
        }
        Shape(by_block)
    }
}

fn complete_declared(v: &mut Value, path: &mut Vec<String>, shape: &Shape<'_>) {
    match v {
        Value::List(items) => {
            for item in items {
                complete_declared(item, path, shape);
            }
        }
        Value::Object(o) => {
            let Some((attributes, children)) = shape.0.get(path.as_slice()) else {
                return;
            };
            let o = Arc::make_mut(o);
            for name in attributes.iter().chain(children.iter().copied()) {
                if !o.contains_key(name) {
                    o.insert(name.clone(), Value::Null);
                }
            }
            for (name, inner) in o.iter_mut() {
                if children.contains(&name) {
                    path.push(name.clone());
                    complete_declared(inner, path, shape);
                    path.pop();
                }
            }
        }
        _ => {}
    }
}

/// Counts for the summary line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Summary {
    pub add: usize,
    pub change: usize,
    pub destroy: usize,
    pub import: usize,
    pub forget: usize,
    pub moved: usize,
}

impl Plan {
    pub fn summary(&self) -> Summary {
        let mut s = Summary::default();
        for c in &self.changes {
            if c.mode() == Mode::Data {
                continue;
            }
            match c.action {
                Action::Create => s.add += 1,
                Action::Update => s.change += 1,
                Action::Delete => s.destroy += 1,
                Action::DeleteThenCreate | Action::CreateThenDelete => {
                    s.add += 1;
                    s.destroy += 1
                }
                Action::Forget => s.forget += 1,
                Action::NoOp | Action::Read => {}
            }
            if c.importing.is_some() {
                s.import += 1;
            }
            if c.moved_from.is_some() {
                s.moved += 1;
            }
        }
        s
    }

    /// The plan's warnings as the renderers show them: what the changes do to data first
    /// (one warning, an item a line), then the rest.
    pub fn shown_warnings(&self) -> Vec<String> {
        let mut out = Vec::with_capacity(self.warnings.len() + 1);
        if !self.data_impact.is_empty() {
            let mut w = String::from("Data goes with these changes");
            for d in &self.data_impact {
                w.push_str(&format!("\n{}: {}", d.address, d.message));
                if let Some(tables) = d.tables.as_ref().filter(|t| !t.is_empty()) {
                    w.push_str(&format!(": {}", tables.join(", ")));
                }
                if let Some(h) = &d.hint {
                    w.push_str(&format!("\n  ({h})"));
                }
            }
            out.push(w);
        }
        out.extend(self.warnings.iter().cloned());
        out
    }

    /// True when applying would change infrastructure, state or outputs.
    pub fn has_changes(&self) -> bool {
        let s = self.summary();
        s.add + s.change + s.destroy + s.import + s.forget + s.moved > 0
            || self.outputs.iter().any(|o| o.action != Action::NoOp)
            || (self.mode == PlanMode::RefreshOnly && !self.drift.is_empty())
    }
}

/// True when `path` is `prefix` or lies inside it. A prefix may leave out list indexes
/// (`task.secret` covers `task[0].secret`), because sensitivity and block shape are declared
/// per attribute, not per element.
pub fn path_within(path: &[PathStep], prefix: &[PathStep]) -> bool {
    let mut p = path.iter().peekable();
    for step in prefix {
        loop {
            match p.next() {
                Some(s) if s == step => break,
                Some(PathStep::Index(_)) if matches!(step, PathStep::Key(_)) => continue,
                _ => return false,
            }
        }
    }
    true
}

/// Writes `v` at `path` inside `root`, creating objects and lists on the way. Lists are padded
/// with nulls, so a sparse set of field changes can be laid out as (partial) objects.
pub fn set_path(root: &mut Value, path: &[PathStep], v: Value) {
    let Some((first, rest)) = path.split_first() else {
        *root = v;
        return;
    };
    match first {
        PathStep::Key(k) => {
            if !matches!(root, Value::Object(_)) {
                *root = Value::Object(Default::default());
            }
            if let Value::Object(o) = root {
                set_path(
                    Arc::make_mut(o).entry(k.clone()).or_insert(Value::Null),
                    rest,
                    v,
                );
            }
        }
        PathStep::Index(i) => {
            if !matches!(root, Value::List(_)) {
                *root = Value::List(Vec::new());
            }
            if let Value::List(l) = root {
                if l.len() <= *i {
                    l.resize(*i + 1, Value::Null);
                }
                set_path(&mut l[*i], rest, v);
            }
        }
    }
}

fn sensitive_in(path: &[PathStep], declared: &[Vec<PathStep>], fields: &[FieldChange]) -> bool {
    declared.iter().any(|s| path_within(path, s))
        || fields
            .iter()
            .any(|f| f.sensitive && path_within(path, &f.path))
}

/// Lays out field changes as two partial objects (`before`, `after`), for callers that only have
/// the changed fields of an object.
fn objects_from_fields(fields: &[FieldChange]) -> (Object, Object) {
    let mut before = Value::Object(Default::default());
    let mut after = Value::Object(Default::default());
    for f in fields {
        let get = |v: &Option<SerValue>| v.as_ref().map(|v| v.0.clone()).unwrap_or_default();
        set_path(&mut before, &f.path, get(&f.before));
        set_path(&mut after, &f.path, get(&f.after));
    }
    let into_obj = |v: Value| match v {
        Value::Object(o) => Arc::unwrap_or_clone(o),
        _ => Object::default(),
    };
    (into_obj(before), into_obj(after))
}

#[cfg(test)]
impl ResourceChange {
    /// A managed instance's change with nothing but its names and action set: what unit
    /// tests start from.
    pub(crate) fn bare(type_name: &str, name: &str, provider: &str, action: Action) -> Self {
        ResourceChange {
            addr: crate::addrs::ResourceAddr::new(Mode::Managed, type_name, name).instance(None),
            provider: provider.to_string(),
            action,
            reason: None,
            id: None,
            before: None,
            after: None,
            fields: Vec::new(),
            block_paths: Default::default(),
            block_keys: Default::default(),
            sensitive_paths: Vec::new(),
            importing: None,
            contents: None,
            container: None,
            moved_from: None,
            deposed: false,
            dependencies: Vec::new(),
            replaced_dependencies: None,
        }
    }
}

impl ResourceChange {
    /// True when the value at `path` must never be shown: declared sensitive, or inside a
    /// field marked sensitive.
    pub fn is_sensitive(&self, path: &[PathStep]) -> bool {
        sensitive_in(path, &self.sensitive_paths, &self.fields)
    }

    /// The address as text: `module.m["k"].TYPE.NAME[0]`.
    pub fn address(&self) -> String {
        self.addr.to_string()
    }

    /// The address without its instance key as text: `x.y["a"]` → `x.y`.
    pub fn resource_address(&self) -> String {
        self.addr.resource.to_string()
    }

    /// The resource block's address, without the instance key.
    pub fn resource(&self) -> &crate::addrs::ResourceAddr {
        &self.addr.resource
    }

    /// The module instance of the resource; the root module when it has no steps.
    pub fn module(&self) -> &crate::addrs::ModuleInstance {
        &self.addr.resource.module
    }

    pub fn mode(&self) -> Mode {
        self.addr.resource.mode
    }

    pub fn type_name(&self) -> &str {
        &self.addr.resource.type_name
    }

    pub fn name(&self) -> &str {
        &self.addr.resource.name
    }

    /// The instance key with `count` or `for_each`.
    pub fn key(&self) -> Option<&InstanceKey> {
        self.addr.key.as_ref()
    }
}

impl Drift {
    /// True when the value at `path` must never be shown.
    pub fn is_sensitive(&self, path: &[PathStep]) -> bool {
        sensitive_in(path, &self.sensitive_paths, &self.fields)
    }

    /// The drifted fields laid out as partial objects: (last applied, live).
    pub fn partial_objects(&self) -> (Object, Object) {
        objects_from_fields(&self.fields)
    }

    pub fn mode(&self) -> Mode {
        self.address.resource.mode
    }
}

impl Plan {
    /// Instances ordered by address, with count indexes in numeric order (`x[2]` before
    /// `x[10]`); reviewers look resources up by name, and Terraform lists them this way too.
    pub fn changes_by_address(&self) -> Vec<&ResourceChange> {
        let mut v: Vec<&ResourceChange> = self.changes.iter().collect();
        v.sort_by_cached_key(|c| (c.resource_address(), c.addr.key.clone()));
        v
    }
}

/// A [`Value`] that serialises with unknowns kept: `{"$unknown": true}` marks an unknown leaf
/// so saved plans round-trip. Renderers read the inner value.
#[derive(Debug, Clone, PartialEq)]
pub struct SerValue(pub Value);
/// An object of [`SerValue`]s.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct SerObject(pub Object);

const UNKNOWN_MARK: &str = "$unknown";

fn to_json_marked(v: &Value) -> serde_json::Value {
    match v {
        Value::Unknown => serde_json::json!({ UNKNOWN_MARK: true }),
        Value::List(l) => serde_json::Value::Array(l.iter().map(to_json_marked).collect()),
        Value::Object(o) => serde_json::Value::Object(
            o.iter()
                .map(|(k, v)| (k.clone(), to_json_marked(v)))
                .collect(),
        ),
        other => other.to_json(),
    }
}

fn from_json_marked(j: &serde_json::Value) -> Value {
    match j {
        serde_json::Value::Object(o)
            if o.len() == 1 && o.get(UNKNOWN_MARK) == Some(&serde_json::Value::Bool(true)) =>
        {
            Value::Unknown
        }
        serde_json::Value::Object(o) => Value::Object(
            o.iter()
                .map(|(k, v)| (k.clone(), from_json_marked(v)))
                .collect::<crate::value::Object>()
                .into(),
        ),
        serde_json::Value::Array(a) => Value::List(a.iter().map(from_json_marked).collect()),
        other => Value::from_json(other),
    }
}

impl Serialize for SerValue {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        to_json_marked(&self.0).serialize(s)
    }
}
impl<'de> Deserialize<'de> for SerValue {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let j = serde_json::Value::deserialize(d)?;
        Ok(SerValue(from_json_marked(&j)))
    }
}
/// `Option<SerValue>` in saved plans: `None` is left out and `Some` is written even when it
/// holds null, so a planned null (`after` of a removed map) does not come back as "absent"
/// — serde's default reads `null` as `None` — and a saved plan compares equal to the same
/// plan made again.
mod present {
    use super::SerValue;
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    pub fn serialize<S: Serializer>(v: &Option<SerValue>, s: S) -> Result<S::Ok, S::Error> {
        match v {
            Some(v) => v.serialize(s),
            None => s.serialize_none(),
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<SerValue>, D::Error> {
        SerValue::deserialize(d).map(Some)
    }
}

impl Serialize for SerObject {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        to_json_marked(&Value::object(self.0.clone())).serialize(s)
    }
}
impl<'de> Deserialize<'de> for SerObject {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        match from_json_marked(&serde_json::Value::deserialize(d)?) {
            Value::Object(o) => Ok(SerObject(Arc::unwrap_or_clone(o))),
            _ => Err(serde::de::Error::custom("expected an object")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Changes as saved plans wrote them before the address was one typed value: every
    /// field in its place, the optional ones left out or present.
    const SAVED_CHANGES: [&str; 2] = [
        r#"{"address":"databricks_job.j[0]","mode":"managed","type_name":"databricks_job","name":"j","index":0,"provider":"databricks","action":"update","reason":null,"id":"1","before":{"a":1},"after":{"a":{"$unknown":true}},"fields":[],"block_paths":[["task"]],"sensitive_paths":[],"importing":null,"moved_from":"databricks_job.old[0]","dependencies":["databricks_catalog.c"]}"#,
        r#"{"address":"module.m[\"k\"].data.t.n[\"a\"]","module_address":"module.m[\"k\"]","mode":"data","type_name":"t","name":"n","index":"a","provider":"p.alias","action":"delete","reason":"delete_because_deposed","id":"x","before":null,"after":null,"fields":[],"block_paths":[],"block_keys":[[["task"],"task_key"]],"sensitive_paths":[],"importing":"i","contents":{"managed":["t.m"],"unmanaged":null},"container":"t.c","moved_from":null,"deposed":true,"dependencies":[],"replaced_dependencies":["t.d"]}"#,
    ];

    #[test]
    fn a_saved_change_reads_back_byte_for_byte() {
        for text in SAVED_CHANGES {
            let c: ResourceChange = serde_json::from_str(text).unwrap();
            assert_eq!(serde_json::to_string(&c).unwrap(), text);
        }
        let c: ResourceChange = serde_json::from_str(SAVED_CHANGES[1]).unwrap();
        assert_eq!(c.mode(), Mode::Data);
        assert_eq!(c.module().to_string(), "module.m[\"k\"]");
        assert_eq!((c.type_name(), c.name()), ("t", "n"));
        assert_eq!(c.key(), Some(&InstanceKey::Key("a".into())));
        assert_eq!(c.resource_address(), "module.m[\"k\"].data.t.n");
    }

    #[test]
    fn a_saved_change_whose_parts_disagree_with_its_address_does_not_load() {
        let good: serde_json::Value = serde_json::from_str(SAVED_CHANGES[1]).unwrap();
        for (field, value, message) in [
            (
                "address",
                serde_json::json!("not an address"),
                "invalid resource address",
            ),
            (
                "module_address",
                serde_json::json!("module.m"),
                "its module `module.m` disagrees",
            ),
            (
                "mode",
                serde_json::json!("managed"),
                "its mode `managed` disagrees",
            ),
            (
                "type_name",
                serde_json::json!("u"),
                "its type `u` disagrees",
            ),
            ("name", serde_json::json!("o"), "its name `o` disagrees"),
            ("index", serde_json::json!(1), "its index key `1` disagrees"),
        ] {
            let mut bad = good.clone();
            bad[field] = value;
            let error = serde_json::from_value::<ResourceChange>(bad)
                .unwrap_err()
                .to_string();
            assert!(error.contains(message), "{field}: {error}");
        }
    }

    #[test]
    fn a_saved_change_naming_a_malformed_address_does_not_load_and_says_where() {
        let good: serde_json::Value = serde_json::from_str(SAVED_CHANGES[1]).unwrap();
        for (field, value) in [
            ("container", serde_json::json!("t c")),
            ("moved_from", serde_json::json!("t.")),
            ("dependencies", serde_json::json!(["t.ok", "1t.n"])),
            ("replaced_dependencies", serde_json::json!(["t.n[x]"])),
        ] {
            let mut bad = good.clone();
            bad[field] = value;
            let error = serde_json::from_value::<ResourceChange>(bad)
                .unwrap_err()
                .to_string();
            assert!(
                error.contains(&format!(
                    "resource `module.m[\"k\"].data.t.n[\"a\"]`: its {field}: invalid resource address"
                )),
                "{field}: {error}"
            );
        }
        // The addresses it names are read as addresses, and written back as they were.
        let c: ResourceChange = serde_json::from_str(SAVED_CHANGES[0]).unwrap();
        assert_eq!(
            c.moved_from,
            Some(crate::addrs::InstanceAddr::parse("databricks_job.old[0]").unwrap())
        );
        assert_eq!(
            c.dependencies[0]
                .whole()
                .map(ToString::to_string)
                .as_deref(),
            Some("databricks_catalog.c")
        );
        let c: ResourceChange = serde_json::from_str(SAVED_CHANGES[1]).unwrap();
        assert_eq!(
            c.container.as_ref().map(ToString::to_string).as_deref(),
            Some("t.c")
        );
    }

    /// A kind's details become fields of the entry, except one named like a field the
    /// entry has of its own, which would be written twice.
    #[test]
    fn a_kinds_details_are_kept_but_never_in_place_of_the_entrys_own_fields() {
        use crate::plan::DataEffect;
        let found = DataEffect {
            kind: DataImpactKind::FullRefresh,
            tables: None,
            details: [
                ("part".to_string(), "load".to_string()),
                ("address".into(), "elsewhere".into()),
                ("message".into(), "other".into()),
            ]
            .into(),
            message: "m".into(),
            hint: None,
        };
        let i = DataImpact::of(crate::addrs::InstanceAddr::parse("t.n").unwrap(), found);
        assert_eq!(i.details, [("part".to_string(), "load".to_string())].into());
        assert_eq!(
            serde_json::to_value(&i).unwrap(),
            serde_json::json!({"address": "t.n", "kind": "full_refresh", "part": "load", "message": "m"})
        );
    }

    #[test]
    fn a_saved_drift_and_data_impact_read_back_byte_for_byte_and_refuse_a_malformed_address() {
        let drift = r#"{"address":"module.m[\"k\"].t.n[\"a.b\"]","type_name":"t","name":"n","deleted":true,"fields":[],"block_paths":[],"sensitive_paths":[]}"#;
        let impact = r#"{"address":"t.n[0]","kind":"tables_dropped","message":"m"}"#;
        let d: Drift = serde_json::from_str(drift).unwrap();
        assert_eq!(d.address.resource.module.to_string(), "module.m[\"k\"]");
        assert_eq!(d.mode(), Mode::Managed);
        assert_eq!(serde_json::to_string(&d).unwrap(), drift);
        let i: DataImpact = serde_json::from_str(impact).unwrap();
        assert_eq!(i.address.key, Some(InstanceKey::Index(0)));
        assert!(i.details.is_empty(), "saved before details were written");
        assert_eq!(serde_json::to_string(&i).unwrap(), impact);
        // Details are fields of the entry, between what it concerns and its message.
        let detailed = r#"{"address":"t.n","kind":"dataset_type_changed","file":"/f","part":"p","message":"m","hint":"h"}"#;
        let i: DataImpact = serde_json::from_str(detailed).unwrap();
        assert_eq!(
            i.details,
            [
                ("file".to_string(), "/f".to_string()),
                ("part".into(), "p".into())
            ]
            .into()
        );
        assert_eq!(i.hint.as_deref(), Some("h"));
        assert_eq!(serde_json::to_string(&i).unwrap(), detailed);
        let error = serde_json::from_str::<DataImpact>(&impact.replace("t.n[0]", "t.n[x]"))
            .unwrap_err()
            .to_string();
        assert!(
            error.contains("invalid resource address `t.n[x]`"),
            "{error}"
        );
        assert!(serde_json::from_str::<Drift>(&drift.replace("t.n", "t n")).is_err());
    }

    #[test]
    fn unknowns_survive_serialisation() {
        let v = SerValue(Value::List(vec![Value::Unknown, Value::from("x")]));
        let s = serde_json::to_string(&v).unwrap();
        assert_eq!(s, r#"[{"$unknown":true},"x"]"#);
        let back: SerValue = serde_json::from_str(&s).unwrap();
        assert_eq!(back, v);
    }

    #[test]
    fn a_planned_null_is_not_read_back_as_absent() {
        let field = |after| FieldChange {
            path: vec![PathStep::Key("tags".into())],
            before: Some(SerValue(Value::from("x"))),
            after,
            live: None,
            reason: FieldReason::Drift,
            forces_replacement: false,
            sensitive: false,
        };
        for f in [field(Some(SerValue(Value::Null))), field(None)] {
            let back: FieldChange =
                serde_json::from_str(&serde_json::to_string(&f).unwrap()).unwrap();
            assert_eq!(back, f);
        }
        let out = OutputChange {
            name: "o".into(),
            action: Action::Update,
            before: Some(SerValue(Value::Null)),
            after: None,
            sensitive: false,
        };
        let back: OutputChange =
            serde_json::from_str(&serde_json::to_string(&out).unwrap()).unwrap();
        assert_eq!(back, out);
    }
}
