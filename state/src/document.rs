//! The state document (docs/architecture.md, State): what brickform last applied in one
//! environment.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use uuid::Uuid;

use crate::address::{
    InstanceAddr, InstanceKey, ModuleInstance, RecordedAddressError, ResourceAddr, ResourceMode,
};
use crate::error::{Result, StateError};
use crate::fingerprint;

/// The document format version this crate writes and the newest it reads.
pub const STATE_VERSION: u32 = 1;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ResourceStatus {
    Tainted,
}

/// One resource instance as last applied.
///
/// The file records the address twice, as text (`address`) and in parts (`module`, `mode`,
/// `type`, `name`, `index_key`), as Terraform does; here it is one [`InstanceAddr`], and a
/// file whose parts disagree with the text does not load.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(try_from = "ResourceStateWire")]
pub struct ResourceState {
    pub addr: InstanceAddr,
    pub provider: String,
    pub id: String,
    /// Last-applied desired attributes, references resolved, sensitive values removed.
    pub config: Map<String, Value>,
    /// Server-assigned attributes that other resources may reference.
    pub computed: Map<String, Value>,
    /// Attribute path (`options.password`) to the salted fingerprint of its value.
    pub sensitive: BTreeMap<String, String>,
    pub dependencies: Vec<String>,
    pub schema_version: u32,
    pub status: Option<ResourceStatus>,
    pub create_before_destroy: bool,
}

/// A resource as the state file writes it.
#[derive(Deserialize)]
struct ResourceStateWire {
    address: String,
    /// Left out for the root module.
    #[serde(default)]
    module: Option<ModuleInstance>,
    mode: ResourceMode,
    #[serde(rename = "type")]
    resource_type: String,
    name: String,
    index_key: Option<InstanceKey>,
    provider: String,
    id: String,
    #[serde(default)]
    config: Map<String, Value>,
    #[serde(default)]
    computed: Map<String, Value>,
    #[serde(default)]
    sensitive: BTreeMap<String, String>,
    #[serde(default)]
    dependencies: Vec<String>,
    #[serde(default)]
    schema_version: u32,
    #[serde(default)]
    status: Option<ResourceStatus>,
    #[serde(default)]
    create_before_destroy: bool,
}

impl TryFrom<ResourceStateWire> for ResourceState {
    type Error = RecordedAddressError;

    fn try_from(w: ResourceStateWire) -> std::result::Result<Self, RecordedAddressError> {
        let addr = InstanceAddr::from_recorded(
            &w.address,
            w.module.as_ref(),
            w.mode,
            &w.resource_type,
            &w.name,
            &w.index_key,
        )?;
        Ok(ResourceState {
            addr,
            provider: w.provider,
            id: w.id,
            config: w.config,
            computed: w.computed,
            sensitive: w.sensitive,
            dependencies: w.dependencies,
            schema_version: w.schema_version,
            status: w.status,
            create_before_destroy: w.create_before_destroy,
        })
    }
}

impl Serialize for ResourceState {
    /// Field by field in the file's order, the address's parts written from the one address,
    /// without copying the attributes.
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let r = &self.addr.resource;
        let mut out = s.serialize_struct("ResourceState", 15)?;
        out.serialize_field("address", &self.addr.to_string())?;
        if r.module.is_root() {
            out.skip_field("module")?;
        } else {
            out.serialize_field("module", &r.module)?;
        }
        out.serialize_field("mode", &r.mode)?;
        out.serialize_field("type", &r.type_name)?;
        out.serialize_field("name", &r.name)?;
        out.serialize_field("index_key", &self.addr.key)?;
        out.serialize_field("provider", &self.provider)?;
        out.serialize_field("id", &self.id)?;
        out.serialize_field("config", &self.config)?;
        out.serialize_field("computed", &self.computed)?;
        out.serialize_field("sensitive", &self.sensitive)?;
        out.serialize_field("dependencies", &self.dependencies)?;
        out.serialize_field("schema_version", &self.schema_version)?;
        match &self.status {
            None => out.skip_field("status")?,
            Some(status) => out.serialize_field("status", status)?,
        }
        out.serialize_field("create_before_destroy", &self.create_before_destroy)?;
        out.end()
    }
}

impl ResourceState {
    /// A resource with empty attributes at the address given as text.
    pub fn new(address: &str, provider: &str, id: &str) -> Result<ResourceState> {
        Ok(ResourceState::at(
            InstanceAddr::parse(address)?,
            provider,
            id,
        ))
    }

    /// A resource with empty attributes at `addr`.
    pub fn at(addr: InstanceAddr, provider: &str, id: &str) -> ResourceState {
        ResourceState {
            addr,
            provider: provider.to_string(),
            id: id.to_string(),
            config: Map::new(),
            computed: Map::new(),
            sensitive: BTreeMap::new(),
            dependencies: Vec::new(),
            schema_version: 0,
            status: None,
            create_before_destroy: false,
        }
    }

    /// The address as text: `module.m["k"].TYPE.NAME[0]`.
    pub fn address(&self) -> String {
        self.addr.to_string()
    }

    /// The resource block's address, without the instance key.
    pub fn resource(&self) -> &ResourceAddr {
        &self.addr.resource
    }

    /// The module instance the resource belongs to (`module.src["mysql"]`), the root module
    /// when it has no module steps.
    pub fn module(&self) -> &ModuleInstance {
        &self.addr.resource.module
    }

    pub fn mode(&self) -> ResourceMode {
        self.addr.resource.mode
    }

    /// The resource type, written `type` in the file.
    pub fn type_name(&self) -> &str {
        &self.addr.resource.type_name
    }

    pub fn name(&self) -> &str {
        &self.addr.resource.name
    }

    /// The instance key with `count` or `for_each`, written `index_key` in the file.
    pub fn key(&self) -> Option<&InstanceKey> {
        self.addr.key.as_ref()
    }
}

/// An output value. A sensitive output keeps only its fingerprint, never its value.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OutputState {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    value: Option<Value>,
    sensitive: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    fingerprint: Option<String>,
}

impl OutputState {
    /// The value, absent for sensitive outputs.
    pub fn value(&self) -> Option<&Value> {
        // JSON reads `"value": null` back as no value at all; for an output that is not
        // sensitive, that is its value (an attribute the service left unset), not a secret.
        static NULL: Value = Value::Null;
        match &self.value {
            Some(v) => Some(v),
            None if !self.sensitive => Some(&NULL),
            None => None,
        }
    }
    pub fn sensitive(&self) -> bool {
        self.sensitive
    }
    pub fn fingerprint(&self) -> Option<&str> {
        self.fingerprint.as_deref()
    }
}

/// An instance `state rm` took out of the state while its object lives on. It is the state's
/// own evidence that the object is the one it managed: a later plan that finds an object of
/// this type under this id for the same address imports it rather than creating a second one
/// or refusing a name it took itself. Managing the address again (a create or an import)
/// clears it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Forgotten {
    pub address: String,
    #[serde(rename = "type")]
    pub resource_type: String,
    pub id: String,
}

/// The state of one environment.
///
/// Fields are private so the invariants hold: resources sorted by address with no duplicates,
/// the lineage never changes, the serial only moves forward through a backend's `save`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "RawDocument")]
pub struct StateDocument {
    version: u32,
    lineage: Uuid,
    serial: u64,
    environment: String,
    resources: Vec<ResourceState>,
    outputs: BTreeMap<String, OutputState>,
    salt: String,
    /// Sorted by address, one per address.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    forgotten: Vec<Forgotten>,
    /// Objects a `create_before_destroy` replacement put aside: the new copy holds the
    /// address, the old one is kept here until its delete is recorded, so a delete that
    /// failed or was interrupted is planned again rather than forgotten. Sorted by address
    /// and id.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    deposed: Vec<ResourceState>,
    /// Tokens of creates whose outcome is unknown and which cannot be looked up, by address:
    /// the create of a kind that takes a token (repeating it with the same token returns what
    /// the first call made) was cut off before its result, so the next create of the address
    /// sends the same token instead of a fresh one, and gets that object rather than a second.
    /// Recording the address's create (or an import) clears it.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pending_tokens: BTreeMap<String, String>,
}

/// Why a state file's contents break a document's invariants.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum InvalidDocument {
    #[error("resource `{0}` appears twice")]
    DuplicateResource(String),
    #[error("the salt is empty")]
    EmptySalt,
}

/// The wire shape, validated into a `StateDocument` so a hand-edited file cannot break the
/// sorted, duplicate-free invariant.
#[derive(Deserialize)]
struct RawDocument {
    version: u32,
    lineage: Uuid,
    serial: u64,
    environment: String,
    #[serde(default)]
    resources: Vec<ResourceState>,
    #[serde(default)]
    outputs: BTreeMap<String, OutputState>,
    salt: String,
    #[serde(default)]
    forgotten: Vec<Forgotten>,
    #[serde(default)]
    deposed: Vec<ResourceState>,
    #[serde(default)]
    pending_tokens: BTreeMap<String, String>,
}

impl TryFrom<RawDocument> for StateDocument {
    type Error = InvalidDocument;

    fn try_from(raw: RawDocument) -> std::result::Result<Self, InvalidDocument> {
        let mut resources = raw.resources;
        resources.sort_by_cached_key(ResourceState::address);
        if let Some(pair) = resources.windows(2).find(|w| w[0].addr == w[1].addr) {
            return Err(InvalidDocument::DuplicateResource(pair[0].address()));
        }
        if raw.salt.is_empty() {
            return Err(InvalidDocument::EmptySalt);
        }
        let mut forgotten = raw.forgotten;
        forgotten.sort_by(|a, b| a.address.cmp(&b.address));
        forgotten.dedup_by(|a, b| a.address == b.address);
        // An address back in the state is managed again.
        forgotten.retain(|f| {
            resources
                .binary_search_by(|r| r.addr.cmp_text(&f.address))
                .is_err()
        });
        let mut deposed = raw.deposed;
        sort_deposed(&mut deposed);
        deposed.dedup_by(|a, b| a.addr == b.addr && a.id == b.id);
        Ok(StateDocument {
            deposed,
            version: raw.version,
            lineage: raw.lineage,
            serial: raw.serial,
            environment: raw.environment,
            resources,
            outputs: raw.outputs,
            salt: raw.salt,
            forgotten,
            pending_tokens: raw.pending_tokens,
        })
    }
}

impl StateDocument {
    /// An empty state with a fresh lineage and salt, at serial 0 (the first save makes it 1).
    pub fn new(environment: &str) -> StateDocument {
        StateDocument {
            version: STATE_VERSION,
            lineage: Uuid::new_v4(),
            serial: 0,
            environment: environment.to_string(),
            resources: Vec::new(),
            outputs: BTreeMap::new(),
            salt: fingerprint::new_salt(),
            forgotten: Vec::new(),
            deposed: Vec::new(),
            pending_tokens: BTreeMap::new(),
        }
    }

    pub fn version(&self) -> u32 {
        self.version
    }
    pub fn lineage(&self) -> Uuid {
        self.lineage
    }
    pub fn serial(&self) -> u64 {
        self.serial
    }
    pub fn environment(&self) -> &str {
        &self.environment
    }
    pub fn salt(&self) -> &str {
        &self.salt
    }

    /// This state as the state of environment `environment`: what renaming an environment
    /// saves under the new name. Lineage and salt stay: the ownership tags on the objects
    /// name the lineage, and the fingerprints were made with the salt, so the objects remain
    /// this state's.
    pub fn moved_to(mut self, environment: &str) -> StateDocument {
        self.environment = environment.to_string();
        self
    }

    /// Called by backends as they persist the document; the serial counts persisted writes.
    /// Also re-sorts, so an address edited through `get_mut` cannot reach the disk unsorted.
    pub(crate) fn bump_serial(&mut self) {
        self.serial += 1;
        self.resources.sort_by_cached_key(ResourceState::address);
    }

    /// Resources sorted by address.
    pub fn resources(&self) -> &[ResourceState] {
        &self.resources
    }

    pub fn get(&self, address: &str) -> Option<&ResourceState> {
        self.position(address).ok().map(|i| &self.resources[i])
    }

    /// For in-place changes such as tainting. Change the address with `mv`, not through this:
    /// lookups rely on the sort order until the next save restores it.
    pub fn get_mut(&mut self, address: &str) -> Option<&mut ResourceState> {
        self.position(address).ok().map(|i| &mut self.resources[i])
    }

    /// Adds a resource that is not yet in the state.
    pub fn insert(&mut self, resource: ResourceState) -> Result<()> {
        let address = resource.address();
        match self.position(&address) {
            Ok(_) => Err(StateError::AddressExists(address)),
            Err(i) => {
                self.unforget(&address);
                self.resources.insert(i, resource);
                Ok(())
            }
        }
    }

    /// Replaces the resource at the same address; returns the old one.
    pub fn replace(&mut self, resource: ResourceState) -> Result<ResourceState> {
        let address = resource.address();
        match self.position(&address) {
            Ok(i) => Ok(std::mem::replace(&mut self.resources[i], resource)),
            Err(_) => Err(StateError::AddressNotFound(address)),
        }
    }

    /// Inserts or replaces; returns the resource it replaced, if any.
    pub fn upsert(&mut self, resource: ResourceState) -> Option<ResourceState> {
        let address = resource.address();
        match self.position(&address) {
            Ok(i) => Some(std::mem::replace(&mut self.resources[i], resource)),
            Err(i) => {
                self.unforget(&address);
                self.resources.insert(i, resource);
                None
            }
        }
    }

    pub fn remove(&mut self, address: &str) -> Option<ResourceState> {
        self.position(address)
            .ok()
            .map(|i| self.resources.remove(i))
    }

    /// The token of an unresolved create of `address` (see the field).
    pub fn pending_token(&self, address: &str) -> Option<&str> {
        self.pending_tokens.get(address).map(String::as_str)
    }

    /// Addresses holding a pending token, sorted.
    pub fn pending_token_addresses(&self) -> impl Iterator<Item = &str> {
        self.pending_tokens.keys().map(String::as_str)
    }

    /// Keeps `token` for the next create of `address` (see the field).
    pub fn set_pending_token(&mut self, address: &str, token: &str) {
        self.pending_tokens
            .insert(address.to_string(), token.to_string());
    }

    /// Drops the pending token of `address`, if any.
    pub fn clear_pending_token(&mut self, address: &str) -> Option<String> {
        self.pending_tokens.remove(address)
    }

    /// Objects put aside by `create_before_destroy` replacements (see the field), sorted by
    /// address and id.
    pub fn deposed(&self) -> &[ResourceState] {
        &self.deposed
    }

    /// Puts the object at `address` aside: it leaves the address (for its replacement) and
    /// stays in the state until `remove_deposed`.
    pub fn depose(&mut self, address: &str) -> Option<&ResourceState> {
        let old = self.remove(address)?;
        let old_address = old.address();
        let i = match self
            .deposed
            .binary_search_by(|d| d.addr.cmp_text(&old_address).then(d.id.cmp(&old.id)))
        {
            Ok(i) => {
                self.deposed[i] = old;
                i
            }
            Err(i) => {
                self.deposed.insert(i, old);
                i
            }
        };
        self.deposed.get(i)
    }

    /// Drops the deposed object `id` of `address` (its delete was recorded).
    pub fn remove_deposed(&mut self, address: &str, id: &str) -> Option<ResourceState> {
        let i = self
            .deposed
            .iter()
            .position(|d| d.id == id && d.addr.cmp_text(address).is_eq())?;
        Some(self.deposed.remove(i))
    }

    /// `state rm`: removes a resource whose object lives on, remembering its type and id for
    /// the address (see [`Forgotten`]).
    pub fn forget(&mut self, address: &str) -> Option<ResourceState> {
        let removed = self.remove(address)?;
        // What the instance put aside is let go of with it, as Terraform's `state rm` does.
        self.deposed.retain(|d| d.addr != removed.addr);
        let entry = Forgotten {
            address: removed.address(),
            resource_type: removed.type_name().to_string(),
            id: removed.id.clone(),
        };
        match self
            .forgotten
            .binary_search_by(|f| f.address.as_str().cmp(address))
        {
            Ok(i) => self.forgotten[i] = entry,
            Err(i) => self.forgotten.insert(i, entry),
        }
        Some(removed)
    }

    /// What `state rm` remembered for `address`.
    pub fn forgotten(&self, address: &str) -> Option<&Forgotten> {
        self.forgotten
            .binary_search_by(|f| f.address.as_str().cmp(address))
            .ok()
            .map(|i| &self.forgotten[i])
    }

    fn unforget(&mut self, address: &str) {
        if let Ok(i) = self
            .forgotten
            .binary_search_by(|f| f.address.as_str().cmp(address))
        {
            self.forgotten.remove(i);
        }
    }

    /// Renames a resource (a `moved` block or `state mv`), keeping its name and index key in step
    /// and rewriting other resources' dependencies on it, so destroy order survives the move.
    pub fn mv(&mut self, from: &str, to: &str) -> Result<()> {
        let invalid = |reason: &str| StateError::InvalidMove {
            from: from.to_string(),
            to: to.to_string(),
            reason: reason.to_string(),
        };
        let source = InstanceAddr::parse(from)?.resource;
        let target = InstanceAddr::parse(to)?;
        if source.mode != target.resource.mode || source.type_name != target.resource.type_name {
            return Err(invalid("a move keeps the resource type and mode"));
        }
        if self.get(to).is_some() {
            return Err(StateError::AddressExists(to.to_string()));
        }
        let mut resource = self
            .remove(from)
            .ok_or_else(|| StateError::AddressNotFound(from.to_string()))?;
        let moved_from = std::mem::replace(&mut resource.addr, target.clone());
        for other in &mut self.resources {
            for dep in &mut other.dependencies {
                if dep == from {
                    *dep = to.to_string();
                }
            }
        }
        self.upsert(resource);
        // What the instance put aside is deleted under its new name.
        for d in self.deposed.iter_mut().filter(|d| d.addr == moved_from) {
            d.addr = target.clone();
        }
        sort_deposed(&mut self.deposed);
        Ok(())
    }

    /// The addresses of what `from` names: the instance itself when the state holds it, or
    /// (for a resource address without a key) every instance of that resource.
    pub fn instances_of(&self, from: &str) -> Vec<String> {
        if self.get(from).is_some() {
            return vec![from.to_string()];
        }
        // A resource address (no key) takes the instances that have a key.
        let Ok(resource) = InstanceAddr::parse(from) else {
            return Vec::new();
        };
        if resource.key.is_some() {
            return Vec::new();
        }
        self.resources
            .iter()
            .filter(|r| r.addr.key.is_some() && r.addr.resource == resource.resource)
            .map(ResourceState::address)
            .collect()
    }

    /// Moves what `from` names ([`StateDocument::instances_of`]) to `to`: one instance, or
    /// every instance of a resource to the same key under `to` (as a `moved` block or
    /// `terraform state mv` without keys moves them); returns the addresses moved, old and
    /// new. Nothing moves when one of the new addresses is taken.
    pub fn mv_all(&mut self, from: &str, to: &str) -> Result<Vec<(String, String)>> {
        let found = self.instances_of(from);
        if found.is_empty() {
            return Err(StateError::AddressNotFound(from.to_string()));
        }
        if found.len() == 1 && found[0] == from {
            self.mv(from, to)?;
            return Ok(vec![(from.to_string(), to.to_string())]);
        }
        let target = InstanceAddr::parse(to)?;
        if target.key.is_some() {
            return Err(StateError::InvalidMove {
                from: from.to_string(),
                to: to.to_string(),
                reason: "the instances of a resource move to a resource address, without a key"
                    .to_string(),
            });
        }
        let moves: Vec<(String, String)> = found
            .into_iter()
            .map(|old| {
                let key = self.get(&old).and_then(|r| r.addr.key.clone());
                let new = target.resource.instance(key).to_string();
                (old, new)
            })
            .collect();
        self.mv_each(&moves)?;
        // What depended on the resource as a whole depends on it under its new name.
        for other in &mut self.resources {
            for dep in &mut other.dependencies {
                if dep == from {
                    *dep = to.to_string();
                }
            }
        }
        Ok(moves)
    }

    /// Moves every instance inside module `from` (see [`ModuleInstance::holds`]) to the same
    /// place inside `to`; returns the addresses moved, old and new. Nothing moves when one
    /// of the new addresses is taken.
    pub fn mv_module(
        &mut self,
        from: &ModuleInstance,
        to: &ModuleInstance,
    ) -> Result<Vec<(String, String)>> {
        let mut moves = Vec::new();
        for r in &self.resources {
            if !from.holds(r.module()) {
                continue;
            }
            let mut addr = r.addr.clone();
            addr.resource.module = from.moved_to(r.module(), to);
            moves.push((r.address(), addr.to_string()));
        }
        if moves.is_empty() {
            return Err(StateError::AddressNotFound(from.to_string()));
        }
        self.mv_each(&moves)?;
        Ok(moves)
    }

    /// Makes each move, old address to new; none when one of the new addresses is taken.
    fn mv_each(&mut self, moves: &[(String, String)]) -> Result<()> {
        if let Some((_, taken)) = moves.iter().find(|(_, new)| self.get(new).is_some()) {
            return Err(StateError::AddressExists(taken.clone()));
        }
        for (old, new) in moves {
            self.mv(old, new)?;
        }
        Ok(())
    }

    pub fn outputs(&self) -> &BTreeMap<String, OutputState> {
        &self.outputs
    }

    /// Records an output; a sensitive one keeps only its fingerprint.
    pub fn set_output(&mut self, name: &str, value: Value, sensitive: bool) {
        let output = if sensitive {
            OutputState {
                value: None,
                sensitive: true,
                fingerprint: Some(self.fingerprint(&value)),
            }
        } else {
            OutputState {
                value: Some(value),
                sensitive: false,
                fingerprint: None,
            }
        };
        self.outputs.insert(name.to_string(), output);
    }

    pub fn remove_output(&mut self, name: &str) -> Option<OutputState> {
        self.outputs.remove(name)
    }

    /// The salted fingerprint of a sensitive value, as stored in `sensitive` maps.
    pub fn fingerprint(&self, value: &Value) -> String {
        fingerprint::fingerprint(&self.salt, value)
    }

    pub fn fingerprint_matches(&self, value: &Value, fingerprint: &str) -> bool {
        fingerprint::fingerprint_matches(&self.salt, value, fingerprint)
    }

    /// Takes the sensitive attributes out of a resource's `config` and `computed`, keeping their
    /// fingerprints in `sensitive`. Paths are in the text form of [`crate::sensitive_path`]
    /// (`options.password`, `task.0.token`, `spark_conf.spark\.password`).
    /// The engine calls this before a resource reaches the document or the write-ahead log.
    pub fn redact<S: AsRef<str>>(&self, resource: &mut ResourceState, paths: &[S]) {
        for path in paths {
            let path = path.as_ref();
            // Out of both: the service reports back what it was sent (a comment built
            // from a secret), and the fingerprint is of the configured value.
            let configured = take_path(&mut resource.config, path);
            let reported = take_path(&mut resource.computed, path);
            if let Some(value) = configured.or(reported) {
                resource
                    .sensitive
                    .insert(path.to_string(), self.fingerprint(&value));
            }
        }
    }

    fn position(&self, address: &str) -> std::result::Result<usize, usize> {
        self.resources
            .binary_search_by(|r| r.addr.cmp_text(address))
    }
}

/// Deposed objects in their order: by address text, then id.
fn sort_deposed(deposed: &mut [ResourceState]) {
    deposed.sort_by_cached_key(|d| (d.address(), d.id.clone()));
}

/// Removes the value at a path in its text form (see [`crate::sensitive_path`]); numeric
/// steps index arrays.
fn take_path(map: &mut Map<String, Value>, path: &str) -> Option<Value> {
    take_steps(map, &crate::sensitive_path::split(path))
}

fn take_steps(map: &mut Map<String, Value>, steps: &[String]) -> Option<Value> {
    match steps {
        [] => None,
        [head] => map.shift_remove(head),
        [head, rest @ ..] => take_in_value(map.get_mut(head)?, rest),
    }
}

fn take_in_value(value: &mut Value, steps: &[String]) -> Option<Value> {
    match value {
        Value::Object(map) => take_steps(map, steps),
        Value::Array(items) => {
            let (head, rest) = steps.split_first()?;
            let index: usize = head.parse().ok()?;
            if rest.is_empty() {
                // Replacing rather than removing keeps the indices of later elements stable.
                items.get_mut(index).map(Value::take)
            } else {
                take_in_value(items.get_mut(index)?, rest)
            }
        }
        _ => None,
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use serde_json::json;

    fn resource(address: &str) -> ResourceState {
        ResourceState::new(address, "databricks", &format!("id-{address}")).unwrap()
    }

    #[test]
    fn resources_stay_sorted_whatever_the_insert_order() {
        let mut doc = StateDocument::new("dev");
        for a in [
            "databricks_schema.b",
            "databricks_catalog.z",
            "databricks_catalog.a",
        ] {
            doc.insert(resource(a)).unwrap();
        }
        let order: Vec<_> = doc.resources().iter().map(ResourceState::address).collect();
        assert_eq!(
            order,
            [
                "databricks_catalog.a",
                "databricks_catalog.z",
                "databricks_schema.b"
            ]
        );
    }

    #[test]
    fn loading_sorts_and_rejects_duplicates() {
        let mut doc = StateDocument::new("dev");
        doc.insert(resource("t.a")).unwrap();
        doc.insert(resource("t.b")).unwrap();
        let mut json = serde_json::to_value(&doc).unwrap();
        json["resources"].as_array_mut().unwrap().reverse();
        let back: StateDocument = serde_json::from_value(json.clone()).unwrap();
        assert_eq!(back, doc);

        let first = json["resources"][0].clone();
        json["resources"].as_array_mut().unwrap().push(first);
        let err = serde_json::from_value::<StateDocument>(json).unwrap_err();
        assert!(err.to_string().contains("appears twice"), "{err}");
    }

    #[test]
    fn a_map_key_holding_a_dot_is_redacted_as_one_step() {
        let doc = StateDocument::new("dev");
        let mut job = resource("databricks_job.j");
        job.config =
            json!({"spark_conf": {"spark.password": "hunter2", "spark": {"password": "kept"}}})
                .as_object()
                .unwrap()
                .clone();
        let path = crate::sensitive_path::join(["spark_conf", "spark.password"]);
        doc.redact(&mut job, &[&path]);
        assert_eq!(
            job.config["spark_conf"],
            json!({"spark": {"password": "kept"}}),
            "the value under the dotted key goes, the nested one with the same steps stays"
        );
        assert!(job.sensitive.contains_key(&path));
    }

    #[test]
    fn a_null_output_reads_back_as_null_and_a_sensitive_one_as_nothing() {
        let mut doc = StateDocument::new("dev");
        doc.set_output("url", Value::Null, false);
        doc.set_output("pw", json!("secret"), true);
        let back: StateDocument =
            serde_json::from_str(&serde_json::to_string(&doc).unwrap()).unwrap();
        assert_eq!(back.outputs()["url"].value(), Some(&Value::Null));
        assert_eq!(back.outputs()["pw"].value(), None);
    }

    #[test]
    fn insert_replace_remove() {
        let mut doc = StateDocument::new("dev");
        doc.insert(resource("t.a")).unwrap();
        assert!(matches!(
            doc.insert(resource("t.a")),
            Err(StateError::AddressExists(_))
        ));
        let mut changed = resource("t.a");
        changed.id = "new".into();
        assert_eq!(doc.replace(changed).unwrap().id, "id-t.a");
        assert_eq!(doc.get("t.a").unwrap().id, "new");
        assert!(matches!(
            doc.replace(resource("t.zz")),
            Err(StateError::AddressNotFound(_))
        ));
        assert!(doc.remove("t.a").is_some());
        assert!(doc.get("t.a").is_none());
        assert!(doc.remove("t.a").is_none());
    }

    #[test]
    fn forget_remembers_the_object_until_the_address_is_managed_again() {
        let mut doc = StateDocument::new("dev");
        doc.insert(resource("t.a")).unwrap();
        doc.insert(resource("t.b")).unwrap();
        assert!(doc.forget("t.a").is_some());
        assert!(doc.forget("t.zz").is_none());
        assert!(doc.get("t.a").is_none());
        let f = doc.forgotten("t.a").unwrap();
        assert_eq!((f.resource_type.as_str(), f.id.as_str()), ("t", "id-t.a"));
        assert!(doc.forgotten("t.b").is_none());

        // It survives a round trip, and a plain `remove` records nothing.
        doc.remove("t.b");
        let back: StateDocument =
            serde_json::from_value(serde_json::to_value(&doc).unwrap()).unwrap();
        assert_eq!(back, doc);
        assert!(back.forgotten("t.b").is_none());

        // Importing or creating the address again clears it.
        doc.insert(resource("t.a")).unwrap();
        assert!(doc.forgotten("t.a").is_none());
        doc.forget("t.a");
        doc.upsert(resource("t.a"));
        assert!(doc.forgotten("t.a").is_none());
        // A state without any keeps its old shape on disk.
        let json = serde_json::to_value(&doc).unwrap();
        assert!(json.get("forgotten").is_none());
    }

    #[test]
    fn mv_renames_and_rewrites_dependencies() {
        let mut doc = StateDocument::new("dev");
        doc.insert(resource("databricks_catalog.old")).unwrap();
        let mut child = resource("databricks_schema.s");
        child.dependencies = vec!["databricks_catalog.old".into()];
        doc.insert(child).unwrap();

        doc.mv("databricks_catalog.old", "databricks_catalog.new[\"eu\"]")
            .unwrap();

        assert!(doc.get("databricks_catalog.old").is_none());
        let moved = doc.get("databricks_catalog.new[\"eu\"]").unwrap();
        assert_eq!(moved.name(), "new");
        assert_eq!(moved.key(), Some(&InstanceKey::Key("eu".into())));
        assert_eq!(moved.id, "id-databricks_catalog.old");
        assert_eq!(
            doc.get("databricks_schema.s").unwrap().dependencies,
            ["databricks_catalog.new[\"eu\"]"]
        );
        doc.mv(
            "databricks_catalog.new[\"eu\"]",
            "module.uc[\"eu\"].databricks_catalog.main",
        )
        .unwrap();
        let moved = doc
            .get("module.uc[\"eu\"].databricks_catalog.main")
            .unwrap();
        assert_eq!(moved.module().to_string(), "module.uc[\"eu\"]");
        assert_eq!((moved.name(), moved.key()), ("main", None));
        let text = serde_json::to_string(moved).unwrap();
        assert!(text.contains(r#""module":"module.uc[\"eu\"]""#), "{text}");
        let back: ResourceState = serde_json::from_str(&text).unwrap();
        assert_eq!(&back, moved);
        let moves = doc
            .mv_module(
                &ModuleInstance::parse("module.uc").unwrap(),
                &ModuleInstance::parse("module.lake").unwrap(),
            )
            .unwrap();
        assert_eq!(
            moves,
            [(
                "module.uc[\"eu\"].databricks_catalog.main".to_string(),
                "module.lake[\"eu\"].databricks_catalog.main".to_string()
            )]
        );
        assert!(
            doc.get("module.lake[\"eu\"].databricks_catalog.main")
                .is_some()
        );
        let order: Vec<_> = doc.resources().iter().map(|r| r.address()).collect();
        let mut sorted = order.clone();
        sorted.sort();
        assert_eq!(order, sorted);
    }

    #[test]
    fn mv_all_moves_every_instance_of_a_resource_address() {
        let mut doc = StateDocument::new("dev");
        for a in ["t.f[\"a\"]", "t.f[\"b\"]", "t.fx", "t.g[\"b\"]"] {
            doc.insert(resource(a)).unwrap();
        }
        let mut child = resource("t.user");
        child.dependencies = vec!["t.f".into(), "t.f[\"a\"]".into()];
        doc.insert(child).unwrap();
        // One of the new addresses is taken: nothing moves.
        assert!(matches!(
            doc.mv_all("t.f", "t.g"),
            Err(StateError::AddressExists(a)) if a == "t.g[\"b\"]"
        ));
        assert!(doc.get("t.f[\"a\"]").is_some());
        // Instances move to a resource address only.
        assert!(matches!(
            doc.mv_all("t.f", "t.h[\"x\"]"),
            Err(StateError::InvalidMove { .. })
        ));
        let moves = doc.mv_all("t.f", "t.h").unwrap();
        assert_eq!(
            moves,
            [
                ("t.f[\"a\"]".to_string(), "t.h[\"a\"]".to_string()),
                ("t.f[\"b\"]".to_string(), "t.h[\"b\"]".to_string()),
            ]
        );
        assert_eq!(doc.get("t.h[\"b\"]").unwrap().id, "id-t.f[\"b\"]");
        assert!(
            doc.get("t.fx").is_some(),
            "another resource whose name starts alike stays"
        );
        assert_eq!(
            doc.get("t.user").unwrap().dependencies,
            ["t.h", "t.h[\"a\"]"]
        );
        // One instance, as before.
        assert_eq!(doc.mv_all("t.fx", "t.fy").unwrap().len(), 1);
        assert!(matches!(
            doc.mv_all("t.nothing", "t.else"),
            Err(StateError::AddressNotFound(_))
        ));
    }

    #[test]
    fn mv_refuses_bad_moves() {
        let mut doc = StateDocument::new("dev");
        doc.insert(resource("t.a")).unwrap();
        doc.insert(resource("t.b")).unwrap();
        assert!(matches!(
            doc.mv("t.a", "t.b"),
            Err(StateError::AddressExists(_))
        ));
        assert!(matches!(
            doc.mv("t.x", "t.y"),
            Err(StateError::AddressNotFound(_))
        ));
        assert!(matches!(
            doc.mv("t.a", "u.a"),
            Err(StateError::InvalidMove { .. })
        ));
        assert!(doc.get("t.a").is_some());
    }

    #[test]
    fn secrets_are_never_serialised() {
        let secret = "s3cr3t-P@ssw0rd-do-not-store";
        let mut doc = StateDocument::new("dev");
        let mut conn = resource("databricks_connection.sql");
        conn.config = json!({
            "name": "sql",
            "options": {"host": "db.example", "user": "etl", "password": secret},
        })
        .as_object()
        .unwrap()
        .clone();
        let mut task = resource("databricks_job.j");
        task.config = json!({"task": [{"key": "a"}, {"key": "b", "token": secret}]})
            .as_object()
            .unwrap()
            .clone();
        doc.redact(&mut conn, &["options.password"]);
        doc.redact(&mut task, &["task.1.token"]);
        doc.insert(conn).unwrap();
        doc.insert(task).unwrap();
        doc.set_output("db_password", json!(secret), true);
        doc.set_output("host", json!("db.example"), false);

        let text = serde_json::to_string_pretty(&doc).unwrap();
        assert!(!text.contains(secret), "secret leaked into state:\n{text}");

        let conn = doc.get("databricks_connection.sql").unwrap();
        let fp = &conn.sensitive["options.password"];
        assert!(doc.fingerprint_matches(&json!(secret), fp));
        assert!(!doc.fingerprint_matches(&json!("other"), fp));
        assert_eq!(conn.config["options"]["host"], "db.example");
        assert!(
            doc.get("databricks_job.j")
                .unwrap()
                .sensitive
                .contains_key("task.1.token")
        );
        let out = &doc.outputs()["db_password"];
        assert!(out.sensitive() && out.value().is_none());
        assert!(doc.fingerprint_matches(&json!(secret), out.fingerprint().unwrap()));
        assert_eq!(doc.outputs()["host"].value(), Some(&json!("db.example")));
    }

    #[test]
    fn new_documents_have_distinct_lineage_and_salt() {
        let a = StateDocument::new("dev");
        let b = StateDocument::new("dev");
        assert_ne!(a.lineage(), b.lineage());
        assert_ne!(a.salt(), b.salt());
        assert_eq!(a.serial(), 0);
        assert_eq!(a.version(), STATE_VERSION);
    }

    #[test]
    fn a_moved_state_keeps_all_but_its_environment_name() {
        let mut doc = StateDocument::new("default");
        doc.insert(resource("databricks_job.j")).unwrap();
        doc.set_output("o", json!(1), false);
        let moved = doc.clone().moved_to("dev");
        assert_eq!(moved.environment(), "dev");
        assert_eq!(
            (moved.lineage(), moved.salt(), moved.serial()),
            (doc.lineage(), doc.salt(), doc.serial())
        );
        assert_eq!(moved.resources(), doc.resources());
        assert_eq!(moved.outputs(), doc.outputs());
    }

    #[test]
    fn a_resource_reads_back_byte_for_byte() {
        for text in [
            r#"{"address":"databricks_job.j[0]","mode":"managed","type":"databricks_job","name":"j","index_key":0,"provider":"databricks","id":"1","config":{"a":1},"computed":{},"sensitive":{},"dependencies":["t.x"],"schema_version":2,"status":"tainted","create_before_destroy":true}"#,
            r#"{"address":"module.m[\"k\"].data.t.n[\"a\"]","module":"module.m[\"k\"]","mode":"data","type":"t","name":"n","index_key":"a","provider":"databricks","id":"","config":{},"computed":{},"sensitive":{},"dependencies":[],"schema_version":0,"create_before_destroy":false}"#,
        ] {
            let r: ResourceState = serde_json::from_str(text).unwrap();
            assert_eq!(serde_json::to_string(&r).unwrap(), text);
        }
        // Written before the attribute maps were recorded: they default to empty.
        let r: ResourceState = serde_json::from_str(
            r#"{"address":"t.n","mode":"managed","type":"t","name":"n","index_key":null,"provider":"p","id":"1"}"#,
        )
        .unwrap();
        assert_eq!(r.addr, InstanceAddr::parse("t.n").unwrap());
        assert!(r.config.is_empty() && r.dependencies.is_empty());
    }

    #[test]
    fn states_an_earlier_version_wrote_read_back_byte_for_byte() {
        for text in [
            include_str!(
                "../../tests/fixtures/state-from-41bb2e4/lfc-demo/saved/state/default.json"
            ),
            include_str!("../../tests/fixtures/state-from-41bb2e4/medallion/saved/state/dev.json"),
        ] {
            let doc: StateDocument = serde_json::from_str(text).unwrap();
            assert!(!doc.resources().is_empty());
            let mut back = serde_json::to_string_pretty(&doc).unwrap();
            back.push('\n');
            assert_eq!(back, text);
        }
    }

    #[test]
    fn a_resource_whose_parts_disagree_with_its_address_does_not_load() {
        let good = json!({"address": "module.m.t.n[0]", "module": "module.m", "mode": "managed",
            "type": "t", "name": "n", "index_key": 0, "provider": "p", "id": "1"});
        assert!(serde_json::from_value::<ResourceState>(good.clone()).is_ok());
        for (field, value, message) in [
            ("address", json!("t n"), "invalid resource address `t n`"),
            (
                "module",
                json!("module.x"),
                "its module `module.x` disagrees",
            ),
            (
                "module",
                json!("module..x"),
                "invalid resource address `module..x`",
            ),
            ("mode", json!("data"), "its mode `data` disagrees"),
            ("type", json!("u"), "its type `u` disagrees"),
            ("name", json!("m"), "its name `m` disagrees"),
            ("index_key", json!("0"), "its index key `\"0\"` disagrees"),
            ("index_key", json!(null), "its index key `null` disagrees"),
        ] {
            let mut bad = good.clone();
            bad[field] = value;
            let error = serde_json::from_value::<ResourceState>(bad)
                .unwrap_err()
                .to_string();
            assert!(error.contains(message), "{field}: {error}");
        }
        // A state file with such a resource is refused as a whole, saying which one.
        let mut doc = serde_json::to_value(StateDocument::new("dev")).unwrap();
        let mut bad = good;
        bad["name"] = json!("other");
        doc["resources"] = json!([bad]);
        let error = serde_json::from_value::<StateDocument>(doc)
            .unwrap_err()
            .to_string();
        assert!(
            error.contains("resource `module.m.t.n[0]`: its name `other` disagrees"),
            "{error}"
        );
    }

    #[test]
    fn resources_are_ordered_and_found_by_their_text() {
        let mut doc = StateDocument::new("dev");
        // Typed order would put the root's `t.b` first and the data source last.
        for a in [
            "t.b",
            "data.t.a",
            "module.m.t.a",
            "t.b[\"x\"]",
            "t.b[10]",
            "t.b[2]",
        ] {
            doc.insert(resource(a)).unwrap();
        }
        let order: Vec<_> = doc.resources().iter().map(ResourceState::address).collect();
        assert_eq!(
            order,
            [
                "data.t.a",
                "module.m.t.a",
                "t.b",
                "t.b[\"x\"]",
                "t.b[10]",
                "t.b[2]"
            ]
        );
        for a in &order {
            assert_eq!(doc.get(a).unwrap().address(), *a);
        }
        assert!(doc.get("t.b[1]").is_none());
        assert!(doc.get("t.").is_none());
    }

    #[test]
    fn wire_shape_matches_the_design() {
        let mut doc = StateDocument::new("prod");
        let mut r = resource("databricks_job.j[0]");
        r.status = Some(ResourceStatus::Tainted);
        doc.insert(r).unwrap();
        let json = serde_json::to_value(&doc).unwrap();
        for key in [
            "version",
            "lineage",
            "serial",
            "environment",
            "resources",
            "outputs",
            "salt",
        ] {
            assert!(json.get(key).is_some(), "missing {key}");
        }
        let r = &json["resources"][0];
        assert_eq!(r["mode"], "managed");
        assert_eq!(r["type"], "databricks_job");
        assert_eq!(r["name"], "j");
        assert_eq!(r["index_key"], 0);
        assert_eq!(r["status"], "tainted");
        assert_eq!(r["create_before_destroy"], false);
        let plain = resource("t.n");
        let v = serde_json::to_value(&plain).unwrap();
        assert!(v["index_key"].is_null());
        assert!(v.get("status").is_none());
    }
}
