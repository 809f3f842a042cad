//! The interface between the engine and providers.
//!
//! A resource kind is declared once, as data ([`Schema`]): its attributes with their types,
//! whether they are required, optional or computed, which changes force a replacement, which
//! values are sensitive (write-only), how values are normalised and which server defaults must
//! not show as drift. The engine drives validation, diffing and rendering from that schema and
//! calls the kind's CRUD operations; it never knows what any one provider's objects are.

pub use crate::location::Location;
use crate::value::{Object, Value};
use async_trait::async_trait;
use std::collections::BTreeMap;
use std::sync::Arc;

/// The type of an attribute.
#[derive(Debug, Clone, PartialEq)]
pub enum AttrType {
    String,
    Number,
    Bool,
    List(Box<AttrType>),
    Set(Box<AttrType>),
    Map(Box<AttrType>),
    /// Any value; used for free-form JSON-like attributes.
    Any,
}

impl AttrType {
    /// A list of strings.
    pub fn strings() -> Self {
        AttrType::List(Box::new(AttrType::String))
    }
    /// A map of strings.
    pub fn string_map() -> Self {
        AttrType::Map(Box::new(AttrType::String))
    }
    pub fn describe(&self) -> String {
        match self {
            AttrType::String => "string".into(),
            AttrType::Number => "number".into(),
            AttrType::Bool => "bool".into(),
            AttrType::List(t) => format!("list({})", t.describe()),
            AttrType::Set(t) => format!("set({})", t.describe()),
            AttrType::Map(t) => format!("map({})", t.describe()),
            AttrType::Any => "any".into(),
        }
    }
}

/// How an environment treats the configuration.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum EnvMode {
    /// Presets keep a developer's copy apart from everyone else's (each kind says how:
    /// names prefixed, schedules paused, …).
    Development,
    /// Development settings are refused.
    Production,
}

impl EnvMode {
    pub fn as_str(self) -> &'static str {
        match self {
            EnvMode::Development => "development",
            EnvMode::Production => "production",
        }
    }
}

/// How a configured or live value is put in canonical form before comparing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Normalize {
    None,
    /// Case-insensitive names.
    LowerCase,
    /// Paths where a trailing slash means nothing.
    TrimTrailingSlash,
    /// Paths the service takes and answers with or without a mount prefix (the kind names
    /// it): neither the prefix nor a trailing slash means anything.
    MountedPath(&'static str),
    /// JSON documents held as strings: compared structurally.
    Json,
    /// Enumerations the service accepts in any case and reports upper-case.
    UpperCase,
    /// A principal: a user name (an e-mail address, with `@`) in any case, as the service
    /// resolves it and answers it in the account's spelling; a group's display name or a
    /// service principal's application id exactly.
    Principal,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Presence {
    Required,
    Optional,
    /// Set by the server only; configuring it is an error.
    Computed,
    /// Optional; when the user leaves it out, the server's value is kept and is not drift.
    OptionalComputed,
}

#[derive(Debug, Clone)]
pub struct Attribute {
    pub name: &'static str,
    pub ty: AttrType,
    pub presence: Presence,
    pub description: &'static str,
    /// A change to this attribute cannot be made in place.
    pub replace_on_change: bool,
    /// Write-only: never stored, never shown; state keeps a salted fingerprint.
    pub sensitive: bool,
    pub normalize: Normalize,
    /// The value the service assumes when the attribute is not set. A live value equal to it
    /// is not drift when the configuration leaves the attribute out.
    pub server_default: Option<Value>,
    /// For computed attributes: the configured attributes it is derived from (an object's
    /// path from its name). When one of them changes, the value is known only after apply,
    /// so what reads it is planned too.
    pub derived_from: &'static [&'static str],
    /// For enumerated attributes: the values the service accepts. A known value outside the
    /// set is rejected where it is written, before anything is sent; for lists, each element.
    pub allowed: Option<Allowed>,
    /// A rule a known value must follow beyond its type and its allowed values (a cron
    /// expression's syntax, a time-zone id); for lists, each element.
    pub check: Option<ValueCheck>,
    /// For computed attributes: the service sets a new value at every write (a modification
    /// time, a run state a changed spec restarts), so an update makes it known only after
    /// apply.
    pub changes_on_write: bool,
    /// Values the service holds and answers in another spelling than the one they were
    /// written in, as `(written, answered)` pairs (an enumeration's newer name answered by
    /// its older alias; a written value the service resolves to one of several has a pair
    /// for each). A configured value is what the service holds when it answers one of its
    /// spellings, so an object the service answered that way (an imported one) plans no
    /// change.
    pub answered_as: &'static [(&'static str, &'static str)],
    /// The service acts on the value and never answers it: an answer without it says
    /// nothing about it, so it is not drift, and an imported object is taken to hold what
    /// the configuration says.
    pub unanswered: bool,
}

/// The values an enumerated attribute accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Allowed {
    pub values: &'static [&'static str],
    /// The service accepts the values in any case. Otherwise the comparison is exact (the
    /// service rejects `managed` for `MANAGED`) and a value that differs only in case is
    /// suggested in its right case.
    pub any_case: bool,
}

/// Why a value was rejected, and how to fix it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rejection {
    pub message: String,
    pub hint: Option<String>,
}

impl Rejection {
    pub fn new(message: impl Into<String>) -> Self {
        Rejection {
            message: message.into(),
            hint: None,
        }
    }
    pub fn hint(mut self, h: impl Into<String>) -> Self {
        self.hint = Some(h.into());
        self
    }
    pub fn maybe_hint(mut self, h: Option<String>) -> Self {
        self.hint = h.or(self.hint);
        self
    }
}

/// A provider's rule for one string value: `Err` says what is wrong with it.
pub type ValueCheck = fn(&str) -> Result<(), Rejection>;

/// Up to this many allowed values are listed in a rejection; longer sets are named by size.
const LISTED_VALUES: usize = 12;

impl Allowed {
    pub fn accepts(&self, s: &str) -> bool {
        self.values
            .iter()
            .any(|v| *v == s || (self.any_case && v.eq_ignore_ascii_case(s)))
    }

    /// `Err` when `s` is not one of the values, with the closest value as a hint.
    pub fn check(&self, s: &str) -> Result<(), Rejection> {
        if self.accepts(s) {
            return Ok(());
        }
        let expected = if self.values.len() <= LISTED_VALUES {
            format!("one of {}", quoted_list(self.values))
        } else {
            format!(
                "one of {} values (`brickform schema` lists them)",
                self.values.len()
            )
        };
        Err(Rejection::new(format!(
            "{} is not allowed; expected {expected}",
            quote_str(s)
        ))
        .maybe_hint(crate::diagnostics::did_you_mean_value(
            s,
            self.values.iter().copied(),
        )))
    }
}

fn quote_str(s: &str) -> String {
    crate::value::quote(s)
}

/// `"A", "B" or "C"`.
pub fn quoted_list(values: &[&str]) -> String {
    let quoted: Vec<String> = values.iter().map(|v| quote_str(v)).collect();
    match quoted.split_last() {
        None => String::new(),
        Some((last, [])) => last.clone(),
        Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
    }
}

impl Attribute {
    pub fn new(name: &'static str, ty: AttrType, presence: Presence) -> Self {
        Attribute {
            name,
            ty,
            presence,
            description: "",
            replace_on_change: false,
            sensitive: false,
            normalize: Normalize::None,
            server_default: None,
            derived_from: &[],
            allowed: None,
            check: None,
            changes_on_write: false,
            answered_as: &[],
            unanswered: false,
        }
    }
    pub fn required(name: &'static str, ty: AttrType) -> Self {
        Self::new(name, ty, Presence::Required)
    }
    pub fn optional(name: &'static str, ty: AttrType) -> Self {
        Self::new(name, ty, Presence::Optional)
    }
    pub fn computed(name: &'static str, ty: AttrType) -> Self {
        Self::new(name, ty, Presence::Computed)
    }
    pub fn optional_computed(name: &'static str, ty: AttrType) -> Self {
        Self::new(name, ty, Presence::OptionalComputed)
    }
    pub fn describe(mut self, d: &'static str) -> Self {
        self.description = d;
        self
    }
    pub fn force_new(mut self) -> Self {
        self.replace_on_change = true;
        self
    }
    pub fn sensitive(mut self) -> Self {
        self.sensitive = true;
        self
    }
    pub fn normalize(mut self, n: Normalize) -> Self {
        self.normalize = n;
        self
    }
    pub fn derived_from(mut self, attrs: &'static [&'static str]) -> Self {
        self.derived_from = attrs;
        self
    }
    pub fn changes_on_write(mut self) -> Self {
        self.changes_on_write = true;
        self
    }
    pub fn server_default(mut self, v: impl Into<Value>) -> Self {
        self.server_default = Some(v.into());
        self
    }
    /// See [`Attribute::answered_as`].
    pub fn answered_as(mut self, pairs: &'static [(&'static str, &'static str)]) -> Self {
        self.answered_as = pairs;
        self
    }
    /// See [`Attribute::unanswered`].
    pub fn unanswered(mut self) -> Self {
        self.unanswered = true;
        self
    }
    /// Whether the service answering `answered` holds the `written` value: it answers it in
    /// another spelling ([`Attribute::answered_as`]) or never answers it
    /// ([`Attribute::unanswered`]).
    pub fn holds(&self, written: &Value, answered: &Value) -> bool {
        if self.unanswered && answered.is_null() {
            return true;
        }
        match (written, answered) {
            (Value::String(w), Value::String(a)) => {
                self.answered_as.iter().any(|(x, y)| x == w && y == a)
            }
            _ => false,
        }
    }
    /// An enumerated attribute: the values the service accepts, compared exactly.
    pub fn one_of(mut self, values: &'static [&'static str]) -> Self {
        self.allowed = Some(Allowed {
            values,
            any_case: false,
        });
        self
    }
    /// An enumerated attribute whose values the service accepts in any case (add
    /// `.normalize(Normalize::UpperCase)` when the service reports them upper-case).
    pub fn one_of_any_case(mut self, values: &'static [&'static str]) -> Self {
        self.allowed = Some(Allowed {
            values,
            any_case: true,
        });
        self
    }
    /// A rule every known value must follow.
    pub fn check(mut self, f: ValueCheck) -> Self {
        self.check = Some(f);
        self
    }
    /// What is wrong with a known value of this attribute: one entry per rejected string,
    /// with the index of the element for lists and sets. Unknown values and other types
    /// say nothing.
    pub fn rejections(&self, v: &Value) -> Vec<(Option<usize>, Rejection)> {
        if self.allowed.is_none() && self.check.is_none() {
            return Vec::new();
        }
        // The kind's own rule first: it knows what a wrong value usually means, where the
        // closest allowed value may be the wrong advice (`outcome = "failed"` is not a
        // misspelt `"false"`).
        let one = |s: &str| -> Option<Rejection> {
            if let Some(r) = self.check.and_then(|f| f(s).err()) {
                return Some(r);
            }
            self.allowed.as_ref().and_then(|a| a.check(s).err())
        };
        match v {
            Value::String(s) => one(s).map(|r| (None, r)).into_iter().collect(),
            Value::List(items) => items
                .iter()
                .enumerate()
                .filter_map(|(i, item)| match item {
                    Value::String(s) => one(s).map(|r| (Some(i), r)),
                    _ => None,
                })
                .collect(),
            _ => Vec::new(),
        }
    }
    pub fn is_computed_only(&self) -> bool {
        self.presence == Presence::Computed
    }
    pub fn can_configure(&self) -> bool {
        self.presence != Presence::Computed
    }
}

/// How a nested block repeats.
#[derive(Debug, Clone, PartialEq)]
pub enum Nesting {
    /// At most one block (`lifecycle`-like); the value is an object or null.
    Single,
    /// Repeated blocks, order significant; the value is a list of objects.
    List,
    /// Repeated blocks identified by the value of one attribute (tasks by `task_key`):
    /// reordering them in the file changes nothing.
    Keyed(&'static str),
}

#[derive(Debug, Clone)]
pub struct BlockType {
    pub name: &'static str,
    pub nesting: Nesting,
    pub min_items: usize,
    pub max_items: Option<usize>,
    pub replace_on_change: bool,
    /// For repeated blocks: a set, whose order means nothing (each block stands for itself,
    /// with no one attribute to key it by). Compared whatever order the configuration and
    /// the service list them in.
    pub unordered: bool,
    pub schema: Schema,
    pub description: &'static str,
}

impl BlockType {
    /// The value of a block the configuration has none of: null for a single block, an
    /// empty list for repeated ones.
    pub fn none(&self) -> crate::value::Value {
        match self.nesting {
            Nesting::Single => crate::value::Value::Null,
            Nesting::List | Nesting::Keyed(_) => crate::value::Value::List(Vec::new()),
        }
    }
    pub fn new(name: &'static str, nesting: Nesting, schema: Schema) -> Self {
        BlockType {
            name,
            nesting,
            min_items: 0,
            max_items: None,
            replace_on_change: false,
            unordered: false,
            schema,
            description: "",
        }
    }
    pub fn single(name: &'static str, schema: Schema) -> Self {
        let mut b = Self::new(name, Nesting::Single, schema);
        b.max_items = Some(1);
        b
    }
    pub fn list(name: &'static str, schema: Schema) -> Self {
        Self::new(name, Nesting::List, schema)
    }
    pub fn keyed(name: &'static str, key: &'static str, schema: Schema) -> Self {
        Self::new(name, Nesting::Keyed(key), schema)
    }
    pub fn min(mut self, n: usize) -> Self {
        self.min_items = n;
        self
    }
    pub fn force_new(mut self) -> Self {
        self.replace_on_change = true;
        self
    }
    /// The blocks are a set (see [`BlockType::unordered`]).
    pub fn unordered(mut self) -> Self {
        self.unordered = true;
        self
    }
    pub fn describe(mut self, d: &'static str) -> Self {
        self.description = d;
        self
    }
}

/// How an update reaches the service, which decides what happens to a field the
/// configuration leaves out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Writes {
    /// Only the fields sent change (a PATCH): a field the configuration never set keeps
    /// whatever value it has live; one removed from the configuration is cleared.
    #[default]
    Merge,
    /// The whole object is written at every update (a reset, a full-spec PUT): a field the
    /// configuration leaves out goes back to the service's default, however it was set live.
    Whole,
}

/// The shape of a resource kind, a data source, a provider configuration or a nested block.
#[derive(Debug, Clone, Default)]
pub struct Schema {
    pub attributes: Vec<Attribute>,
    pub blocks: Vec<BlockType>,
    pub description: &'static str,
    /// How updates are written (a resource kind's top-level schema; nested blocks follow it).
    pub writes: Writes,
    /// Names this schema does not take because another kind holds what they declare.
    pub elsewhere: Vec<Elsewhere>,
    /// Names other tools accept here that brickform does not (yet), each with why.
    pub unsupported: Vec<Unsupported>,
}

/// An argument or block other tools take in this place that brickform does not: written
/// anyway, it is reported where it is with why, rather than as a name never heard of.
#[derive(Debug, Clone)]
pub struct Unsupported {
    pub name: &'static str,
    /// Why, and what to do instead.
    pub detail: &'static str,
    /// Whether it names what the whole block is about (the object a grant or permission is
    /// on): a block that sets it cannot be kept without it, so a tool carrying such blocks
    /// over from elsewhere leaves the whole block out.
    pub whole: bool,
}

/// An argument or block a schema does not take because another kind declares what it
/// would (a model where one resource did several things): written anyway, it is reported
/// where it is, with the kind to use and how the block is rewritten for it.
#[derive(Debug, Clone)]
pub struct Elsewhere {
    pub name: &'static str,
    /// Why, and which kind to use.
    pub detail: &'static str,
    /// The block rewritten for that kind.
    pub rewrite: &'static str,
}

/// The schema of a kind no provider knows (a state entry of a kind since removed): it
/// declares nothing, so whatever is read with it is taken as it is.
static EMPTY_SCHEMA: std::sync::LazyLock<Schema> = std::sync::LazyLock::new(Schema::default);

impl Schema {
    pub fn new() -> Self {
        Self::default()
    }
    /// The schema that declares nothing, for reading what no provider describes.
    pub fn empty() -> &'static Schema {
        &EMPTY_SCHEMA
    }
    pub fn attr(mut self, a: Attribute) -> Self {
        self.attributes.push(a);
        self
    }
    pub fn block(mut self, b: BlockType) -> Self {
        self.blocks.push(b);
        self
    }
    pub fn describe(mut self, d: &'static str) -> Self {
        self.description = d;
        self
    }
    /// `name` belongs to another kind (see [`Elsewhere`]).
    pub fn elsewhere(mut self, e: Elsewhere) -> Self {
        self.elsewhere.push(e);
        self
    }
    /// `name` is not taken here (see [`Unsupported`]).
    pub fn unsupported(mut self, name: &'static str, detail: &'static str) -> Self {
        self.unsupported.push(Unsupported {
            name,
            detail,
            whole: false,
        });
        self
    }
    /// `name` is not taken here and is what a block that sets it is about (see
    /// [`Unsupported::whole`]).
    pub fn unsupported_target(mut self, name: &'static str, detail: &'static str) -> Self {
        self.unsupported.push(Unsupported {
            name,
            detail,
            whole: true,
        });
        self
    }
    /// Updates write the whole object (see [`Writes::Whole`]).
    pub fn whole_writes(mut self) -> Self {
        self.writes = Writes::Whole;
        self
    }
    pub fn attribute(&self, name: &str) -> Option<&Attribute> {
        self.attributes.iter().find(|a| a.name == name)
    }
    pub fn block_type(&self, name: &str) -> Option<&BlockType> {
        self.blocks.iter().find(|b| b.name == name)
    }
    /// All names that may appear in a body of this schema (for "did you mean" hints).
    pub fn names(&self) -> impl Iterator<Item = &'static str> + '_ {
        self.attributes
            .iter()
            .map(|a| a.name)
            .chain(self.blocks.iter().map(|b| b.name))
    }
}

/// An error from a provider operation.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{message}")]
pub struct ProviderError {
    pub kind: ErrorKind,
    pub message: String,
    /// Extra lines of explanation (the service's error code, what to do).
    pub detail: Option<String>,
    /// The call may have taken effect although it failed: the service answered with a
    /// server error, or no answer came, after the request may have reached it. A create
    /// that fails this way is looked up before it counts as not made.
    pub uncertain: bool,
    /// A create that made the object and then failed at a later step (setting the fields
    /// its create call does not take): the object, so it is recorded rather than orphaned.
    pub made: Option<Box<Remote>>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    NotFound,
    AlreadyExists,
    InvalidInput,
    PermissionDenied,
    Conflict,
    /// Worth retrying later (rate limits, unavailable service, transport errors).
    Transient,
    Other,
}

impl ProviderError {
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        ProviderError {
            kind,
            message: message.into(),
            detail: None,
            uncertain: false,
            made: None,
        }
    }
    pub fn not_found(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::NotFound, message)
    }
    pub fn invalid(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::InvalidInput, message)
    }
    pub fn other(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::Other, message)
    }
    pub fn with_detail(mut self, d: impl Into<String>) -> Self {
        self.detail = Some(d.into());
        self
    }
    /// Marks the failure of a create as one after the object was made (see `made`).
    pub fn made(mut self, remote: Remote) -> Self {
        self.made = Some(Box::new(remote));
        self
    }
    /// Marks the call as one that may have taken effect (see `uncertain`).
    pub fn uncertain(mut self, uncertain: bool) -> Self {
        self.uncertain = uncertain;
        self
    }
}

pub type ProviderResult<T> = Result<T, ProviderError>;

/// The development presets of an environment in `mode = "development"`, which keep a
/// developer's objects apart from everyone else's (docs/promote-dev-to-prod.md). The engine
/// knows who they are for and what the environment block says; what they change is each
/// kind's own ([`ResourceKind::apply_presets`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Presets {
    /// The developer's short name (the part of the user name before `@`), for prefixes.
    pub user: String,
    /// The providers' settings in the environment block, as written (see
    /// [`Provider::environment_schema`]).
    pub settings: Object,
}

impl Presets {
    /// The presets for the user a provider acts as (see [`Provider::current_user`]).
    pub fn new(user_name: &str, settings: &Object) -> Self {
        Presets {
            user: user_name.split('@').next().unwrap_or(user_name).to_string(),
            settings: settings.clone(),
        }
    }
}

/// One field a development preset changed, with the note the plan shows for it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PresetChange {
    /// Dotted path of the field: `name`, `schedule.pause_status`.
    pub field: String,
    /// `name prefixed with "[dev alice] "`.
    pub note: String,
}

impl PresetChange {
    pub fn new(field: impl Into<String>, note: impl Into<String>) -> Self {
        PresetChange {
            field: field.into(),
            note: note.into(),
        }
    }
}

/// How bad a [`Finding`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FindingLevel {
    /// The configuration cannot work: plan and validate fail.
    Error,
    /// It works, but probably not as intended.
    Warning,
}

/// A problem a kind's static checks found in a configuration, reported with the location of
/// the field it concerns.
#[derive(Debug, Clone, PartialEq)]
pub struct Finding {
    pub level: FindingLevel,
    /// The field within the resource body (`bronze`, `cdc_apply_changes`, `keys`); list
    /// blocks are indexed. Empty for the whole resource.
    pub path: Vec<crate::value::PathStep>,
    /// The rule's identifier, when it has one (`V8`).
    pub rule: Option<String>,
    /// One line saying what is wrong.
    pub message: String,
    /// How to fix it.
    pub hint: Option<String>,
}

impl Finding {
    pub fn error(path: &[&str], message: impl Into<String>) -> Self {
        Finding::new(FindingLevel::Error, path, message)
    }
    pub fn warning(path: &[&str], message: impl Into<String>) -> Self {
        Finding::new(FindingLevel::Warning, path, message)
    }
    fn new(level: FindingLevel, path: &[&str], message: impl Into<String>) -> Self {
        Finding {
            level,
            path: path
                .iter()
                .map(|k| crate::value::PathStep::Key(k.to_string()))
                .collect(),
            rule: None,
            message: message.into(),
            hint: None,
        }
    }
    /// Replaces the path (for paths with list indexes).
    pub fn at(mut self, path: Vec<crate::value::PathStep>) -> Self {
        self.path = path;
        self
    }
    pub fn rule(mut self, r: impl Into<String>) -> Self {
        self.rule = Some(r.into());
        self
    }
    pub fn hint(mut self, h: impl Into<String>) -> Self {
        self.hint = Some(h.into());
        self
    }
}

/// What a live object looks like: its id and its attributes (configured and computed).
#[derive(Debug, Clone, PartialEq)]
pub struct Remote {
    pub id: String,
    pub attrs: Object,
}

/// A live object found by a kind's natural key, for deciding whether it is this state's.
#[derive(Debug, Clone)]
pub struct Existing {
    pub remote: Remote,
    /// How messages name it: `KIND ID "NAME"`, `KIND NAME`.
    pub what: String,
    /// The ownership tag it carries, for kinds that tag what they create.
    pub tag: Option<OwnerTag>,
    /// Who the service says owns or created it (its owner, its creator, the user
    /// whose home folder holds it), when it says.
    pub owner: Option<String>,
    /// It holds the name: creating the configured object would fail or overwrite it (a
    /// unique name, a path), rather than add a second one beside it (a name that need not be
    /// unique).
    pub exclusive: bool,
}

/// An ownership tag read back from an object: which state made it, in which environment,
/// for which address.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OwnerTag {
    pub lineage: String,
    /// `None` for tags written before the environment was part of them.
    pub environment: Option<String>,
    pub address: String,
}

impl OwnerTag {
    /// Whether the tag names a state other than the one of `lineage` and `environment`:
    /// another lineage, or the same lineage in another environment. A tag written before
    /// the environment was part of it names its lineage's state, whatever the environment.
    pub fn names_other_state(&self, lineage: &str, environment: &str) -> bool {
        self.lineage != lineage
            || self
                .environment
                .as_deref()
                .is_some_and(|e| e != environment)
    }
}

/// How messages name the owner a tag records: `state L, environment E, as ADDRESS`.
impl std::fmt::Display for OwnerTag {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.environment {
            Some(env) => write!(
                f,
                "state {}, environment {env}, as {}",
                self.lineage, self.address
            ),
            None => write!(f, "state {}, as {}", self.lineage, self.address),
        }
    }
}

/// Where a kind sends what a long step prints as it goes (the lines of a build), for the
/// command to show under the instance's address.
#[derive(Clone)]
pub struct OutputSink(pub std::sync::Arc<dyn Fn(&str) + Send + Sync>);

impl std::fmt::Debug for OutputSink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("OutputSink")
    }
}

impl OutputSink {
    pub fn line(&self, text: &str) {
        (self.0)(text)
    }
}

/// Something an object governs, as [`ResourceKind::claims`] says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Claim {
    /// What is claimed, the same text from every kind that may claim it.
    pub key: String,
    /// Whether the object governs all of it (it undoes what others write there), or only
    /// its own part.
    pub exclusive: bool,
    /// How messages name it: `the entries of list main`.
    pub what: String,
}

/// One planned change, as [`ResourceKind::data_impact`] sees it.
#[derive(Debug, Clone, Copy)]
pub struct PlannedChange<'a> {
    pub action: crate::change::Action,
    /// The object's id, when it exists.
    pub id: Option<&'a str>,
    /// The object as last applied and read (the plan's `before`); `None` for a create.
    pub before: Option<&'a Object>,
    /// The planned object (the plan's `after`; unknown values are `Unknown`); `None` for a
    /// delete.
    pub after: Option<&'a Object>,
    /// No calls may be made (`validate`).
    pub offline: bool,
}

/// Facts about the operation that a resource kind may need (for ownership tags).
#[derive(Debug, Clone, Default)]
pub struct OpContext {
    /// The instance's address, e.g. `TYPE.NAME`.
    pub address: String,
    /// The state lineage, so objects can be tagged as owned by this state.
    pub lineage: String,
    pub environment: String,
    /// The configuration directory: relative `source` paths are resolved against it.
    pub base_dir: std::path::PathBuf,
    /// For the create of a kind whose [`ResourceKind::create_token`] holds: the token to send
    /// with it. The same token is given again when the create is repeated (after a lost
    /// answer, or in the next run after an interrupted one), so the service returns what the
    /// first call made. `None` for every other operation.
    pub create_token: Option<String>,
    /// Where what the operation prints goes, during an apply; `None` elsewhere.
    pub output: Option<OutputSink>,
    /// For an update during an apply: the object as its plan read it (the plan's `before`;
    /// the update's prior is what was last applied), so a kind can refuse to undo what was
    /// done to it since, which the plan could not show. `None` elsewhere.
    pub planned: Option<Arc<Object>>,
}

/// Where one of a kind's values names another object: a namespace's `parent_name` names its
/// parent, a step's `target_id` what it runs. Configuration written from live objects
/// (`brickform adopt`) refers to the other object there instead of repeating its name or id,
/// so the graph orders them and a rename follows.
#[derive(Debug, Clone, Copy)]
pub struct Reference {
    /// The attribute, through nested blocks: `step.runs.target_id`. A last step `*` stands
    /// for every value of a map (`step.parameters.*`).
    pub at: &'static str,
    /// The kinds it may name, in the order they are tried.
    pub to: &'static [&'static str],
    /// The attribute of theirs it holds (`name`, `id`, `path`).
    pub attr: &'static str,
    /// An attribute beside it naming the container the value is a name in (a name that is
    /// unique only within `parent_name`): the value then names the object whose `id` is
    /// `CONTAINER.VALUE`.
    pub within: Option<&'static str>,
    /// Any value may stand there (a free-form parameter): it names an object only when it
    /// equals one already found, and is never looked up to find one.
    pub loose: bool,
    /// The value may also be a path below the other object's (`/a/b/landing/` below `/a/b`):
    /// it is then written as a template of the reference and the rest.
    pub prefix: bool,
}

impl Reference {
    pub const fn to(at: &'static str, to: &'static [&'static str], attr: &'static str) -> Self {
        Reference {
            at,
            to,
            attr,
            within: None,
            loose: false,
            prefix: false,
        }
    }

    pub const fn loose(mut self) -> Self {
        self.loose = true;
        self
    }

    /// A loose reference whose value may be a path below the other object's.
    pub const fn prefix(mut self) -> Self {
        self.prefix = true;
        self.loose = true;
        self
    }

    /// Whether values there are never looked up: [`Reference::loose`] ones, and every
    /// value of a map (`*`).
    pub fn is_loose(&self) -> bool {
        self.loose || self.at.ends_with('*')
    }

    pub const fn within(mut self, container: &'static str) -> Self {
        self.within = Some(container);
        self
    }
}

/// Why a kind cannot prepare a configuration ([`ResourceKind::prepare_config`]), said
/// against the resource block.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PrepareError {
    /// An attribute the kind derives from the configuration is set.
    #[error("{attribute} is derived from the configuration; remove it")]
    Derived { attribute: String },
    /// None of the attributes of which one is needed is set; `what` names the object.
    #[error("{what}: set one of {}", .names.join(", "))]
    NoneOf { what: String, names: Vec<String> },
    /// More than one of the attributes that exclude each other is set.
    #[error("{what}: set only one of {}, not {}", .names.join(", "), .set.join(" and "))]
    SeveralOf {
        what: String,
        names: Vec<String>,
        set: Vec<String>,
    },
    /// Another rule of the kind's, or a file it reads or builds, in the kind's words.
    #[error("{0}")]
    Invalid(String),
}

impl From<String> for PrepareError {
    fn from(why: String) -> Self {
        PrepareError::Invalid(why)
    }
}

impl From<&str> for PrepareError {
    fn from(why: &str) -> Self {
        PrepareError::Invalid(why.to_string())
    }
}

/// Work a kind starts ahead of the plan's need for it (see [`ResourceKind::lookups_ahead`]).
pub type Ahead = std::pin::Pin<Box<dyn std::future::Future<Output = ()> + Send + 'static>>;

/// A resource kind. Implementations hold their provider's client.
///
/// `config` objects passed in have every configurable attribute of the schema present (null
/// when not set), nested blocks as objects (Single) or lists of objects (List, Keyed), and
/// sensitive attributes with their real values (they are never stored by the engine).
#[async_trait]
pub trait ResourceKind: Send + Sync {
    fn type_name(&self) -> &'static str;
    fn schema(&self) -> &Schema;

    /// Completes a decoded configuration with attributes derived from it, before it is
    /// compared or sent: for example the hash of a local `source` file, so a change to the
    /// file's content shows in the plan although the path stayed the same. Errors are
    /// reported against the resource block.
    fn prepare_config(
        &self,
        _config: &mut Object,
        _base_dir: &std::path::Path,
    ) -> Result<(), PrepareError> {
        Ok(())
    }

    /// Computed attributes whose values follow from the configuration alone (a path
    /// derived from its names), so a create's plan shows them and what reads them can
    /// be planned in full. Also asked, when the configuration holds values known only after
    /// apply (so `prepare_config` cannot run), for the optional attributes `prepare_config`
    /// would derive. Values may be partly unknown; attributes left out are "known after
    /// apply".
    fn plan_computed(&self, _config: &Object) -> Object {
        Object::default()
    }

    /// Applies the development presets to a decoded configuration; returns each field it
    /// changed, with the note the plan shows. Kinds without presets change nothing.
    fn apply_presets(&self, _presets: &Presets, _config: &mut Object) -> Vec<PresetChange> {
        Vec::new()
    }

    /// What an environment in `mode = "production"` refuses in this kind's configuration
    /// (a development-only setting, a paused schedule).
    fn production_findings(&self, _config: &Object) -> Vec<Finding> {
        Vec::new()
    }

    /// Before a create is planned in a development environment, where several developers
    /// share a service: the object this state does not manage that already has the name
    /// (another state's, another developer's), or `None` when the name is free. brickform
    /// refuses to take such an object over or to add a same-named twin, and names who holds
    /// it from what the object carries (its ownership tag, its owner).
    async fn name_taken(
        &self,
        _ctx: &OpContext,
        _config: &Object,
    ) -> ProviderResult<Option<Existing>> {
        Ok(None)
    }

    /// Whether a `protect = true` environment guards this kind's objects against delete and
    /// replace (data lives in them). Messages of protected environments name these kinds.
    fn protected(&self) -> bool {
        false
    }

    /// Where this kind's values name other objects (see [`Reference`]).
    fn references(&self) -> &'static [Reference] {
        &[]
    }

    /// Static checks of a decoded configuration, run by `validate` and `plan` without network
    /// access. The configuration may hold unknown values (known only after apply): a check
    /// whose inputs are unknown says nothing.
    fn check(&self, _config: &Object) -> Vec<Finding> {
        Vec::new()
    }

    /// Creates the object; returns its id and full attributes as the service reports them.
    async fn create(&self, ctx: &OpContext, config: &Object) -> ProviderResult<Remote>;

    /// Reads the live object. `Ok(None)` when it no longer exists.
    async fn read(
        &self,
        ctx: &OpContext,
        id: &str,
        prior: &Object,
    ) -> ProviderResult<Option<Remote>>;

    /// Updates in place. `prior` holds the last applied attributes: the configured values and
    /// what the service reported for attributes the configuration does not set itself
    /// (see `Prior::applied`), never a live value of an optional attribute left unset.
    async fn update(
        &self,
        ctx: &OpContext,
        id: &str,
        prior: &Object,
        config: &Object,
    ) -> ProviderResult<Remote>;

    /// Deletes; not-found counts as success.
    async fn delete(&self, ctx: &OpContext, id: &str, prior: &Object) -> ProviderResult<()>;

    /// For an object being imported or adopted: the configured attributes the service shows
    /// it already holds although it cannot report them (the content a file was uploaded
    /// from, known by its hash), to record as applied so the plan does not write them again.
    /// Empty by default: what the service does not report is planned as a change.
    fn held_as_configured(&self, _remote: &Remote, _config: &Object) -> Object {
        Object::default()
    }

    /// Reads an existing object by the id a user gives to `import`.
    async fn import(&self, ctx: &OpContext, id: &str) -> ProviderResult<Option<Remote>> {
        self.read(ctx, id, &Object::default()).await
    }

    /// [`ResourceKind::import`], with what the object tells about its owner: a kind that
    /// tags what it creates gives the ownership tag it carries, so an import of another
    /// state's object can say whose it was. The default carries no tag.
    async fn import_existing(&self, ctx: &OpContext, id: &str) -> ProviderResult<Option<Existing>> {
        Ok(self.import(ctx, id).await?.map(|remote| Existing {
            what: self.describe_existing(id, &remote),
            remote,
            tag: None,
            owner: None,
            exclusive: false,
        }))
    }

    /// The key that finds the object a create made, without its id: a unique full
    /// name, a path, or an ownership tag (address and state lineage) for objects
    /// with server-assigned ids. Written to the write-ahead log before the create is sent,
    /// so a crash between the request and its recorded result loses nothing. `None` when
    /// the kind cannot find its objects that way.
    fn natural_key(&self, _ctx: &OpContext, _config: &Object) -> Option<String> {
        None
    }

    /// Whether the create takes a token that makes repeating it safe: given the same token
    /// (in [`OpContext::create_token`]), the service returns what the first call with that
    /// token made rather than making another. For kinds with no natural key whose objects
    /// cannot be looked up by anything the create sent: a create whose answer was lost is
    /// repeated with its token instead of looked up.
    fn create_token(&self) -> bool {
        false
    }

    /// What of the service an object of this kind governs beyond the object itself, for
    /// kinds whose objects can overlap across kinds (one kind governs all of something,
    /// another a part of it): two instances of a plan with the same claim, one of them
    /// exclusive, would undo each other on every apply, and the plan refuses them. Empty when
    /// nothing overlaps, or the values that say what is claimed are not known yet.
    fn claims(&self, _config: &Object) -> Vec<Claim> {
        Vec::new()
    }

    /// Whether a replacement the configuration forces (an attribute naming another object
    /// changed) makes the new object before it deletes the old, as `create_before_destroy`
    /// does: for kinds whose objects give access, so a new one the service refuses (a
    /// principal that does not exist) leaves the old access in place. A replacement asked
    /// for (`--replace`, `replace_triggered_by`) still deletes first: its new object is the
    /// old one made again.
    fn replaces_by_creating_first(&self) -> bool {
        false
    }

    /// Finishes a create whose first call made the object when the calls after it may not
    /// have run: its answer was lost, or brickform was killed before it heard. Runs the steps
    /// a create takes beyond making the object that do not depend on the configuration
    /// (removing a default child the service adds to a new object) and must be safe to run twice.
    /// Fields a create sets in a later call are left to the next plan, which sees them
    /// differ and updates them.
    async fn complete_create(&self, _ctx: &OpContext, remote: Remote) -> ProviderResult<Remote> {
        Ok(remote)
    }

    /// Finishes a delete the service accepted when what the delete does after its call may
    /// not have run: brickform was killed, or the answer was lost, after the object began
    /// going. Waits for an object the service deletes later to be gone and removes what
    /// the delete leaves behind otherwise (storage the service made for the object); must be
    /// safe to run twice.
    /// `prior` holds the last applied attributes, as for [`ResourceKind::delete`].
    async fn complete_delete(
        &self,
        _ctx: &OpContext,
        _id: &str,
        _prior: &Object,
    ) -> ProviderResult<()> {
        Ok(())
    }

    /// Finds an object by the key [`ResourceKind::natural_key`] gave. `Ok(None)` when
    /// there is none.
    async fn find_by_key(&self, _ctx: &OpContext, _key: &str) -> ProviderResult<Option<Remote>> {
        Ok(None)
    }

    /// Where the object lives, as a [`Location`] whose ancestors are the containers it lies
    /// in (steps `folder`, `data.csv` in a store's namespace for a file in a folder). Given the
    /// object's attributes (configuration and reported values); for an object in state,
    /// only those that are neither lists nor blocks, so finding where every stored object
    /// lies does not convert what a location never depends on. `None` for objects that
    /// lie in no container the engine should know of.
    fn location(&self, _attrs: &Object) -> Option<Location> {
        None
    }

    /// Locations (as [`ResourceKind::location`] makes them) the object lies under without
    /// being held there: the objects placed at them or above are created before it and
    /// deleted after it, and nothing else follows (a store's root path under the object that
    /// grants access to that path). Given attributes as `location` is. Default: none.
    fn lies_under(&self, _attrs: &Object) -> Vec<Location> {
        Vec::new()
    }

    /// Whether deleting this object, as last applied, deletes what lies inside it (a
    /// namespace deleted with a force flag, a store of files, a folder deleted recursively): the engine then plans
    /// what the delete takes with it and names it.
    fn deletes_contents(&self, _attrs: &Object) -> bool {
        false
    }

    /// Locations (see [`ResourceKind::location`]) of objects elsewhere that the service made
    /// for this one and that its delete removes too (a staging area the
    /// service made for it elsewhere). A container deleted in the same plan does not count them as
    /// contents this state does not manage: they are gone before it.
    fn takes_along(&self, _id: &str, _attrs: &Object) -> Vec<Location> {
        Vec::new()
    }

    /// Whether [`ResourceKind::takes_along`] can name anything for this kind: when not,
    /// the engine need not convert a deleted object's last applied values to ask it (a
    /// large object's values cost more to convert than its delete costs to plan).
    fn may_take_along(&self) -> bool {
        false
    }

    /// A location (see [`ResourceKind::location`]) as the user knows the object: a path or a
    /// full name, for plans that list what a container's delete takes with it. The default
    /// is the location's own text, the namespace and its steps.
    fn show_location(&self, location: &Location) -> String {
        location.to_string()
    }

    /// A plan is about to create objects of this kind (state holds none of the block's
    /// instances) and to look each up first (see [`ResourceKind::existing`]). A kind whose
    /// lookups share one listing may return the work that makes it, which the plan starts
    /// now, within its bound on calls in flight, so the listing's wait overlaps the planning
    /// of the blocks before. Only a head start: the lookups must answer alike whether it
    /// ran, failed or never came.
    fn lookups_ahead(&self, _ctx: &OpContext) -> Option<Ahead> {
        None
    }

    /// A plan is about to delete an object of this kind that state holds (a destroy, or an
    /// instance whose block is gone), last applied with `applied` (the configuration as
    /// state records it), and to ask what the delete does to data (see
    /// [`ResourceKind::data_impact`]) once the walk is done. A kind whose answer reads a
    /// listing may return the work that makes it, which the plan starts now, within its
    /// bound on calls in flight, so the listing's wait overlaps the walk's reads. Only a
    /// head start: `data_impact` must answer alike whether it ran, failed or never came.
    fn impact_ahead(
        &self,
        _ctx: &OpContext,
        _applied: &serde_json::Map<String, serde_json::Value>,
    ) -> Option<Ahead> {
        None
    }

    /// What a planned change of this object does to data (see [`crate::change::DataImpact`]):
    /// the tables an object publishes dropped by its delete, loaded again after a replacement, a full
    /// refresh a schedule runs. Called for every create, update, replacement and delete;
    /// the engine adds the address. Reads of the service are allowed (which tables the
    /// object publishes) unless `change.offline`; a failed read leaves what it would have
    /// named unnamed instead of failing the plan.
    async fn data_impact(
        &self,
        _ctx: &OpContext,
        _change: &PlannedChange<'_>,
    ) -> Vec<crate::change::DataEffect> {
        Vec::new()
    }

    /// The locations (see [`ResourceKind::location`]) of the live objects inside this one, at
    /// any depth, so a plan can count those this state does not manage and apply can refuse
    /// when they changed since the plan. Called only when `deletes_contents` holds.
    async fn contents(
        &self,
        _ctx: &OpContext,
        _id: &str,
        _attrs: &Object,
    ) -> ProviderResult<Vec<Location>> {
        Ok(Vec::new())
    }

    /// The live objects a create of `config` would duplicate or collide with: those its
    /// natural key finds (for names that need not be unique, every object of that name), with what they tell about
    /// their owner. A plan imports the one that is this state's instead of creating another
    /// (core's `engine::adopt` decides what counts as this state's). The default looks the
    /// natural key up with [`ResourceKind::find_by_key`].
    async fn find_existing(
        &self,
        ctx: &OpContext,
        config: &Object,
    ) -> ProviderResult<Vec<Existing>> {
        let Some(key) = self.natural_key(ctx, config) else {
            return Ok(Vec::new());
        };
        Ok(self
            .find_by_key(ctx, &key)
            .await?
            .map(|remote| Existing {
                what: self.describe_existing(&key, &remote),
                remote,
                tag: None,
                owner: None,
                exclusive: true,
            })
            .into_iter()
            .collect())
    }

    /// How a plan names an object [`ResourceKind::find_existing`] found under its natural
    /// `key` (in "… already exists" errors and import hints): `TYPE ID` unless the kind
    /// words it its own way.
    fn describe_existing(&self, _key: &str, remote: &Remote) -> String {
        format!("{} {}", self.type_name(), remote.id)
    }

    /// Reads many objects at once where the service makes that cheaper (one list call per
    /// parent instead of one GET per object). `None` when the kind has no cheaper way; the
    /// engine then reads the objects one by one, in parallel.
    async fn read_many(
        &self,
        _ctx: &OpContext,
        _items: &[(String, Object)],
    ) -> Option<Vec<ProviderResult<Option<Remote>>>> {
        None
    }
}

/// A data source: read-only lookups.
#[async_trait]
pub trait DataSource: Send + Sync {
    fn type_name(&self) -> &'static str;
    fn schema(&self) -> &Schema;
    async fn read(&self, config: &Object) -> ProviderResult<Object>;
}

/// A provider: a named family of resource kinds and data sources, configured by a
/// `provider "NAME" { ... }` block.
#[async_trait]
pub trait Provider: Send + Sync {
    fn name(&self) -> &'static str;
    /// The provider's source address as Terraform writes it
    /// (`registry.terraform.io/NAMESPACE/TYPE`), for plans read by tools written for
    /// Terraform's. The default puts it in a `brickform` namespace.
    fn source_address(&self) -> String {
        format!("registry.terraform.io/brickform/{}", self.name())
    }
    /// The schema of the `provider` block.
    fn config_schema(&self) -> &Schema;
    fn resource_kinds(&self) -> Vec<Arc<dyn ResourceKind>>;
    fn data_sources(&self) -> Vec<Arc<dyn DataSource>>;
    /// A fresh, unconfigured instance of this provider, with its own connection, for
    /// another configuration of it (`provider "NAME" { alias = "…" }`). `None` when the
    /// provider has no other configuration to give.
    fn another(&self) -> Option<Arc<dyn Provider>> {
        None
    }
    /// A plan begins: what the provider keeps to answer one plan's lookups (a listing shared
    /// by many) is not to answer the next one's.
    fn plan_started(&self) {}
    /// The provider as itself, for the binary's commands that use what only it offers (a
    /// provider's own client, to follow a run).
    fn as_any(&self) -> Option<&dyn std::any::Any> {
        None
    }
    /// Whether the provider configuration whose block's settings (as written) are
    /// `settings` cannot hold objects of `type_name` (`data`: a data source of that type):
    /// why, and what to do. Asked by `validate` and `plan` for every resource block, before
    /// anything is configured, so a block given a configuration that cannot reach its kind
    /// (one kind of object under a configuration that reaches only other kinds) fails at the block and not
    /// at apply. `None` by default.
    fn refuses(&self, _settings: &Object, _type_name: &str, _data: bool) -> Option<Refusal> {
        None
    }

    /// Connects with the evaluated provider block. Called once per command before any
    /// resource operation; never called by `validate`.
    async fn configure(&self, config: &Object) -> ProviderResult<()>;

    /// The user the provider acts as (configured first), for development presets. `None`
    /// when the provider has no notion of one.
    async fn current_user(&self) -> ProviderResult<Option<String>> {
        Ok(None)
    }

    /// The settings this provider reads from `environment` blocks, beside the engine's own
    /// (`default`, `mode`, `protect`, `variables`): what its kinds' development presets and
    /// production rules depend on. Each is written as a literal of its type, since the
    /// environment decides how the rest of the configuration is read. `None` when it reads
    /// none.
    fn environment_schema(&self) -> Option<&Schema> {
        None
    }

    /// Problems of an environment block's settings (those of [`Self::environment_schema`],
    /// as written) given its mode: a setting that means something in one mode only. Reported
    /// at the environment block when they carry no location of their own.
    fn check_environment(
        &self,
        _mode: Option<EnvMode>,
        _settings: &Object,
    ) -> Vec<crate::diagnostics::Diagnostic> {
        Vec::new()
    }
}

/// Why a provider configuration cannot hold a resource block's kind (see
/// [`Provider::refuses`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    pub message: String,
    pub hint: String,
}

/// All providers a command knows, by resource and data-source type name.
#[derive(Clone, Default)]
pub struct Registry {
    pub providers: Vec<Arc<dyn Provider>>,
    pub kinds: BTreeMap<&'static str, Arc<dyn ResourceKind>>,
    pub data_sources: BTreeMap<&'static str, Arc<dyn DataSource>>,
    /// Which provider (index into `providers`) declared each type.
    owners: BTreeMap<&'static str, usize>,
}

impl Registry {
    pub fn new() -> Self {
        Self::default()
    }
    pub fn register(&mut self, p: Arc<dyn Provider>) {
        let index = self.providers.len();
        for k in p.resource_kinds() {
            self.owners.insert(k.type_name(), index);
            self.kinds.insert(k.type_name(), k);
        }
        for d in p.data_sources() {
            self.owners.insert(d.type_name(), index);
            self.data_sources.insert(d.type_name(), d);
        }
        self.providers.push(p);
    }
    pub fn kind(&self, type_name: &str) -> Option<&Arc<dyn ResourceKind>> {
        self.kinds.get(type_name)
    }
    pub fn data_source(&self, type_name: &str) -> Option<&Arc<dyn DataSource>> {
        self.data_sources.get(type_name)
    }
    pub fn provider(&self, name: &str) -> Option<&Arc<dyn Provider>> {
        self.providers.iter().find(|p| p.name() == name)
    }
    /// The provider that declared a resource or data-source type.
    pub fn provider_of(&self, type_name: &str) -> Option<&Arc<dyn Provider>> {
        self.owners
            .get(type_name)
            .and_then(|i| self.providers.get(*i))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tag(lineage: &str, environment: Option<&str>) -> OwnerTag {
        OwnerTag {
            lineage: lineage.into(),
            environment: environment.map(Into::into),
            address: "databricks_job.nightly".into(),
        }
    }

    #[test]
    fn a_tag_names_another_state_by_its_lineage_or_its_environment() {
        assert!(!tag("L", Some("dev")).names_other_state("L", "dev"));
        assert!(tag("M", Some("dev")).names_other_state("L", "dev"));
        assert!(tag("L", Some("prod")).names_other_state("L", "dev"));
        // Written before the environment was part of the tag: its lineage decides.
        assert!(!tag("L", None).names_other_state("L", "dev"));
        assert!(tag("M", None).names_other_state("L", "dev"));
        assert_eq!(
            tag("L", Some("dev")).to_string(),
            "state L, environment dev, as databricks_job.nightly"
        );
        assert_eq!(
            tag("L", None).to_string(),
            "state L, as databricks_job.nightly"
        );
    }
}
