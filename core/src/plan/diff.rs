//! The three-way comparison of one resource instance (docs/architecture.md, Plan): the
//! configuration now, the configuration last applied (state) and the live object (refresh).
//!
//! - A configured value that differs from the last applied one (what brickform sent) is a
//!   configuration change.
//! - A live value that moved away from the last applied one, on a field the user manages,
//!   is drift and is planned back — unless it is still what the service answered to the
//!   last write (state's computed half): the service's own rewriting of what it was sent
//!   is not a change, whatever form it takes, so no per-field rule has to foresee it.
//! - Server-filled fields the user never set are not drift.
//! - Sensitive (write-only) attributes are compared by fingerprint.

use super::model::{FieldChange, FieldReason, SerValue};
use crate::provider::{BlockType, Nesting, Normalize, Presence, Schema, Writes};
use crate::value::values_equal;
use crate::value::{Object, PathStep, Value};
use std::sync::Arc;

/// What state remembers of an instance.
#[derive(Debug, Clone, Default)]
pub struct Prior {
    /// Last applied configuration (sensitive attributes removed).
    pub config: Object,
    /// Attributes the service reported (ids, server defaults, generated paths).
    pub computed: Object,
    /// Sensitive attribute name → fingerprint of the last applied value.
    pub sensitive: std::collections::BTreeMap<String, String>,
}

impl Prior {
    /// The object as references see it: configured values, then reported ones.
    pub fn merged(&self) -> Object {
        let mut out = self.computed.clone();
        for (k, v) in &self.config {
            if !v.is_null() || !out.contains_key(k) {
                out.insert(k.clone(), v.clone());
            }
        }
        out
    }

    /// One value of [`Prior::merged`], looked up without merging the whole object.
    pub fn merged_get(&self, name: &str) -> Option<&Value> {
        match self.config.get(name) {
            Some(v) if !v.is_null() => Some(v),
            configured => self.computed.get(name).or(configured),
        }
    }

    /// What an update starts from: what was configured, and what the service reported for
    /// attributes the user does not set (computed ones, optional+computed ones left to the
    /// service, brickform-only keys). Not the live value of an optional attribute the
    /// configuration never set: that is not the user's, and a merged update that took it
    /// for "applied before" would clear it — properties added outside brickform, which the
    /// plan keeps, went with the next unrelated change.
    pub fn applied(&self, schema: &Schema) -> Object {
        let mut out = self.merged();
        for a in &schema.attributes {
            let never_set = matches!(a.presence, Presence::Optional | Presence::Required)
                && self.config.get(a.name).is_some_and(Value::is_null);
            if never_set {
                out.insert(a.name.to_string(), Value::Null);
            }
        }
        out
    }
}

pub struct DiffInput<'a> {
    pub schema: &'a Schema,
    /// The configuration now, decoded and normalised (unknown leaves allowed).
    pub config: &'a Object,
    pub prior: Option<&'a Prior>,
    /// The live object, when refreshed and still there.
    pub live: Option<&'a Object>,
    /// Top-level attribute names whose differences are ignored (`lifecycle.ignore_changes`).
    pub ignore: &'a dyn Fn(&str) -> bool,
    /// Whether the configured value of a sensitive attribute matches a stored fingerprint.
    pub fingerprint_matches: &'a dyn Fn(&Value, &str) -> bool,
}

#[derive(Debug, Default)]
pub struct DiffOutput {
    /// Changes planned (configuration and drift), in schema order.
    pub fields: Vec<FieldChange>,
    /// Live values that differ from the last applied ones (for the drift section).
    pub drift: Vec<FieldChange>,
    /// A changed field cannot be updated in place.
    pub replace: bool,
    /// The planned object: configured values, reported values where the user set none,
    /// unknown where only the service can tell.
    pub after: Object,
}

fn key(name: &str) -> Vec<PathStep> {
    vec![PathStep::Key(name.to_string())]
}

/// Puts a value in canonical form: lower-cased names, trimmed slashes, keyed blocks sorted by
/// key, unordered blocks by content, nested blocks normalised by their own schema.
pub fn normalize_object(schema: &Schema, obj: &mut Object) {
    for a in &schema.attributes {
        if let Some(v) = obj.get_mut(a.name) {
            normalize_value(a.normalize, v);
            if let (crate::provider::AttrType::Set(_), Value::List(items)) = (&a.ty, v) {
                // A set's order means nothing: the configuration and the service's answer
                // compare equal whatever order each lists it in.
                items.sort_by_cached_key(|item| item.to_json().to_string());
            }
        }
    }
    for b in &schema.blocks {
        let Some(v) = obj.get_mut(b.name) else {
            continue;
        };
        match v {
            Value::Object(o) => normalize_object(&b.schema, Arc::make_mut(o)),
            Value::List(items) => {
                for item in items.iter_mut() {
                    if let Value::Object(o) = item {
                        normalize_object(&b.schema, Arc::make_mut(o));
                    }
                }
                if b.unordered {
                    // A set of blocks: sorted by content, as a set attribute is.
                    items.sort_by_cached_key(|item| block_order_key(&b.schema, item));
                } else if let Nesting::Keyed(k) = b.nesting {
                    items.sort_by(|x, y| {
                        let kx = x
                            .as_object()
                            .and_then(|o| o.get(k))
                            .and_then(Value::as_str)
                            .unwrap_or("");
                        let ky = y
                            .as_object()
                            .and_then(|o| o.get(k))
                            .and_then(Value::as_str)
                            .unwrap_or("");
                        kx.cmp(ky)
                    });
                }
            }
            _ => {}
        }
    }
}

/// What a set of blocks is sorted by: each block's text as its schema lays it out, an unset
/// attribute as null and an absent block as none, so a block sorts the same whether its
/// unset keys are written out or left out (a configuration's nested blocks hold only what
/// is set; an answer may hold nulls) and whatever order its keys came in.
fn block_order_key(schema: &Schema, item: &Value) -> String {
    let mut out = String::new();
    write_block_order_key(schema, item, &mut out);
    out
}

fn write_block_order_key(schema: &Schema, item: &Value, out: &mut String) {
    let Value::Object(o) = item else {
        out.push_str(&item.to_json().to_string());
        return;
    };
    let mut first = true;
    let mut field = |out: &mut String, name: &str| {
        out.push_str(if first { "{" } else { "," });
        first = false;
        out.push_str(&serde_json::Value::from(name).to_string());
        out.push(':');
    };
    for a in &schema.attributes {
        // A computed attribute has no place in a configuration: only where it was given.
        let v = o.get(a.name);
        if a.presence == Presence::Computed && v.is_none() {
            continue;
        }
        field(out, a.name);
        match v {
            Some(v) => out.push_str(&v.to_json().to_string()),
            None => out.push_str("null"),
        }
    }
    for b in &schema.blocks {
        field(out, b.name);
        let none = b.none();
        match o.get(b.name).unwrap_or(&none) {
            Value::List(items) => {
                out.push('[');
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    write_block_order_key(&b.schema, item, out);
                }
                out.push(']');
            }
            v => write_block_order_key(&b.schema, v, out),
        }
    }
    for (k, v) in o.iter() {
        if schema.attribute(k).is_none() && schema.block_type(k).is_none() {
            field(out, k);
            out.push_str(&v.to_json().to_string());
        }
    }
    if first {
        out.push('{');
    }
    out.push('}');
}

/// Reads what the service holds in another spelling than it was written in (an attribute's
/// `answered_as`: an alias answered by its older name; `unanswered`: a flag the service acts
/// on and never answers) as `written` (what was last written: the configuration of a write,
/// or the state being refreshed) has it. The state then records what was written, and a
/// plan that changes something else does not show these as changing. Nested blocks are
/// matched by key where keyed, else by place. An answer that holds something else is left
/// as it is: that is drift.
pub fn as_written(schema: &Schema, answer: &mut Object, written: &Object) {
    let null = Value::Null;
    for a in &schema.attributes {
        let Some(w) = written.get(a.name).filter(|w| !w.is_null()) else {
            continue;
        };
        if a.holds(w, answer.get(a.name).unwrap_or(&null)) {
            answer.insert(a.name.to_string(), w.clone());
        }
    }
    for b in &schema.blocks {
        let (Some(have), Some(want)) = (answer.get_mut(b.name), written.get(b.name)) else {
            continue;
        };
        match (have, want) {
            (Value::Object(h), Value::Object(w)) => as_written(&b.schema, Arc::make_mut(h), w),
            (Value::List(hs), Value::List(ws)) => {
                for (i, h) in hs.iter_mut().enumerate() {
                    let Value::Object(h) = h else { continue };
                    let w = match b.nesting {
                        Nesting::Keyed(k) => h.get(k).filter(|v| !v.is_null()).and_then(|key| {
                            ws.iter().find(|x| {
                                x.as_object()
                                    .and_then(|x| x.get(k))
                                    .is_some_and(|xk| values_equal(xk, key))
                            })
                        }),
                        _ => ws.get(i),
                    };
                    if let Some(Value::Object(w)) = w {
                        as_written(&b.schema, Arc::make_mut(h), w);
                    }
                }
            }
            _ => {}
        }
    }
}

fn normalize_value(n: Normalize, v: &mut Value) {
    match (n, &mut *v) {
        (Normalize::LowerCase, Value::String(s)) => *s = s.to_lowercase(),
        (Normalize::UpperCase, Value::String(s)) => *s = s.to_uppercase(),
        (Normalize::Principal, Value::String(s)) if s.contains('@') => *s = s.to_lowercase(),
        (Normalize::TrimTrailingSlash, Value::String(s)) => {
            while s.len() > 1 && s.ends_with('/') {
                s.pop();
            }
        }
        (Normalize::MountedPath(mount), Value::String(s)) => {
            if let Some(rest) = s.strip_prefix(mount)
                && (rest.is_empty() || rest.starts_with('/'))
            {
                *s = if rest.is_empty() {
                    "/".into()
                } else {
                    rest.to_string()
                };
            }
            while s.len() > 1 && s.ends_with('/') {
                s.pop();
            }
        }
        (Normalize::Json, Value::String(s)) => {
            if let Ok(j) = serde_json::from_str::<serde_json::Value>(s) {
                *s = canonical_json(&j);
            }
        }
        // A list or set of names is normalised element by element.
        (_, Value::List(items)) => {
            for item in items {
                normalize_value(n, item);
            }
        }
        _ => {}
    }
}

fn canonical_json(j: &serde_json::Value) -> String {
    fn sort(j: &serde_json::Value) -> serde_json::Value {
        match j {
            serde_json::Value::Object(o) => {
                let mut keys: Vec<&String> = o.keys().collect();
                keys.sort();
                serde_json::Value::Object(
                    keys.into_iter().map(|k| (k.clone(), sort(&o[k]))).collect(),
                )
            }
            serde_json::Value::Array(a) => serde_json::Value::Array(a.iter().map(sort).collect()),
            other => other.clone(),
        }
    }
    sort(j).to_string()
}

/// What a field change records of a sensitive value: whether it is set or known, never the
/// value, because plans are saved to files and rendered (the renderers hide it anyway).
fn masked(v: &Value) -> Value {
    match v {
        Value::Null | Value::Unknown => v.clone(),
        _ => Value::String("(sensitive value)".into()),
    }
}

/// Whether a live value counts as "what the user configured", given defaults the service
/// fills in: an unset (null) configuration is matched by the server default, and an empty
/// list or object by an absent one; a value the service spells another way (or never
/// answers) by its answer.
fn same(
    config: &Value,
    live: &Value,
    server_default: Option<&Value>,
    attr: Option<&crate::provider::Attribute>,
) -> bool {
    if values_equal(config, live) || attr.is_some_and(|a| a.holds(config, live)) {
        return true;
    }
    let empty = |v: &Value| match v {
        Value::Null => true,
        Value::List(l) => l.is_empty(),
        Value::Object(o) => o.is_empty(),
        _ => false,
    };
    if empty(config) && empty(live) {
        return true;
    }
    if config.is_null() && server_default.is_some_and(|d| values_equal(d, live)) {
        return true;
    }
    false
}

/// Nested blocks are equal when each configured field matches: fields the service reports
/// that the schema does not know are ignored, and keyed blocks arrive sorted by key. Against
/// a live object (`lenient`), the service's defaults and optional+computed values match what
/// the configuration leaves unset, and so does a whole block the service fills in by itself
/// — when updates merge; when they write the whole object (`writes`), a block the
/// configuration lacks is written away, so it matches only if it holds nothing but defaults.
/// Against the last applied configuration every difference counts, so removing a block is a
/// change.
fn block_equal(bt: &BlockType, a: &Value, b: &Value, lenient: bool, writes: Writes) -> bool {
    let empty = |v: &Value| match v {
        Value::Null => true,
        Value::List(l) => l.is_empty(),
        Value::Object(o) => o.is_empty(),
        _ => false,
    };
    let defaults_only = |v: &Value| {
        let none = Object::default();
        match v {
            Value::Object(o) => object_equal(&bt.schema, &none, o, true, writes),
            Value::List(items) => items.iter().all(|i| {
                i.as_object()
                    .is_some_and(|o| object_equal(&bt.schema, &none, o, true, writes))
            }),
            _ => false,
        }
    };
    match (a, b) {
        (Value::Unknown, _) | (_, Value::Unknown) => false,
        _ if empty(a) && empty(b) => true,
        _ if lenient && empty(a) => writes == Writes::Merge || defaults_only(b),
        // A block the configuration leaves out that holds only what the service fills in
        // is not a difference from the last applied one either (an imported object records
        // what the service filled in; as for its attributes, below).
        _ if empty(a) => defaults_only(b),
        (Value::Object(x), Value::Object(y)) => object_equal(&bt.schema, x, y, lenient, writes),
        (Value::List(x), Value::List(y)) => {
            x.len() == y.len()
                && x.iter().zip(y).all(|(p, q)| match (p, q) {
                    (Value::Object(p), Value::Object(q)) => {
                        object_equal(&bt.schema, p, q, lenient, writes)
                    }
                    _ => values_equal(p, q),
                })
        }
        _ => false,
    }
}

fn object_equal(schema: &Schema, a: &Object, b: &Object, lenient: bool, writes: Writes) -> bool {
    let null = Value::Null;
    schema.attributes.iter().all(|attr| {
        let av = a.get(attr.name).unwrap_or(&null);
        let bv = b.get(attr.name).unwrap_or(&null);
        match attr.presence {
            Presence::Computed => true,
            // Left to the service, against the live object and the last applied one alike,
            // as at the top level (see `diff`): an imported object records what the service
            // decided, which the configuration leaves to it.
            Presence::OptionalComputed if av.is_null() => true,
            // Unsetting a value equal to the service's default changes nothing, nor does the
            // default an imported object records (as at the top level).
            _ => same(av, bv, attr.server_default.as_ref(), Some(attr)),
        }
    }) && schema.blocks.iter().all(|bt| {
        block_equal(
            bt,
            a.get(bt.name).unwrap_or(&null),
            b.get(bt.name).unwrap_or(&null),
            lenient,
            writes,
        )
    })
}

/// Fills what `after` leaves unset with what the service will hold after the update:
/// optional+computed and computed attributes keep their current values; a server default
/// keeps the current value when updates merge, and is the default itself when they write the
/// whole object (the update puts it back); blocks the service adds are kept when they would
/// survive the update. Recurses into nested blocks (keyed ones matched by key), so a plan
/// shows only the changes that will happen, and every one of them. What the last applied
/// configuration (`applied`) set and the configuration now leaves out is removed by the
/// update, not kept. When the object is `updating` with a whole write, an optional+computed
/// value the configuration leaves out is not sent, and the service decides it again: known
/// only after apply (a setting changed outside brickform is not kept by the next
/// full-spec PUT).
///
/// `returned` is what the service answered to brickform's last write, when known: a value
/// the configuration leaves out that the service filled in then, and still shows, is the
/// service's own (a default it fills in on every write), so a whole write keeps it too.
pub fn keep_service_values(
    schema: &Schema,
    after: &mut Object,
    current: &Object,
    applied: &Object,
    updating: bool,
    returned: Option<&Object>,
) {
    let last_write = returned.map(|r| LastWrite {
        sent: applied,
        returned: r,
    });
    keep_values(
        schema,
        after,
        current,
        schema.writes,
        applied,
        updating,
        last_write,
    )
}

/// brickform's last write of an object (or of one nested block of it): what it sent and
/// what the service answered.
#[derive(Clone, Copy)]
struct LastWrite<'a> {
    sent: &'a Object,
    returned: &'a Object,
}

impl<'a> LastWrite<'a> {
    /// The same of the nested block `name`: the one block, or the one `pick` chooses of a
    /// list (by key or position).
    fn nested(&self, name: &str, pick: &dyn Fn(&[Value]) -> Option<usize>) -> Option<Self> {
        let at = |o: &'a Object| -> Option<&'a Object> {
            match o.get(name)? {
                Value::Object(b) => Some(b),
                Value::List(l) => pick(l).and_then(|j| l.get(j)).and_then(Value::as_object),
                _ => None,
            }
        };
        Some(LastWrite {
            sent: at(self.sent)?,
            returned: at(self.returned)?,
        })
    }

    /// Whether the service filled `name` in at the last write, which did not send it, and
    /// still shows what it filled in (`live`).
    fn filled(&self, name: &str, live: &Value) -> bool {
        self.sent.get(name).is_none_or(Value::is_null)
            && self
                .returned
                .get(name)
                .is_some_and(|r| values_equal(r, live))
    }
}

fn keep_values(
    schema: &Schema,
    after: &mut Object,
    current: &Object,
    writes: Writes,
    applied: &Object,
    updating: bool,
    last_write: Option<LastWrite<'_>>,
) {
    let removed = |name: &str| {
        applied.get(name).is_some_and(|v| match v {
            Value::Null => false,
            Value::List(l) => !l.is_empty(),
            Value::Object(o) => !o.is_empty(),
            _ => true,
        })
    };
    for a in &schema.attributes {
        let unset = after.get(a.name).is_none_or(Value::is_null);
        if !unset || a.sensitive {
            continue;
        }
        let service_decides = matches!(a.presence, Presence::OptionalComputed | Presence::Computed);
        let Some(v) = current.get(a.name).filter(|v| !v.is_null()) else {
            // The service does not report it either way.
            continue;
        };
        let filled_by_service = last_write.is_some_and(|w| w.filled(a.name, v));
        if a.presence == Presence::OptionalComputed && writes == Writes::Whole && updating {
            after.insert(a.name.to_string(), Value::Unknown);
        } else if service_decides
            || filled_by_service
            || (a.server_default.is_some() && writes == Writes::Merge && !removed(a.name))
        {
            after.insert(a.name.to_string(), v.clone());
        } else if let Some(d) = &a.server_default {
            after.insert(a.name.to_string(), d.clone());
        }
    }
    for bt in &schema.blocks {
        let Some(cur) = current.get(bt.name) else {
            continue;
        };
        let slot = after.entry(bt.name.to_string()).or_insert(Value::Null);
        let is_empty = match &*slot {
            Value::Null => true,
            Value::List(l) => l.is_empty(),
            Value::Object(o) => o.is_empty(),
            _ => false,
        };
        if is_empty {
            // A block the configuration does not have but the service shows (empty
            // notification settings and the like) is the service's — unless the
            // configuration had it and took it out.
            if !removed(bt.name) && block_equal(bt, &Value::Null, cur, true, writes) {
                *slot = cur.clone();
            }
            continue;
        }
        match (slot, cur) {
            (Value::Object(a), Value::Object(c)) => {
                let w = last_write.and_then(|w| w.nested(bt.name, &|_| None));
                let a = Arc::make_mut(a);
                keep_values(&bt.schema, a, c, writes, &Object::default(), updating, w)
            }
            (Value::List(items), Value::List(cur_items)) => {
                for (i, item) in items.iter_mut().enumerate() {
                    let Value::Object(a) = item else { continue };
                    let key = match bt.nesting {
                        Nesting::Keyed(k) => Some((k, a.get(k).cloned())),
                        _ => None,
                    };
                    let pick = |list: &[Value]| -> Option<usize> {
                        match &key {
                            Some((k, v)) => list
                                .iter()
                                .position(|c| c.as_object().and_then(|o| o.get(*k)) == v.as_ref()),
                            None => (i < list.len()).then_some(i),
                        }
                    };
                    let w = last_write.and_then(|w| w.nested(bt.name, &pick));
                    if let Some(Value::Object(c)) = pick(cur_items).and_then(|j| cur_items.get(j)) {
                        let a = Arc::make_mut(a);
                        keep_values(&bt.schema, a, c, writes, &Object::default(), updating, w);
                    }
                }
            }
            _ => {}
        }
    }
}

/// A value absent from an object, borrowed where a field has none.
static NULL: Value = Value::Null;

/// Compares one instance three ways (see the module's comment): the changes to plan, the
/// drift, whether it must be replaced, and the planned object.
pub fn diff(input: &DiffInput) -> DiffOutput {
    let fields = Field::all(input.schema);
    let mut differ = Differ::new(input, &fields);
    for f in &fields {
        differ.field(f);
    }
    if input.prior.is_some() {
        differ.unknown_after_apply();
    }
    differ.out
}

/// Only the drift of an object that exists: the live values that moved away from what was
/// applied. What a destroy shows before it deletes the object, without comparing the
/// configuration with it, since nothing will be updated.
pub fn drift(input: &DiffInput) -> Vec<FieldChange> {
    if input.prior.is_none() {
        return Vec::new();
    }
    let fields = Field::all(input.schema);
    let mut differ = Differ::new(input, &fields);
    differ.drift_only = true;
    for f in &fields {
        differ.field(f);
    }
    differ.out.drift
}

/// An attribute or block of the schema, with the properties the diff reads.
struct Field<'s> {
    name: &'s str,
    presence: Presence,
    replace_on_change: bool,
    sensitive: bool,
    server_default: Option<&'s Value>,
    attr: Option<&'s crate::provider::Attribute>,
    block: Option<&'s BlockType>,
}

impl<'s> Field<'s> {
    /// Attribute and block names in schema order, with their properties.
    fn all(schema: &'s Schema) -> Vec<Self> {
        schema
            .attributes
            .iter()
            .map(Self::of_attribute)
            .chain(schema.blocks.iter().map(Self::of_block))
            .collect()
    }

    fn of_attribute(a: &'s crate::provider::Attribute) -> Self {
        Field {
            name: a.name,
            presence: a.presence,
            replace_on_change: a.replace_on_change,
            sensitive: a.sensitive,
            server_default: a.server_default.as_ref(),
            attr: Some(a),
            block: None,
        }
    }

    fn of_block(b: &'s BlockType) -> Self {
        Field {
            name: b.name,
            presence: Presence::Optional,
            replace_on_change: b.replace_on_change,
            sensitive: false,
            server_default: None,
            attr: None,
            block: Some(b),
        }
    }

    /// Whether `a` (configured) and `b` (applied or live) mean the same, with nested
    /// blocks compared field by field under their own schema.
    fn equal(&self, a: &Value, b: &Value, with_default: bool, writes: Writes) -> bool {
        match self.block {
            Some(bt) => block_equal(bt, a, b, with_default, writes),
            None => same(
                a,
                b,
                if with_default {
                    self.server_default
                } else {
                    None
                },
                self.attr,
            ),
        }
    }
}

/// One field's values on each side of the comparison of an existing object.
struct Sides<'v> {
    config: &'v Value,
    /// The last applied configuration's value.
    applied: &'v Value,
    live: Option<&'v Value>,
    /// What the service reports: the live value, else what state remembers.
    reported: Option<&'v Value>,
}

impl<'v> Sides<'v> {
    /// What the service holds after an update when the configuration leaves the field
    /// out: merged updates do not touch it (a value it was given before is cleared);
    /// whole writes put the service's default back.
    fn unset_target(&self, writes: Writes, server_default: Option<&'v Value>) -> &'v Value {
        match writes {
            Writes::Merge if self.applied.is_null() => self.live.or(self.reported),
            Writes::Merge => None,
            // A value the service does not report stays unreported.
            Writes::Whole => self.reported.filter(|v| !v.is_null()).and(server_default),
        }
        .unwrap_or(&NULL)
    }
}

/// A change of the top-level field `name`: not live, not forcing a replacement and not
/// sensitive unless the caller says so.
fn change(name: &str, reason: FieldReason, before: Option<Value>, after: Value) -> FieldChange {
    FieldChange {
        path: key(name),
        before: before.map(SerValue),
        after: Some(SerValue(after)),
        live: None,
        reason,
        forces_replacement: false,
        sensitive: false,
    }
}

/// The diff of one instance under way: what it reads, and what it has found so far.
struct Differ<'a> {
    input: &'a DiffInput<'a>,
    writes: Writes,
    /// What the service answered to brickform's last write, in the form the live object is
    /// compared in: a live value still equal to it was not changed outside brickform,
    /// however the service rewrote what it was sent (a name's case, an alias, a default
    /// filled in, a list reordered, a flag it never returns).
    returned: Option<Object>,
    /// Only drift is looked for: the configuration's changes are not planned.
    drift_only: bool,
    out: DiffOutput,
}

impl<'a> Differ<'a> {
    fn new(input: &'a DiffInput<'a>, fields: &[Field]) -> Self {
        let mut out = DiffOutput::default();
        out.after.reserve(fields.len());
        if input.prior.is_none() {
            // A create lists every configured field: sized once, as the plan keeps it.
            out.fields.reserve_exact(
                fields
                    .iter()
                    .filter(|f| f.presence != Presence::Computed)
                    .filter_map(|f| input.config.get(f.name))
                    .filter(|v| !v.is_null() && !is_empty_collection(v))
                    .count(),
            );
        }
        let returned = match (input.prior, input.live) {
            (Some(p), Some(_)) => {
                let mut r = p.computed.clone();
                normalize_object(input.schema, &mut r);
                Some(r)
            }
            _ => None,
        };
        Differ {
            input,
            writes: input.schema.writes,
            returned,
            drift_only: false,
            out,
        }
    }

    /// Plans one field. Values are borrowed and cloned only into what the diff returns: an
    /// instance's values are copied once per place that keeps them, not once per step.
    fn field(&mut self, f: &Field<'a>) {
        let input = self.input;
        let reported = input
            .live
            .and_then(|l| l.get(f.name))
            .or_else(|| input.prior.and_then(|p| p.merged_get(f.name)));
        if self.drift_only && f.presence == Presence::Computed {
            // Computed fields are the service's alone: they never drift.
            return;
        }
        if f.presence == Presence::Computed {
            let v = match input.prior {
                Some(_) => reported.cloned().unwrap_or(Value::Null),
                None => Value::Unknown,
            };
            self.out.after.insert(f.name.to_string(), v);
            return;
        }
        let config = input.config.get(f.name).unwrap_or(&NULL);
        let ignored = (input.ignore)(f.name);
        match input.prior {
            None => self.create(f, config),
            Some(prior) if f.sensitive => self.sensitive(f, prior, config, ignored),
            Some(prior) => {
                let sides = Sides {
                    config,
                    applied: prior.config.get(f.name).unwrap_or(&NULL),
                    live: input.live.and_then(|l| l.get(f.name)),
                    reported,
                };
                self.update(f, &sides, ignored);
            }
        }
    }

    /// Creating: everything configured is new. What the configuration leaves out is the
    /// service's default, where it has one.
    fn create(&mut self, f: &Field, config: &Value) {
        let after = match (config, f.server_default) {
            (Value::Null, _) if f.presence == Presence::OptionalComputed => Value::Unknown,
            (Value::Null, Some(d)) if !f.sensitive => d.clone(),
            _ => config.clone(),
        };
        if !config.is_null() && !is_empty_collection(config) {
            let shown = if f.sensitive {
                masked(config)
            } else {
                config.clone()
            };
            self.out.fields.push(FieldChange {
                sensitive: f.sensitive,
                ..change(f.name, FieldReason::Create, None, shown)
            });
        }
        self.out.after.insert(f.name.to_string(), after);
    }

    /// Write-only: the configured value is compared with the stored fingerprint.
    fn sensitive(&mut self, f: &Field, prior: &Prior, config: &Value, ignored: bool) {
        let name = f.name;
        let changed = match (prior.sensitive.get(name), config) {
            (_, Value::Unknown) => true,
            (Some(fp), v) => !(self.input.fingerprint_matches)(v, fp),
            (None, v) => !v.is_null(),
        };
        let echo_drifted = echo_drifted(config, self.input.live.and_then(|l| l.get(name)));
        let set = || masked(&Value::Bool(true));
        if echo_drifted && !changed {
            self.out.drift.push(FieldChange {
                sensitive: true,
                ..change(name, FieldReason::Drift, Some(masked(config)), set())
            });
        }
        if (changed || echo_drifted) && !ignored {
            // Set before (a fingerprint is stored): an update of a hidden value, not an
            // addition.
            let before = prior.sensitive.contains_key(name).then(set);
            let reason = if changed {
                FieldReason::Configuration
            } else {
                FieldReason::Drift
            };
            self.out.fields.push(FieldChange {
                forces_replacement: f.replace_on_change,
                sensitive: true,
                ..change(name, reason, before, masked(config))
            });
            self.out.replace |= f.replace_on_change;
        }
        self.out.after.insert(name.to_string(), config.clone());
    }

    /// A field of an object that exists: its drift, then the change the update makes.
    fn update(&mut self, f: &Field<'a>, s: &Sides<'a>, ignored: bool) {
        let unset_target = s.unset_target(self.writes, f.server_default);
        self.note_drift(f, s, unset_target);
        if self.drift_only {
            return;
        }
        let after = if ignored {
            // Keep whatever is there now.
            let keep = s.live.unwrap_or(s.applied);
            if keep.is_null() {
                s.reported.cloned().unwrap_or(Value::Null)
            } else {
                keep.clone()
            }
        } else if s.config.is_null() && f.presence == Presence::OptionalComputed {
            // Left to the service (as Terraform's optional+computed attributes are): its
            // value is neither drift nor a change, even when it was configured before.
            s.reported.cloned().unwrap_or(Value::Unknown)
        } else {
            // What the update leaves in the field.
            let after = if s.config.is_null() {
                unset_target
            } else {
                s.config
            };
            self.plan_change(f, s, after);
            after.clone()
        };
        self.out.after.insert(f.name.to_string(), after);
    }

    /// Drift: the live object moved away from what was applied, on a field the user set
    /// — or, where updates write the whole object, away from the default of a field the
    /// user left out, which the next update puts back.
    fn note_drift(&mut self, f: &Field, s: &Sides, unset_target: &Value) {
        let whole = self.writes == Writes::Whole;
        let base = if s.applied.is_null() && s.config.is_null() && whole {
            &NULL
        } else if !s.applied.is_null() {
            s.applied
        } else {
            return;
        };
        let Some(live) = s.live else { return };
        if f.equal(base, live, true, self.writes) || self.left_by_last_write(f, live) {
            return;
        }
        let before = if base.is_null() {
            unset_target.clone()
        } else if whole {
            self.as_held(f.name, base, live)
        } else {
            base.clone()
        };
        self.out.drift.push(FieldChange {
            live: Some(SerValue(live.clone())),
            ..change(f.name, FieldReason::Drift, Some(before), live.clone())
        });
    }

    /// The applied value as the service held it: with the defaults the write filled in,
    /// so a paused schedule shows as UNPAUSED -> PAUSED.
    fn as_held(&self, name: &str, applied: &Value, live: &Value) -> Value {
        let mut was = Object::from_iter([(name.to_string(), applied.clone())]);
        let now = Object::from_iter([(name.to_string(), live.clone())]);
        let schema = self.input.schema;
        keep_values(
            schema,
            &mut was,
            &now,
            self.writes,
            &Object::default(),
            false,
            None,
        );
        was.swap_remove(name).unwrap_or(Value::Null)
    }

    /// The change of a managed field, planned when the configuration changed or the live
    /// value moved away from it; `after` is what the update leaves in the field.
    fn plan_change(&mut self, f: &Field, s: &Sides, after: &Value) {
        let (config, applied, writes) = (s.config, s.applied, self.writes);
        // Unsetting a value equal to the service's default changes nothing (an imported
        // or adopted object records what the service filled in).
        let config_changed = matches!(config, Value::Unknown)
            || config.contains_unknown()
            || !f.equal(
                config,
                applied,
                config.is_null() && f.block.is_none(),
                writes,
            );
        let live_differs = s
            .live
            .is_some_and(|l| !f.equal(config, l, true, writes) && !self.left_by_last_write(f, l));
        // A field never set keeps its live value where updates merge: not managed.
        let unmanaged = writes == Writes::Merge && config.is_null() && applied.is_null();
        if !(config_changed || live_differs) || unmanaged {
            return;
        }
        let reason = if config.contains_unknown() {
            FieldReason::KnownAfterApply
        } else if config_changed {
            FieldReason::Configuration
        } else {
            FieldReason::Drift
        };
        // From what is there now to what the update writes.
        let before = s.live.unwrap_or(applied).clone();
        self.out.fields.push(FieldChange {
            live: s.live.cloned().map(SerValue),
            forces_replacement: f.replace_on_change,
            ..change(f.name, reason, Some(before), after.clone())
        });
        self.out.replace |= f.replace_on_change;
    }

    /// Whether a live value is what the last write left: not a change made outside
    /// brickform.
    fn left_by_last_write(&self, f: &Field, live: &Value) -> bool {
        self.returned
            .as_ref()
            .and_then(|r| r.get(f.name))
            .is_some_and(|r| f.equal(r, live, false, self.writes))
    }

    /// Computed values derived from something that changes, or set anew by every write, are
    /// known only after apply.
    fn unknown_after_apply(&mut self) {
        let writes_happen = !self.out.fields.is_empty();
        let schema = self.input.schema;
        for a in schema.attributes.iter().filter(|a| {
            a.presence == Presence::Computed && (!a.derived_from.is_empty() || a.changes_on_write)
        }) {
            // Drift counts: the write puts the attribute back, and what derives from it
            // changes with it (a connection's url from the host it is given again).
            let changes = (a.changes_on_write && writes_happen)
                || self.out.fields.iter().any(|f| {
                    matches!(f.path.as_slice(), [PathStep::Key(k)] if a.derived_from.contains(&k.as_str()))
                });
            if changes {
                let before = self.out.after.insert(a.name.to_string(), Value::Unknown);
                self.out.fields.push(change(
                    a.name,
                    FieldReason::KnownAfterApply,
                    before,
                    Value::Unknown,
                ));
            }
        }
    }
}

/// A map the service echoes without its secret entries (a connection's options come back
/// without the password): an entry it does return that differs from the configured one was
/// changed outside brickform, and the write puts it back.
fn echo_drifted(config: &Value, live: Option<&Value>) -> bool {
    match (config, live) {
        (Value::Object(want), Some(Value::Object(have))) => want
            .iter()
            .any(|(k, w)| have.get(k).is_some_and(|h| !values_equal(w, h))),
        _ => false,
    }
}

fn is_empty_collection(v: &Value) -> bool {
    matches!(v, Value::List(l) if l.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The diff of `input`, checking on every case that the drift-only diff a destroy uses
    /// finds the same drift.
    fn diffed(input: &DiffInput) -> DiffOutput {
        let out = diff(input);
        assert_eq!(drift(input), out.drift, "the drift-only diff differs");
        out
    }
    use crate::provider::{AttrType, Attribute};

    fn schema() -> Schema {
        Schema::new()
            .attr(
                Attribute::required("name", AttrType::String)
                    .force_new()
                    .normalize(Normalize::LowerCase),
            )
            .attr(Attribute::optional("comment", AttrType::String))
            .attr(Attribute::optional_computed("owner", AttrType::String))
            .attr(Attribute::optional("enabled", AttrType::Bool).server_default(true))
            .attr(Attribute::optional("password", AttrType::String).sensitive())
            .attr(Attribute::computed("id", AttrType::String))
    }

    #[test]
    fn a_principal_is_a_user_name_in_any_case_and_a_group_exactly() {
        for (given, canonical) in [
            ("Ann.Lee@Example.com", "ann.lee@example.com"),
            ("Data Team", "Data Team"),
            ("9F0C2E4A-1B2C", "9F0C2E4A-1B2C"),
        ] {
            let mut v = Value::from(given);
            normalize_value(Normalize::Principal, &mut v);
            assert_eq!(v, Value::from(canonical), "{given}");
        }
    }

    #[test]
    fn a_mounted_path_is_the_same_with_or_without_its_mount_prefix() {
        for (given, canonical) in [
            ("/Mnt/Shared/q", "/Shared/q"),
            ("/Shared/q/", "/Shared/q"),
            ("/Mnt", "/"),
            ("/Mnts/x", "/Mnts/x"),
        ] {
            let mut v = Value::from(given);
            normalize_value(Normalize::MountedPath("/Mnt"), &mut v);
            assert_eq!(v, Value::from(canonical), "{given}");
        }
    }

    #[test]
    fn a_merged_value_looked_up_is_the_merged_objects() {
        let prior = Prior {
            config: obj(&[
                ("set", Value::from("configured")),
                ("unset", Value::Null),
                ("unset_only", Value::Null),
                ("both", Value::from("configured")),
            ]),
            computed: obj(&[
                ("unset", Value::from("reported")),
                ("both", Value::from("reported")),
                ("computed", Value::from("reported")),
            ]),
            sensitive: Default::default(),
        };
        let merged = prior.merged();
        for name in ["set", "unset", "unset_only", "both", "computed", "absent"] {
            assert_eq!(prior.merged_get(name), merged.get(name), "{name}");
        }
    }

    fn obj(pairs: &[(&str, Value)]) -> Object {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.clone()))
            .collect()
    }

    fn run(config: &Object, prior: Option<&Prior>, live: Option<&Object>) -> DiffOutput {
        let ignore = |_: &str| false;
        let fp = |v: &Value, fp: &str| v.as_str() == Some(fp);
        diffed(&DiffInput {
            schema: &schema(),
            config,
            prior,
            live,
            ignore: &ignore,
            fingerprint_matches: &fp,
        })
    }

    fn prior() -> Prior {
        Prior {
            config: obj(&[
                ("name", "a".into()),
                ("comment", "c".into()),
                ("owner", Value::Null),
                ("enabled", Value::Null),
            ]),
            computed: obj(&[
                ("id", "1".into()),
                ("owner", "me".into()),
                ("enabled", true.into()),
            ]),
            sensitive: [("password".to_string(), "pw".to_string())].into(),
        }
    }

    #[test]
    fn create_lists_configured_fields_and_unknown_computed() {
        let c = obj(&[
            ("name", "a".into()),
            ("comment", Value::Null),
            ("owner", Value::Null),
        ]);
        let d = run(&c, None, None);
        assert_eq!(d.fields.len(), 1);
        assert_eq!(d.after["id"], Value::Unknown);
        assert_eq!(d.after["owner"], Value::Unknown);
    }

    #[test]
    fn no_change_when_config_applied_and_live_agree_including_server_defaults() {
        let c = obj(&[
            ("name", "a".into()),
            ("comment", "c".into()),
            ("owner", Value::Null),
            ("enabled", Value::Null),
            ("password", "pw".into()),
        ]);
        let live = obj(&[
            ("name", "a".into()),
            ("comment", "c".into()),
            ("owner", "someone".into()),
            ("enabled", true.into()),
            ("id", "1".into()),
        ]);
        let p = prior();
        let d = run(&c, Some(&p), Some(&live));
        assert!(d.fields.is_empty(), "{:?}", d.fields);
        assert!(d.drift.is_empty(), "{:?}", d.drift);
        assert_eq!(d.after["id"], Value::from("1"));
        assert_eq!(d.after["owner"], Value::from("someone"));
    }

    #[test]
    fn configuration_change_drift_and_replacement() {
        let p = prior();
        let c = obj(&[
            ("name", "b".into()),
            ("comment", "c".into()),
            ("password", "pw".into()),
        ]);
        let live = obj(&[("name", "a".into()), ("comment", "changed outside".into())]);
        let d = run(&c, Some(&p), Some(&live));
        assert!(d.replace);
        let names: Vec<(String, FieldReason)> = d
            .fields
            .iter()
            .map(|f| (crate::value::path_string(&f.path), f.reason))
            .collect();
        assert_eq!(
            names,
            [
                ("name".to_string(), FieldReason::Configuration),
                ("comment".to_string(), FieldReason::Drift)
            ]
        );
        assert!(d.fields[0].forces_replacement);
        assert_eq!(d.drift.len(), 1);
        assert_eq!(d.drift[0].after, Some(SerValue("changed outside".into())));
    }

    #[test]
    fn sensitive_values_compare_by_fingerprint() {
        let p = prior();
        let c = obj(&[
            ("name", "a".into()),
            ("comment", "c".into()),
            ("password", "new".into()),
        ]);
        let d = run(&c, Some(&p), None);
        assert_eq!(d.fields.len(), 1);
        assert!(d.fields[0].sensitive);
    }

    #[test]
    fn unordered_blocks_compare_as_sets() {
        use crate::provider::BlockType;
        let entry = Schema::new()
            .attr(Attribute::optional("who", AttrType::String))
            .attr(Attribute::optional("other", AttrType::String))
            .attr(Attribute::required("level", AttrType::String));
        let schema = Schema::new().block(BlockType::list("entry", entry.clone()).unordered());
        let e = |who: &str, level: &str| {
            Value::object(obj(&[("who", who.into()), ("level", level.into())]))
        };
        let mut config = obj(&[("entry", Value::List(vec![e("b", "X"), e("a", "Y")]))]);
        let mut live = obj(&[("entry", Value::List(vec![e("a", "Y"), e("b", "X")]))]);
        normalize_object(&schema, &mut config);
        normalize_object(&schema, &mut live);
        let prior = Prior {
            config: config.clone(),
            ..Prior::default()
        };
        let ignore = |_: &str| false;
        let fp = |_: &Value, _: &str| true;
        let run = |live: &Object| {
            diffed(&DiffInput {
                schema: &schema,
                config: &config,
                prior: Some(&prior),
                live: Some(live),
                ignore: &ignore,
                fingerprint_matches: &fp,
            })
        };
        let d = run(&live);
        assert!(d.fields.is_empty() && d.drift.is_empty(), "{:?}", d.fields);
        // A listed block, ordered, is still compared by its content.
        let ordered = Schema::new().block(BlockType::list("entry", entry));
        let mut reordered = obj(&[("entry", Value::List(vec![e("b", "X"), e("a", "Y")]))]);
        normalize_object(&ordered, &mut reordered);
        assert_ne!(reordered, live);
        let mut changed = obj(&[("entry", Value::List(vec![e("a", "Z"), e("b", "X")]))]);
        normalize_object(&schema, &mut changed);
        assert!(!run(&changed).fields.is_empty());
    }

    #[test]
    fn a_set_of_blocks_sorts_alike_with_unset_keys_written_out_or_left_out() {
        use crate::provider::BlockType;
        let entry = Schema::new()
            .attr(Attribute::optional("user", AttrType::String))
            .attr(Attribute::optional("group", AttrType::String))
            .attr(Attribute::required("level", AttrType::String));
        let schema = Schema::new().block(BlockType::list("entry", entry).unordered());
        // As written (left out), as an answer may hold them (nulls, another key order).
        let sparse = [
            obj(&[("user", "ann".into()), ("level", "OWN".into())]),
            obj(&[("group", "ops".into()), ("level", "OWN".into())]),
        ];
        let filled = [
            obj(&[
                ("level", "OWN".into()),
                ("group", Value::Null),
                ("user", "ann".into()),
            ]),
            obj(&[
                ("group", "ops".into()),
                ("user", Value::Null),
                ("level", "OWN".into()),
            ]),
        ];
        let sorted = |items: &[Object; 2], reverse: bool| {
            let mut list: Vec<Value> = items.iter().cloned().map(Value::object).collect();
            if reverse {
                list.reverse();
            }
            let mut o = obj(&[("entry", Value::List(list))]);
            normalize_object(&schema, &mut o);
            let whose = |v: &Value| {
                let o = v.as_object().unwrap();
                ["user", "group"]
                    .iter()
                    .find_map(|k| o.get(*k).and_then(Value::as_str))
                    .unwrap()
                    .to_string()
            };
            o["entry"]
                .as_list()
                .unwrap()
                .iter()
                .map(whose)
                .collect::<Vec<_>>()
        };
        // In the schema's order, unset as null: `{"user":"ann",…` before `{"user":null,…`,
        // the same from every spelling.
        let want = sorted(&sparse, false);
        assert_eq!(want, ["ann", "ops"]);
        for (items, reverse) in [(&sparse, true), (&filled, false), (&filled, true)] {
            assert_eq!(sorted(items, reverse), want);
        }
    }

    #[test]
    fn nested_blocks_compare_field_by_field_with_server_defaults() {
        use crate::provider::BlockType;
        let task = Schema::new()
            .attr(Attribute::required("task_key", AttrType::String))
            .attr(Attribute::optional("run_if", AttrType::String).server_default("ALL_SUCCESS"))
            .attr(Attribute::optional_computed("cluster", AttrType::String));
        let schema = Schema::new().block(BlockType::keyed("task", "task_key", task));
        let t = |k: &str, extra: &[(&str, Value)]| {
            let mut o = obj(&[("task_key", k.into())]);
            for (key, v) in extra {
                o.insert(key.to_string(), v.clone());
            }
            Value::object(o)
        };
        let config = obj(&[("task", Value::List(vec![t("a", &[]), t("b", &[])]))]);
        let prior = Prior {
            config: config.clone(),
            ..Prior::default()
        };
        // The service fills run_if and a cluster, and reports a field the schema lacks.
        let live = obj(&[(
            "task",
            Value::List(vec![
                t(
                    "a",
                    &[
                        ("run_if", "ALL_SUCCESS".into()),
                        ("cluster", "c1".into()),
                        ("format", "X".into()),
                    ],
                ),
                t("b", &[("run_if", "ALL_SUCCESS".into())]),
            ]),
        )]);
        let ignore = |_: &str| false;
        let fp = |_: &Value, _: &str| true;
        let d = diffed(&DiffInput {
            schema: &schema,
            config: &config,
            prior: Some(&prior),
            live: Some(&live),
            ignore: &ignore,
            fingerprint_matches: &fp,
        });
        assert!(
            d.fields.is_empty() && d.drift.is_empty(),
            "{:?} {:?}",
            d.fields,
            d.drift
        );
        // A real change inside a block is still seen.
        let live = obj(&[(
            "task",
            Value::List(vec![t("a", &[("run_if", "ALL_DONE".into())]), t("b", &[])]),
        )]);
        let d = diffed(&DiffInput {
            schema: &schema,
            config: &config,
            prior: Some(&prior),
            live: Some(&live),
            ignore: &ignore,
            fingerprint_matches: &fp,
        });
        assert_eq!(d.drift.len(), 1);
        assert_eq!(d.fields.len(), 1);
    }

    #[test]
    fn an_imported_object_holds_what_the_service_answers_for_its_configuration() {
        use crate::provider::{BlockType, Writes};
        const MODES: &[(&str, &str)] = &[("DEDICATED", "SINGLE_USER"), ("AUTO", "SINGLE_USER")];
        let defaults = Schema::new().attr(Attribute::optional_computed("zone", AttrType::String));
        let cluster = Schema::new()
            .attr(Attribute::optional("workers", AttrType::Number))
            .attr(Attribute::optional_computed("disk", AttrType::Bool))
            .attr(Attribute::optional("mode", AttrType::String).answered_as(MODES))
            .attr(Attribute::optional("policy_defaults", AttrType::Bool).unanswered())
            .attr(Attribute::optional("run_if", AttrType::String).server_default("ALL"))
            .block(BlockType::single("cloud", defaults));
        let mut schema = Schema::new().block(BlockType::single("cluster", cluster));
        schema.writes = Writes::Whole;
        let one = |pairs: &[(&str, Value)]| obj(&[("cluster", Value::object(obj(pairs)))]);
        let config = one(&[
            ("workers", 2.into()),
            ("mode", "DEDICATED".into()),
            ("policy_defaults", true.into()),
        ]);
        // What the service answers, recorded as applied: an import has no sent values.
        let answered = one(&[
            ("workers", 2.into()),
            ("disk", false.into()),
            ("mode", "SINGLE_USER".into()),
            ("run_if", "ALL".into()),
            ("cloud", Value::object(obj(&[("zone", "z".into())]))),
        ]);
        let prior = Prior {
            config: answered.clone(),
            computed: answered.clone(),
            ..Prior::default()
        };
        let ignore = |_: &str| false;
        let fp = |_: &Value, _: &str| true;
        let run = |config: &Object, live: &Object| {
            diffed(&DiffInput {
                schema: &schema,
                config,
                prior: Some(&prior),
                live: Some(live),
                ignore: &ignore,
                fingerprint_matches: &fp,
            })
        };
        let d = run(&config, &answered);
        assert!(
            d.fields.is_empty() && d.drift.is_empty(),
            "{:?} {:?}",
            d.fields,
            d.drift
        );
        // Another value, a spelling of another one, and a real change are still changes.
        for (k, v) in [
            ("mode", Value::from("STANDARD")),
            ("mode", Value::from("AUTO_ISH")),
            ("workers", Value::from(3)),
        ] {
            let mut changed = config.clone();
            if let Some(Value::Object(c)) = changed.get_mut("cluster") {
                Arc::make_mut(c).insert(k.to_string(), v.clone());
            }
            assert_eq!(run(&changed, &answered).fields.len(), 1, "{k} = {v:?}");
        }
        // A value the service answers in none of the configured value's spellings moved.
        let moved = one(&[("workers", 2.into()), ("mode", "USER_ISOLATION".into())]);
        assert_eq!(run(&config, &moved).drift.len(), 1);
        // Once written, what was sent is what the flag holds: turning it off is a change.
        let written = Prior {
            config: config.clone(),
            computed: answered.clone(),
            ..Prior::default()
        };
        let mut off = config.clone();
        if let Some(Value::Object(c)) = off.get_mut("cluster") {
            Arc::make_mut(c).insert("policy_defaults".into(), false.into());
        }
        let d = diffed(&DiffInput {
            schema: &schema,
            config: &off,
            prior: Some(&written),
            live: Some(&answered),
            ignore: &ignore,
            fingerprint_matches: &fp,
        });
        assert_eq!(d.fields.len(), 1, "{:?}", d.fields);
    }

    #[test]
    fn what_the_service_holds_in_its_own_spelling_reads_as_written() {
        use crate::provider::BlockType;
        const MODES: &[(&str, &str)] = &[("DEDICATED", "SINGLE_USER")];
        let cluster = Schema::new()
            .attr(Attribute::optional("mode", AttrType::String).answered_as(MODES))
            .attr(Attribute::optional("defaults", AttrType::Bool).unanswered());
        let schema = Schema::new().block(BlockType::keyed(
            "task",
            "task_key",
            Schema::new()
                .attr(Attribute::required("task_key", AttrType::String))
                .block(BlockType::single("cluster", cluster)),
        ));
        let tasks = |items: &[(&str, &[(&str, Value)])]| {
            let list = items
                .iter()
                .map(|(k, c)| {
                    Value::object(obj(&[
                        ("task_key", (*k).into()),
                        ("cluster", Value::object(obj(c))),
                    ]))
                })
                .collect();
            obj(&[("task", Value::List(list))])
        };
        let written = tasks(&[
            (
                "b",
                &[("mode", "DEDICATED".into()), ("defaults", true.into())],
            ),
            ("a", &[("mode", "DEDICATED".into())]),
        ]);
        // Matched by key, in the order the service answers; a holds another mode.
        let answer = tasks(&[
            ("a", &[("mode", "USER_ISOLATION".into())]),
            ("b", &[("mode", "SINGLE_USER".into())]),
        ]);
        let mut got = answer.clone();
        as_written(&schema, &mut got, &written);
        let want = tasks(&[
            ("a", &[("mode", "USER_ISOLATION".into())]),
            (
                "b",
                &[("mode", "DEDICATED".into()), ("defaults", true.into())],
            ),
        ]);
        assert_eq!(got, want);
        // What an import recorded (the service's answer) holds nothing written otherwise.
        let mut got = answer.clone();
        as_written(&schema, &mut got, &answer);
        assert_eq!(got, answer);
    }

    #[test]
    fn whole_writes_plan_unset_fields_back_to_their_defaults_and_merges_keep_them() {
        use crate::provider::{BlockType, Writes};
        let notify = Schema::new().attr(Attribute::optional("on_failure", AttrType::Any));
        let schema = |writes: Writes| Schema {
            writes,
            ..Schema::new()
                .attr(Attribute::required("name", AttrType::String))
                .attr(Attribute::optional("max_runs", AttrType::Number).server_default(1i64))
                .attr(Attribute::optional("description", AttrType::String))
                .block(BlockType::single("notify", notify.clone()))
        };
        let config = obj(&[("name", "j".into())]);
        let prior = Prior {
            config: config.clone(),
            ..Prior::default()
        };
        // Changed outside: more runs, a description, a failure recipient.
        let live = obj(&[
            ("name", "j".into()),
            ("max_runs", Value::from(5i64)),
            ("description", "by hand".into()),
            (
                "notify",
                Value::object(obj(&[(
                    "on_failure",
                    Value::List(vec!["ops@example.com".into()]),
                )])),
            ),
        ]);
        let ignore = |_: &str| false;
        let fp = |_: &Value, _: &str| true;
        let run = |writes: Writes| {
            let s = schema(writes);
            let mut d = diffed(&DiffInput {
                schema: &s,
                config: &config,
                prior: Some(&prior),
                live: Some(&live),
                ignore: &ignore,
                fingerprint_matches: &fp,
            });
            keep_service_values(
                &s,
                &mut d.after,
                &live,
                &prior.config,
                !d.fields.is_empty(),
                None,
            );
            d
        };

        let whole = run(Writes::Whole);
        let changed: Vec<(String, Option<Value>, Option<Value>)> = whole
            .fields
            .iter()
            .map(|f| {
                (
                    crate::value::path_string(&f.path),
                    f.before.clone().map(|v| v.0),
                    f.after.clone().map(|v| v.0),
                )
            })
            .collect();
        assert_eq!(
            changed,
            [
                (
                    "max_runs".into(),
                    Some(Value::from(5i64)),
                    Some(Value::from(1i64))
                ),
                (
                    "description".into(),
                    Some("by hand".into()),
                    Some(Value::Null)
                ),
                (
                    "notify".into(),
                    live.get("notify").cloned(),
                    Some(Value::Null)
                ),
            ]
        );
        assert!(whole.fields.iter().all(|f| f.reason == FieldReason::Drift));
        assert_eq!(whole.after["max_runs"], Value::from(1i64));
        assert_eq!(whole.after["notify"], Value::Null);
        assert_eq!(whole.drift.len(), 3);

        // Merged updates leave what was never configured as it is: no change, and the plan's
        // `after` is the live value.
        let merge = run(Writes::Merge);
        assert!(merge.fields.is_empty(), "{:?}", merge.fields);
        assert_eq!(merge.after["max_runs"], Value::from(5i64));
        assert_eq!(merge.after["description"], Value::from("by hand"));
        assert_eq!(merge.after["notify"], live["notify"]);
    }

    fn run_with(schema: &Schema, config: &Object, prior: &Prior, live: &Object) -> DiffOutput {
        let ignore = |_: &str| false;
        // The fingerprint of a test value is its JSON text.
        let fp = |v: &Value, fp: &str| serde_json::to_string(&v.to_json()).is_ok_and(|s| s == fp);
        diffed(&DiffInput {
            schema,
            config,
            prior: Some(prior),
            live: Some(live),
            ignore: &ignore,
            fingerprint_matches: &fp,
        })
    }

    #[test]
    fn an_echoed_entry_of_a_write_only_map_that_moved_is_drift() {
        let schema = Schema::new()
            .attr(
                Attribute::required("options", AttrType::Map(Box::new(AttrType::String)))
                    .sensitive(),
            )
            .attr(Attribute::computed("url", AttrType::String).derived_from(&["options"]));
        let options = obj(&[("host", "db".into()), ("password", "pw".into())]);
        let config = obj(&[("options", Value::object(options.clone()))]);
        let prior = Prior {
            config: Object::default(),
            computed: obj(&[("url", "jdbc://db/".into())]),
            sensitive: [(
                "options".to_string(),
                Value::object(options).to_json().to_string(),
            )]
            .into(),
        };
        // The service answers without the password: unchanged.
        let same = obj(&[
            ("options", Value::object(obj(&[("host", "db".into())]))),
            ("url", "jdbc://db/".into()),
        ]);
        let d = run_with(&schema, &config, &prior, &same);
        assert!(d.fields.is_empty() && d.drift.is_empty(), "{:?}", d.fields);
        // The host moved: drift, put back, hidden; the url it builds is known after apply.
        let moved = obj(&[
            ("options", Value::object(obj(&[("host", "other".into())]))),
            ("url", "jdbc://other/".into()),
        ]);
        let d = run_with(&schema, &config, &prior, &moved);
        let f = &d.fields[0];
        assert_eq!((f.reason, f.sensitive), (FieldReason::Drift, true));
        assert_ne!(
            f.after.as_ref().map(|v| v.0.clone()),
            Some(Value::from("other"))
        );
        assert_eq!(d.drift.len(), 1);
        assert_eq!(d.after["url"], Value::Unknown);
    }

    #[test]
    fn what_every_write_sets_is_unknown_after_an_update_only() {
        let schema = Schema::new()
            .attr(Attribute::optional("comment", AttrType::String))
            .attr(Attribute::computed("modified", AttrType::Number).changes_on_write());
        let prior = Prior {
            config: obj(&[("comment", "a".into())]),
            computed: obj(&[("modified", Value::from(1i64))]),
            sensitive: Default::default(),
        };
        let live = obj(&[("comment", "a".into()), ("modified", Value::from(1i64))]);
        let d = run_with(&schema, &obj(&[("comment", "a".into())]), &prior, &live);
        assert!(d.fields.is_empty());
        assert_eq!(d.after["modified"], Value::from(1i64));
        let d = run_with(&schema, &obj(&[("comment", "b".into())]), &prior, &live);
        assert_eq!(d.after["modified"], Value::Unknown);
        assert_eq!(d.fields.len(), 2);
    }
}
