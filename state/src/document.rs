//! The state document (docs/architecture.md, State): what brickform last applied in one
//! environment.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use uuid::Uuid;

use crate::address::{
    FieldAddressError, InstanceAddr, InstanceKey, ModuleInstance, PartNames, RecordedAddressError,
    ResourceAddr, ResourceMode,
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
    /// What this instance depended on when it was applied, in the order recorded: the
    /// engine records resources (addresses without a key, sorted by their text); an address
    /// with a key names that one instance.
    pub dependencies: Vec<InstanceAddr>,
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
        let dependencies = w
            .dependencies
            .iter()
            .map(|d| FieldAddressError::parse(&addr, "dependencies", d, InstanceAddr::parse))
            .collect::<std::result::Result<_, _>>()?;
        Ok(ResourceState {
            addr,
            provider: w.provider,
            id: w.id,
            config: w.config,
            computed: w.computed,
            sensitive: w.sensitive,
            dependencies,
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
        let mut out = s.serialize_struct("ResourceState", 15)?;
        self.addr.serialize_parts(&mut out, &STATE_PARTS)?;
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

/// The state file's names for the parts of a resource's address.
const STATE_PARTS: PartNames = PartNames {
    address: "address",
    module: "module",
    mode: "mode",
    type_name: "type",
    name: "name",
    key: "index_key",
};

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

    /// `encode` applied to this document as it is to be stored (its serial the next one),
    /// while the document itself keeps the store's serial until the write lands
    /// ([`Self::bump_serial`] then). Done in place because a copy of a large state (and
    /// dropping the old one) costs more than writing it.
    pub(crate) fn encoded_as_next<E>(
        &mut self,
        encode: impl FnOnce(&StateDocument) -> std::result::Result<Vec<u8>, E>,
    ) -> std::result::Result<Vec<u8>, E> {
        self.bump_serial();
        let encoded = encode(self);
        self.serial -= 1;
        encoded
    }

    /// Resources sorted by address.
    pub fn resources(&self) -> &[ResourceState] {
        &self.resources
    }

    pub fn get(&self, address: &InstanceAddr) -> Option<&ResourceState> {
        self.position(address).ok().map(|i| &self.resources[i])
    }

    /// For in-place changes such as tainting. Change the address with `mv`, not through this:
    /// lookups rely on the sort order until the next save restores it.
    pub fn get_mut(&mut self, address: &InstanceAddr) -> Option<&mut ResourceState> {
        self.position(address).ok().map(|i| &mut self.resources[i])
    }

    /// Adds a resource that is not yet in the state.
    pub fn insert(&mut self, resource: ResourceState) -> Result<()> {
        match self.position(&resource.addr) {
            Ok(_) => Err(StateError::AddressExists(resource.address())),
            Err(i) => {
                self.unforget(&resource.addr);
                self.resources.insert(i, resource);
                Ok(())
            }
        }
    }

    /// Replaces the resource at the same address; returns the old one.
    pub fn replace(&mut self, resource: ResourceState) -> Result<ResourceState> {
        match self.position(&resource.addr) {
            Ok(i) => Ok(std::mem::replace(&mut self.resources[i], resource)),
            Err(_) => Err(StateError::AddressNotFound(resource.address())),
        }
    }

    /// Inserts or replaces; returns the resource it replaced, if any.
    pub fn upsert(&mut self, resource: ResourceState) -> Option<ResourceState> {
        match self.position(&resource.addr) {
            Ok(i) => Some(std::mem::replace(&mut self.resources[i], resource)),
            Err(i) => {
                self.unforget(&resource.addr);
                self.resources.insert(i, resource);
                None
            }
        }
    }

    pub fn remove(&mut self, address: &InstanceAddr) -> Option<ResourceState> {
        self.position(address)
            .ok()
            .map(|i| self.resources.remove(i))
    }

    /// The token of an unresolved create of `address` (see the field).
    pub fn pending_token(&self, address: &InstanceAddr) -> Option<&str> {
        self.pending_tokens
            .get(&address.to_string())
            .map(String::as_str)
    }

    /// Addresses holding a pending token, sorted by their text. The file keys the tokens by
    /// that text; one that is no address (a hand-edited file) is left out.
    pub fn pending_token_addresses(&self) -> impl Iterator<Item = InstanceAddr> + '_ {
        self.pending_tokens
            .keys()
            .filter_map(|a| InstanceAddr::parse(a).ok())
    }

    /// Keeps `token` for the next create of `address` (see the field).
    pub fn set_pending_token(&mut self, address: &InstanceAddr, token: &str) {
        self.pending_tokens
            .insert(address.to_string(), token.to_string());
    }

    /// Drops the pending token of `address`, if any.
    pub fn clear_pending_token(&mut self, address: &InstanceAddr) -> Option<String> {
        self.pending_tokens.remove(&address.to_string())
    }

    /// Objects put aside by `create_before_destroy` replacements (see the field), sorted by
    /// address and id.
    pub fn deposed(&self) -> &[ResourceState] {
        &self.deposed
    }

    /// Puts the object at `address` aside: it leaves the address (for its replacement) and
    /// stays in the state until `remove_deposed`.
    pub fn depose(&mut self, address: &InstanceAddr) -> Option<&ResourceState> {
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
    pub fn remove_deposed(&mut self, address: &InstanceAddr, id: &str) -> Option<ResourceState> {
        let i = self
            .deposed
            .iter()
            .position(|d| d.id == id && d.addr == *address)?;
        Some(self.deposed.remove(i))
    }

    /// `state rm`: removes a resource whose object lives on, remembering its type and id for
    /// the address (see [`Forgotten`]).
    pub fn forget(&mut self, address: &InstanceAddr) -> Option<ResourceState> {
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
            .binary_search_by(|f| f.address.cmp(&entry.address))
        {
            Ok(i) => self.forgotten[i] = entry,
            Err(i) => self.forgotten.insert(i, entry),
        }
        Some(removed)
    }

    /// What `state rm` remembered for `address`.
    pub fn forgotten(&self, address: &InstanceAddr) -> Option<&Forgotten> {
        // The records are kept by the address's text, as the file writes them.
        let text = address.to_string();
        self.forgotten
            .binary_search_by(|f| f.address.cmp(&text))
            .ok()
            .map(|i| &self.forgotten[i])
    }

    fn unforget(&mut self, address: &InstanceAddr) {
        let text = address.to_string();
        if let Ok(i) = self.forgotten.binary_search_by(|f| f.address.cmp(&text)) {
            self.forgotten.remove(i);
        }
    }

    /// Renames a resource (a `moved` block or `state mv`), keeping its name and index key in step
    /// and rewriting other resources' dependencies on it, so destroy order survives the move.
    pub fn mv(&mut self, from: &InstanceAddr, to: &InstanceAddr) -> Result<()> {
        let (source, target) = (&from.resource, &to.resource);
        if source.mode != target.mode || source.type_name != target.type_name {
            return Err(StateError::InvalidMove {
                from: from.to_string(),
                to: to.to_string(),
                reason: "a move keeps the resource type and mode".to_string(),
            });
        }
        if self.get(to).is_some() {
            return Err(StateError::AddressExists(to.to_string()));
        }
        let mut resource = self
            .remove(from)
            .ok_or_else(|| StateError::AddressNotFound(from.to_string()))?;
        let moved_from = std::mem::replace(&mut resource.addr, to.clone());
        self.rename_dependencies(from, to);
        self.upsert(resource);
        // What the instance put aside is deleted under its new name.
        for d in self.deposed.iter_mut().filter(|d| d.addr == moved_from) {
            d.addr = to.clone();
        }
        sort_deposed(&mut self.deposed);
        Ok(())
    }

    /// Points every dependency on `from` at `to`, in place: the list keeps the order it was
    /// recorded in until the instance is applied again.
    fn rename_dependencies(&mut self, from: &InstanceAddr, to: &InstanceAddr) {
        for dep in self.resources.iter_mut().flat_map(|r| &mut r.dependencies) {
            if dep == from {
                *dep = to.clone();
            }
        }
    }

    /// The addresses of what `from` names: the instance itself when the state holds it, or
    /// (for a resource address without a key) every instance of that resource.
    pub fn instances_of(&self, from: &InstanceAddr) -> Vec<InstanceAddr> {
        if self.get(from).is_some() {
            return vec![from.clone()];
        }
        // A resource address (no key) takes the instances that have a key.
        if from.key.is_some() {
            return Vec::new();
        }
        self.resources
            .iter()
            .filter(|r| r.addr.key.is_some() && r.addr.resource == from.resource)
            .map(|r| r.addr.clone())
            .collect()
    }

    /// Moves what `from` names ([`StateDocument::instances_of`]) to `to`: one instance, or
    /// every instance of a resource to the same key under `to` (as a `moved` block or
    /// `terraform state mv` without keys moves them); returns the addresses moved, old and
    /// new. Nothing moves when one of the new addresses is taken.
    pub fn mv_all(
        &mut self,
        from: &InstanceAddr,
        to: &InstanceAddr,
    ) -> Result<Vec<(InstanceAddr, InstanceAddr)>> {
        let found = self.instances_of(from);
        if found.is_empty() {
            return Err(StateError::AddressNotFound(from.to_string()));
        }
        if found.len() == 1 && found[0] == *from {
            self.mv(from, to)?;
            return Ok(vec![(from.clone(), to.clone())]);
        }
        if to.key.is_some() {
            return Err(StateError::InvalidMove {
                from: from.to_string(),
                to: to.to_string(),
                reason: "the instances of a resource move to a resource address, without a key"
                    .to_string(),
            });
        }
        let moves: Vec<(InstanceAddr, InstanceAddr)> = found
            .into_iter()
            .map(|old| {
                let new = to.resource.instance(old.key.clone());
                (old, new)
            })
            .collect();
        self.mv_each(&moves)?;
        // What depended on the resource as a whole depends on it under its new name.
        self.rename_dependencies(from, to);
        Ok(moves)
    }

    /// Moves every instance inside module `from` (see [`ModuleInstance::holds`]) to the same
    /// place inside `to`; returns the addresses moved, old and new. Nothing moves when one
    /// of the new addresses is taken.
    pub fn mv_module(
        &mut self,
        from: &ModuleInstance,
        to: &ModuleInstance,
    ) -> Result<Vec<(InstanceAddr, InstanceAddr)>> {
        let mut moves = Vec::new();
        for r in &self.resources {
            if !from.holds(r.module()) {
                continue;
            }
            let mut addr = r.addr.clone();
            addr.resource.module = from.moved_to(r.module(), to);
            moves.push((r.addr.clone(), addr));
        }
        if moves.is_empty() {
            return Err(StateError::AddressNotFound(from.to_string()));
        }
        self.mv_each(&moves)?;
        Ok(moves)
    }

    /// Makes each move, old address to new; none when one of the new addresses is taken.
    fn mv_each(&mut self, moves: &[(InstanceAddr, InstanceAddr)]) -> Result<()> {
        if let Some((_, taken)) = moves.iter().find(|(_, new)| self.get(new).is_some()) {
            return Err(StateError::AddressExists(taken.to_string()));
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
        self.redactor().redact(resource, paths);
    }

    /// What [`StateDocument::redact`] needs of the document (its salt), to redact without
    /// holding the document: an apply makes its state entries while other calls record
    /// theirs.
    pub fn redactor(&self) -> Redactor {
        Redactor {
            salt: self.salt.clone(),
        }
    }

    /// Where `address` is, or would go: resources are sorted by their text, which is written
    /// once here rather than for each comparison.
    fn position(&self, address: &InstanceAddr) -> std::result::Result<usize, usize> {
        let text = address.to_string();
        self.resources.binary_search_by(|r| r.addr.cmp_text(&text))
    }
}

/// Redacts resources as the document it was taken from does ([`StateDocument::redactor`]).
#[derive(Debug, Clone)]
pub struct Redactor {
    salt: String,
}

impl Redactor {
    /// See [`StateDocument::redact`].
    pub fn redact<S: AsRef<str>>(&self, resource: &mut ResourceState, paths: &[S]) {
        for path in paths {
            let path = path.as_ref();
            // Out of both: the service reports back what it was sent (a comment built
            // from a secret), and the fingerprint is of the configured value.
            let configured = take_path(&mut resource.config, path);
            let reported = take_path(&mut resource.computed, path);
            if let Some(value) = configured.or(reported) {
                resource.sensitive.insert(
                    path.to_string(),
                    fingerprint::fingerprint(&self.salt, &value),
                );
            }
        }
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

    fn a(text: &str) -> InstanceAddr {
        InstanceAddr::parse(text).unwrap()
    }

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
        assert_eq!(doc.get(&a("t.a")).unwrap().id, "new");
        assert!(matches!(
            doc.replace(resource("t.zz")),
            Err(StateError::AddressNotFound(_))
        ));
        assert!(doc.remove(&a("t.a")).is_some());
        assert!(doc.get(&a("t.a")).is_none());
        assert!(doc.remove(&a("t.a")).is_none());
    }

    #[test]
    fn forget_remembers_the_object_until_the_address_is_managed_again() {
        let mut doc = StateDocument::new("dev");
        doc.insert(resource("t.a")).unwrap();
        doc.insert(resource("t.b")).unwrap();
        assert!(doc.forget(&a("t.a")).is_some());
        assert!(doc.forget(&a("t.zz")).is_none());
        assert!(doc.get(&a("t.a")).is_none());
        let f = doc.forgotten(&a("t.a")).unwrap();
        assert_eq!((f.resource_type.as_str(), f.id.as_str()), ("t", "id-t.a"));
        assert!(doc.forgotten(&a("t.b")).is_none());

        // It survives a round trip, and a plain `remove` records nothing.
        doc.remove(&a("t.b"));
        let back: StateDocument =
            serde_json::from_value(serde_json::to_value(&doc).unwrap()).unwrap();
        assert_eq!(back, doc);
        assert!(back.forgotten(&a("t.b")).is_none());

        // Importing or creating the address again clears it.
        doc.insert(resource("t.a")).unwrap();
        assert!(doc.forgotten(&a("t.a")).is_none());
        doc.forget(&a("t.a"));
        doc.upsert(resource("t.a"));
        assert!(doc.forgotten(&a("t.a")).is_none());
        // A state without any keeps its old shape on disk.
        let json = serde_json::to_value(&doc).unwrap();
        assert!(json.get("forgotten").is_none());
    }

    #[test]
    fn mv_renames_and_rewrites_dependencies() {
        let mut doc = StateDocument::new("dev");
        doc.insert(resource("databricks_catalog.old")).unwrap();
        let mut child = resource("databricks_schema.s");
        child.dependencies = vec![a("databricks_catalog.old")];
        doc.insert(child).unwrap();

        doc.mv(
            &a("databricks_catalog.old"),
            &a("databricks_catalog.new[\"eu\"]"),
        )
        .unwrap();

        assert!(doc.get(&a("databricks_catalog.old")).is_none());
        let moved = doc.get(&a("databricks_catalog.new[\"eu\"]")).unwrap();
        assert_eq!(moved.name(), "new");
        assert_eq!(moved.key(), Some(&InstanceKey::Key("eu".into())));
        assert_eq!(moved.id, "id-databricks_catalog.old");
        assert_eq!(
            doc.get(&a("databricks_schema.s")).unwrap().dependencies,
            [a("databricks_catalog.new[\"eu\"]")]
        );
        doc.mv(
            &a("databricks_catalog.new[\"eu\"]"),
            &a("module.uc[\"eu\"].databricks_catalog.main"),
        )
        .unwrap();
        let moved = doc
            .get(&a("module.uc[\"eu\"].databricks_catalog.main"))
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
                a("module.uc[\"eu\"].databricks_catalog.main"),
                a("module.lake[\"eu\"].databricks_catalog.main")
            )]
        );
        assert!(
            doc.get(&a("module.lake[\"eu\"].databricks_catalog.main"))
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
        child.dependencies = vec![a("t.f"), a("t.f[\"a\"]")];
        doc.insert(child).unwrap();
        // One of the new addresses is taken: nothing moves.
        assert!(matches!(
            doc.mv_all(&a("t.f"), &a("t.g")),
            Err(StateError::AddressExists(a)) if a == "t.g[\"b\"]"
        ));
        assert!(doc.get(&a("t.f[\"a\"]")).is_some());
        // Instances move to a resource address only.
        assert!(matches!(
            doc.mv_all(&a("t.f"), &a("t.h[\"x\"]")),
            Err(StateError::InvalidMove { .. })
        ));
        let moves = doc.mv_all(&a("t.f"), &a("t.h")).unwrap();
        assert_eq!(
            moves,
            [
                (a("t.f[\"a\"]"), a("t.h[\"a\"]")),
                (a("t.f[\"b\"]"), a("t.h[\"b\"]")),
            ]
        );
        assert_eq!(doc.get(&a("t.h[\"b\"]")).unwrap().id, "id-t.f[\"b\"]");
        assert!(
            doc.get(&a("t.fx")).is_some(),
            "another resource whose name starts alike stays"
        );
        assert_eq!(
            doc.get(&a("t.user")).unwrap().dependencies,
            [a("t.h"), a("t.h[\"a\"]")]
        );
        // One instance, as before.
        assert_eq!(doc.mv_all(&a("t.fx"), &a("t.fy")).unwrap().len(), 1);
        assert!(matches!(
            doc.mv_all(&a("t.nothing"), &a("t.else")),
            Err(StateError::AddressNotFound(_))
        ));
    }

    #[test]
    fn mv_refuses_bad_moves() {
        let mut doc = StateDocument::new("dev");
        doc.insert(resource("t.a")).unwrap();
        doc.insert(resource("t.b")).unwrap();
        assert!(matches!(
            doc.mv(&a("t.a"), &a("t.b")),
            Err(StateError::AddressExists(_))
        ));
        assert!(matches!(
            doc.mv(&a("t.x"), &a("t.y")),
            Err(StateError::AddressNotFound(_))
        ));
        assert!(matches!(
            doc.mv(&a("t.a"), &a("u.a")),
            Err(StateError::InvalidMove { .. })
        ));
        assert!(doc.get(&a("t.a")).is_some());
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

        let conn = doc.get(&a("databricks_connection.sql")).unwrap();
        let fp = &conn.sensitive["options.password"];
        assert!(doc.fingerprint_matches(&json!(secret), fp));
        assert!(!doc.fingerprint_matches(&json!("other"), fp));
        assert_eq!(conn.config["options"]["host"], "db.example");
        assert!(
            doc.get(&a("databricks_job.j"))
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
            // The dependencies are read as addresses, and written back as they were.
            assert!(doc.resources().iter().any(|r| !r.dependencies.is_empty()));
            for r in doc.resources() {
                assert_eq!(doc.get(&r.addr), Some(r), "{}", r.address());
            }
            let mut back = serde_json::to_string_pretty(&doc).unwrap();
            back.push('\n');
            assert_eq!(back, text);
            // And again after a load of what was saved.
            let again: StateDocument = serde_json::from_str(&back).unwrap();
            assert_eq!(again, doc);
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
    fn a_resource_depending_on_a_malformed_address_does_not_load_and_says_where() {
        let good = json!({"address": "module.m.t.n[0]", "module": "module.m", "mode": "managed",
            "type": "t", "name": "n", "index_key": 0, "provider": "p", "id": "1",
            "dependencies": ["t.a", "module.m.t.b[\"k\"]"]});
        let r = serde_json::from_value::<ResourceState>(good.clone()).unwrap();
        assert_eq!(r.dependencies, [a("t.a"), a("module.m.t.b[\"k\"]")]);
        for bad_dependency in ["t", "t.b[", "module..t.b", "1t.b"] {
            let mut bad = good.clone();
            bad["dependencies"] = json!(["t.a", bad_dependency]);
            let error = serde_json::from_value::<ResourceState>(bad)
                .unwrap_err()
                .to_string();
            assert!(
                error.contains(&format!(
                    "resource `module.m.t.n[0]`: its dependencies: invalid resource address `{bad_dependency}`"
                )),
                "{bad_dependency}: {error}"
            );
        }
        // A state file holding one is refused as a whole.
        let mut doc = serde_json::to_value(StateDocument::new("dev")).unwrap();
        let mut bad = good;
        bad["dependencies"] = json!(["t"]);
        doc["resources"] = json!([bad]);
        let error = serde_json::from_value::<StateDocument>(doc)
            .unwrap_err()
            .to_string();
        assert!(error.contains("its dependencies: invalid"), "{error}");
    }

    #[test]
    fn a_file_written_by_hand_out_of_order_is_saved_in_the_text_order() {
        // Typed order would put the root's `t.b` first, `t.b[2]` before `t.b[10]` and the
        // data source last; the file keeps the order of the text, as it always has.
        let mut doc = serde_json::to_value(StateDocument::new("dev")).unwrap();
        let entry = |address: &str| serde_json::to_value(resource(address)).unwrap();
        doc["resources"] = json!([
            entry("t.b[2]"),
            entry("t.b"),
            entry("module.m.t.a"),
            entry("t.b[10]"),
            entry("data.t.a"),
        ]);
        let doc: StateDocument = serde_json::from_value(doc).unwrap();
        let saved = serde_json::to_value(&doc).unwrap();
        let order: Vec<&str> = saved["resources"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["address"].as_str().unwrap())
            .collect();
        assert_eq!(
            order,
            ["data.t.a", "module.m.t.a", "t.b", "t.b[10]", "t.b[2]"]
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
        for text in &order {
            assert_eq!(doc.get(&a(text)).unwrap().address(), *text);
        }
        assert!(doc.get(&a("t.b[1]")).is_none());
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
