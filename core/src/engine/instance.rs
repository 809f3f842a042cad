//! What plan, refresh, apply and recovery all do with one instance: decode its configuration,
//! read what state holds for it, write what the service answered back into state, and say
//! which attributes the service assigns.

use super::world::World;
use crate::diagnostics::Diagnostics;
use crate::lang::decode::Decoder;
use crate::lang::eval::Evaluator;
use crate::lang::load::Resource;
use crate::plan::InstanceKey;
use crate::plan::diff::{Prior, normalize_object};
use crate::provider::{Nesting, Presence, Remote, ResourceKind, Schema};
use crate::value::{Object, PathStep, Value};
use brickform_state::{ResourceState, StateDocument};
use std::sync::Arc;

/// Decodes one instance's configuration.
pub(crate) fn decode_instance(
    r: &Resource,
    schema: &Schema,
    world: &World,
    base_dir: &std::path::Path,
    key: Option<&InstanceKey>,
    each_value: Option<&Value>,
) -> (Object, Vec<Vec<PathStep>>, Diagnostics) {
    let at = world.at(&r.module);
    let mut ev = Evaluator::new(&at, base_dir);
    crate::lang::repetition::bind_instance(&mut ev, key, each_value);
    let header = r.span.as_ref().map(|s| s.range.clone());
    let (decoded, mut diags) =
        Decoder::new(&mut ev, r.body.file).decode(&r.body.body, schema, header);
    if key.is_some() && !diags.0.is_empty() {
        // Each instance is evaluated separately; say which one went wrong.
        let address = r.addr().instance(key.cloned());
        for d in diags.0.iter_mut() {
            let note = format!("(in {address})");
            d.detail = Some(match d.detail.take() {
                Some(text) => format!("{text} {note}"),
                None => note,
            });
        }
    }
    let mut value = decoded.value;
    normalize_object(schema, &mut value);
    (value, decoded.sensitive_paths, diags)
}

/// What a new object gets from the service: computed attributes, and — when it replaces
/// an old one — optional+computed ones the configuration leaves out, which the diff took
/// from the old object (a replaced connection is owned by its creator, not by the old
/// one's owner). A create has them unknown already.
pub(super) fn service_assigned(
    a: &crate::provider::Attribute,
    config: &Object,
    replace: bool,
) -> bool {
    a.is_computed_only()
        || (replace
            && a.presence == crate::provider::Presence::OptionalComputed
            && config.get(a.name).is_none_or(Value::is_null))
}

pub(super) fn sensitive_schema_paths(schema: &Schema) -> Vec<Vec<PathStep>> {
    let mut out: Vec<Vec<PathStep>> = schema
        .attributes
        .iter()
        .filter(|a| a.sensitive)
        .map(|a| vec![PathStep::Key(a.name.to_string())])
        .collect();
    // A write-only attribute of a single nested block (a storage credential's
    // `azure_service_principal.client_secret`) is kept out of state and plans like a
    // top-level one: its block is one object, so its path is known without the value.
    for b in schema
        .blocks
        .iter()
        .filter(|b| b.nesting == Nesting::Single)
    {
        for inner in sensitive_schema_paths(&b.schema) {
            let mut path = vec![PathStep::Key(b.name.to_string())];
            path.extend(inner);
            out.push(path);
        }
    }
    out
}

/// What state holds of the instance at `address`, whose kind's schema is `schema`.
pub(super) fn prior_of(
    state: &StateDocument,
    address: &crate::addrs::InstanceAddr,
    schema: &Schema,
) -> Option<(String, Prior)> {
    let r = state.get(address)?;
    Some((r.id.clone(), prior_from(r, schema)))
}

pub(super) fn prior_from(r: &brickform_state::ResourceState, schema: &Schema) -> Prior {
    let mut config = json_object(&r.config);
    unset_put_back_in_blocks(schema, &mut config);
    Prior {
        config,
        computed: json_object(&r.computed),
        sensitive: r.sensitive.clone(),
    }
}

/// The object as references see it (see [`Prior::merged`]), converted straight from the
/// state entry: for the many places that need only this view, it spares converting both
/// halves and then copying them.
///
/// Each value is converted once: a configured value that is set wins over the computed one
/// in its place, and configured-only keys follow, in their order.
///
/// `schema` is the kind's: the unset keys a state entry leaves out of its blocks are put
/// back (see [`unset_put_back_in_blocks`]).
pub fn merged_from(r: &brickform_state::ResourceState, schema: &Schema) -> Object {
    let mut out = merged_where(r, |_| true);
    unset_put_back_in_blocks(schema, &mut out);
    out
}

/// The attributes of [`merged_from`] that are neither lists nor objects (blocks): what
/// names an object and where it lies, without converting the rest (its nested blocks), for
/// reading the location of every object in state.
pub(super) fn scalars_from(r: &brickform_state::ResourceState) -> Object {
    merged_where(r, |v| !v.is_array() && !v.is_object())
}

/// [`merged_from`], keeping only the attributes whose value `keep` accepts.
fn merged_where(
    r: &brickform_state::ResourceState,
    keep: impl Fn(&serde_json::Value) -> bool,
) -> Object {
    let mut out: Object = r
        .computed
        .iter()
        .filter_map(|(k, computed)| {
            let v = match r.config.get(k) {
                Some(configured) if !configured.is_null() => configured,
                _ => computed,
            };
            keep(v).then(|| (k.clone(), Value::from_json(v)))
        })
        .collect();
    for (k, v) in &r.config {
        if !r.computed.contains_key(k) && keep(v) {
            out.insert(k.clone(), Value::from_json(v));
        }
    }
    out
}

pub(super) fn json_object(m: &serde_json::Map<String, serde_json::Value>) -> Object {
    m.iter()
        .map(|(k, v)| (k.clone(), Value::from_json(v)))
        .collect()
}

/// The configurable, non-sensitive attributes of a read object: the configuration it
/// would have had, for an import or a recovered create.
pub(super) fn configurable(schema: &Schema, attrs: &Object) -> Object {
    attrs
        .iter()
        .filter(|(k, _)| {
            schema
                .attribute(k)
                .is_some_and(|a| a.can_configure() && !a.sensitive)
                || schema.block_type(k).is_some()
        })
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

/// Sets, in `after`, every attribute the service assigns to a new object (see
/// [`service_assigned`]) to what the kind can tell from the configuration, or unknown.
pub(super) fn fill_service_assigned(
    kind: &dyn ResourceKind,
    config: &Object,
    replace: bool,
    after: &mut Object,
) {
    let known = kind.plan_computed(config);
    for a in kind
        .schema()
        .attributes
        .iter()
        .filter(|a| service_assigned(a, config, replace))
    {
        let v = known
            .get(a.name)
            .filter(|v| !matches!(v, Value::Unknown))
            .cloned()
            .unwrap_or(Value::Unknown);
        after.insert(a.name.to_string(), v);
    }
}

fn state_paths(paths: &[Vec<PathStep>]) -> Vec<String> {
    paths
        .iter()
        .map(|p| {
            brickform_state::sensitive_path::join(p.iter().map(|s| match s {
                PathStep::Key(k) => std::borrow::Cow::Borrowed(k.as_str()),
                PathStep::Index(i) => std::borrow::Cow::Owned(i.to_string()),
            }))
        })
        .collect()
}

/// Where an object belongs in state.
pub(super) struct Slot<'a> {
    pub addr: &'a crate::addrs::InstanceAddr,
    pub provider: &'a str,
    pub dependencies: &'a [crate::addrs::InstanceAddr],
}

/// The state entry of an object: the configuration that was applied (sensitive values
/// replaced by fingerprints) and what the service reported.
pub(super) fn state_entry(
    redactor: &brickform_state::Redactor,
    slot: Slot,
    kind: &dyn ResourceKind,
    remote: &Remote,
    config: &Object,
    sensitive: &[Vec<PathStep>],
) -> Result<ResourceState, brickform_state::StateError> {
    let (addr, provider, dependencies) = (slot.addr, slot.provider, slot.dependencies);
    let mut rs = ResourceState::at(addr.clone(), provider, &remote.id);
    let schema = kind.schema();
    let mut sensitive_paths = sensitive_schema_paths(schema);
    sensitive_paths.extend(sensitive.iter().cloned());
    rs.config = config_json(schema, config, &sensitive_paths);
    rs.computed = remote
        .attrs
        .iter()
        .filter(|(k, _)| schema.attribute(k).is_some() || schema.block_type(k).is_some())
        .map(|(k, v)| (k.clone(), v.to_json()))
        .collect();
    // Every computed attribute is recorded, null where the service said nothing (an object of
    // one flavour may lack a field another has), so state says what the object has.
    for a in schema.attributes.iter().filter(|a| a.is_computed_only()) {
        rs.computed.entry(a.name).or_insert(serde_json::Value::Null);
    }
    rs.dependencies = dependencies.to_vec();
    redactor.redact(&mut rs, &state_paths(&sensitive_paths));
    unset_left_out_of_blocks(schema, &mut rs.config);
    Ok(rs)
}

/// A state entry's configuration as JSON, the unset keys of its blocks left out as it is
/// converted (see [`unset_left_out_of_blocks`]): converted and then dropped, they were most
/// of the work of recording an object of many nested blocks. A block a sensitive path
/// leads into is converted whole, nulls included: the redaction fingerprints a sensitive
/// value even when it is null, and [`unset_left_out_of_blocks`] drops that block's unset
/// keys after it.
fn config_json(
    schema: &Schema,
    config: &Object,
    sensitive: &[Vec<PathStep>],
) -> serde_json::Map<String, serde_json::Value> {
    let redacted = |k: &str| {
        sensitive
            .iter()
            .any(|p| matches!(p.first(), Some(PathStep::Key(s)) if s == k))
    };
    config
        .iter()
        .map(|(k, v)| {
            let j = match schema.block_type(k) {
                Some(b) if !redacted(k) => set_in_block_json(&b.schema, v),
                _ => v.to_json(),
            };
            (k.clone(), j)
        })
        .collect()
}

/// A block's value (its object, or the list of them) as JSON without the keys its objects
/// leave unset, in them and in the blocks inside them.
fn set_in_block_json(schema: &Schema, v: &Value) -> serde_json::Value {
    match v {
        Value::Object(o) => serde_json::Value::Object(
            o.iter()
                .filter_map(|(k, v)| {
                    let j = match schema.block_type(k) {
                        Some(b) => set_in_block_json(&b.schema, v),
                        None => v.to_json(),
                    };
                    (!j.is_null()).then(|| (k.clone(), j))
                })
                .collect(),
        ),
        Value::List(items) => items
            .iter()
            .map(|item| match item {
                Value::Object(_) => set_in_block_json(schema, item),
                other => other.to_json(),
            })
            .collect(),
        other => other.to_json(),
    }
}

/// Leaves out of the nested blocks of a state entry's configuration every key whose value
/// is null: what the configuration leaves unset inside a block is not sent, and kept it
/// would be most of the entry (a repeated block may declare some fifty attributes and
/// blocks, of which one object sets a handful: nine keys in ten were null). Whoever
/// reads the entry gets them back ([`unset_put_back_in_blocks`], in [`prior_from`] and
/// [`merged_from`]). The entry's own keys stay, null or not: which of them the
/// configuration set is read from the entry.
///
/// Only blocks are walked, by their schema: an attribute's value (a map of the user's,
/// whose null entries are the user's to keep) is left as it is.
fn unset_left_out_of_blocks(
    schema: &Schema,
    object: &mut serde_json::Map<String, serde_json::Value>,
) {
    for b in &schema.blocks {
        let items = match object.get_mut(b.name) {
            Some(serde_json::Value::Array(items)) => items.iter_mut().collect(),
            Some(one @ serde_json::Value::Object(_)) => vec![one],
            _ => Vec::new(),
        };
        for item in items {
            if let serde_json::Value::Object(inner) = item {
                inner.retain(|_, v| !v.is_null());
                unset_left_out_of_blocks(&b.schema, inner);
            }
        }
    }
}

/// Puts back into the nested blocks of `object` what [`unset_left_out_of_blocks`] left out
/// of a state entry, as the configuration decodes a block: every configurable attribute,
/// then every nested block, in the schema's order, null (an empty list for a repeated
/// block) where unset; keys the schema does not declare follow. So what is read from state
/// (a plan's `before`, the prior an update or a read is given) is what was applied, whether
/// the entry was written with its unset keys or without. A block that has them all is left
/// as it is.
pub fn unset_put_back_in_blocks(schema: &Schema, object: &mut Object) {
    for b in &schema.blocks {
        match object.get_mut(b.name) {
            Some(Value::List(items)) => {
                for item in items {
                    if let Value::Object(inner) = item {
                        put_back(&b.schema, Arc::make_mut(inner));
                    }
                }
            }
            Some(Value::Object(inner)) => put_back(&b.schema, Arc::make_mut(inner)),
            _ => {}
        }
    }
}

/// [`unset_put_back_in_blocks`] for one block's object, and the blocks inside it.
fn put_back(schema: &Schema, block: &mut Object) {
    let configurable = || {
        schema
            .attributes
            .iter()
            .filter(|a| a.presence != Presence::Computed)
    };
    let whole = configurable().all(|a| block.contains_key(a.name))
        && schema.blocks.iter().all(|b| block.contains_key(b.name));
    if !whole {
        let mut rest = std::mem::take(block);
        let mut out = Object::with_capacity_and_hasher(
            schema.attributes.len() + schema.blocks.len() + rest.len(),
            Default::default(),
        );
        for a in configurable() {
            let v = rest.shift_remove(a.name).unwrap_or(Value::Null);
            out.insert(a.name.to_string(), v);
        }
        for b in &schema.blocks {
            let v = rest.shift_remove(b.name).unwrap_or_else(|| b.none());
            out.insert(b.name.to_string(), v);
        }
        out.extend(rest);
        *block = out;
    }
    unset_put_back_in_blocks(schema, block);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sensitive_value_under_a_map_key_holding_a_dot_leaves_state() {
        let doc = StateDocument::new("dev");
        let mut rs = ResourceState::new("t.x", "p", "1").unwrap();
        rs.config = serde_json::json!({"conf": {"spark.password": "hunter2"}})
            .as_object()
            .unwrap()
            .clone();
        let path = vec![
            PathStep::Key("conf".into()),
            PathStep::Key("spark.password".into()),
        ];
        doc.redact(&mut rs, &state_paths(&[path]));
        let text = serde_json::to_string(&rs).unwrap();
        assert!(!text.contains("hunter2"), "{text}");
    }
    use proptest::prelude::*;

    /// The merge as first written: convert the computed half, then lay the configured
    /// values over it.
    fn merged_naively(r: &brickform_state::ResourceState) -> Object {
        let mut out = json_object(&r.computed);
        for (k, v) in &r.config {
            if !v.is_null() || !out.contains_key(k) {
                out.insert(k.clone(), Value::from_json(v));
            }
        }
        out
    }

    fn half() -> impl Strategy<Value = Vec<(String, serde_json::Value)>> {
        let value = prop_oneof![
            Just(serde_json::Value::Null),
            Just(serde_json::json!(1)),
            Just(serde_json::json!("x")),
            Just(serde_json::json!([{ "k": "v" }])),
        ];
        prop::collection::vec(("[a-e]", value), 0..6)
    }

    /// A kind's schema with what the state's unset keys depend on: attributes, a computed
    /// one (never in a configuration), a map of the user's, repeated and single blocks,
    /// and a block inside a block.
    fn nested_schema() -> Schema {
        use crate::provider::{AttrType, Attribute, BlockType};
        let deep = Schema::new()
            .attr(Attribute::optional("x", AttrType::String))
            .attr(Attribute::optional("y", AttrType::Number));
        let item = Schema::new()
            .attr(Attribute::required("key", AttrType::String))
            .attr(Attribute::optional("note", AttrType::String))
            .attr(Attribute::new("made", AttrType::String, Presence::Computed))
            .attr(Attribute::optional("conf", AttrType::string_map()))
            .block(BlockType::single("deep", deep.clone()))
            .block(BlockType::list("deeps", deep));
        Schema::new()
            .attr(Attribute::optional("name", AttrType::String))
            .attr(Attribute::optional("tags", AttrType::string_map()))
            .block(BlockType::list("item", item.clone()))
            .block(BlockType::single("one", item))
    }

    /// An object of `schema` as the configuration decodes it: every configurable attribute,
    /// then every block, in the schema's order, unset ones null (repeated blocks empty),
    /// what is set drawn from `draw`.
    fn decoded(schema: &Schema, draw: &mut impl Iterator<Item = u8>, depth: usize) -> Object {
        fn next(draw: &mut impl Iterator<Item = u8>) -> u8 {
            draw.next().unwrap_or(0)
        }
        let mut out = Object::default();
        for a in schema
            .attributes
            .iter()
            .filter(|a| a.presence != Presence::Computed)
        {
            let v = match (next(draw) % 3, &a.ty) {
                (0, _) => Value::Null,
                // A map of the user's, with a null entry that is the user's to keep.
                (_, crate::provider::AttrType::Map(_)) => Value::object(Object::from_iter([
                    ("set".to_string(), Value::from("v")),
                    ("unset".to_string(), Value::Null),
                ])),
                (_, crate::provider::AttrType::Number) => Value::from_i64(i64::from(next(draw))),
                _ => Value::from(format!("s{}", next(draw)).as_str()),
            };
            out.insert(a.name.to_string(), v);
        }
        for b in &schema.blocks {
            let count = if depth > 2 {
                0
            } else {
                usize::from(next(draw) % 3)
            };
            let mut items: Vec<Value> = (0..count)
                .map(|_| Value::object(decoded(&b.schema, draw, depth + 1)))
                .collect();
            let v = match b.nesting {
                Nesting::Single => items.pop().unwrap_or(Value::Null),
                _ => Value::List(items),
            };
            out.insert(b.name.to_string(), v);
        }
        out
    }

    fn pairs(o: &Object) -> Vec<(String, Value)> {
        o.iter().map(|(k, v)| (k.clone(), v.clone())).collect()
    }

    /// `config` converted to JSON as it is, nulls included.
    fn whole_json(config: &Object) -> serde_json::Map<String, serde_json::Value> {
        config
            .iter()
            .map(|(k, v)| (k.clone(), v.to_json()))
            .collect()
    }

    /// Nested values compared with their keys' order (an `Object` compares as a map).
    fn ordered(v: &Value) -> serde_json::Value {
        serde_json::to_value(v.to_json()).unwrap_or_default()
    }

    #[test]
    fn a_state_entry_keeps_no_unset_key_inside_its_blocks_but_the_user_s_map_entries() {
        let schema = nested_schema();
        let config = Object::from_iter([
            ("name".to_string(), Value::Null),
            (
                "item".to_string(),
                Value::List(vec![Value::object(Object::from_iter([
                    ("key".to_string(), Value::from("a")),
                    ("note".to_string(), Value::Null),
                    (
                        "conf".to_string(),
                        Value::object(Object::from_iter([("k".to_string(), Value::Null)])),
                    ),
                    ("deep".to_string(), Value::Null),
                    ("deeps".to_string(), Value::List(Vec::new())),
                ]))]),
            ),
        ]);
        let mut json = whole_json(&config);
        unset_left_out_of_blocks(&schema, &mut json);
        assert_eq!(
            serde_json::Value::Object(json),
            serde_json::json!({
                "name": null,
                "item": [{ "key": "a", "conf": { "k": null }, "deeps": [] }],
            })
        );
    }

    proptest! {
        /// What a state entry leaves out of its blocks is put back as it was decoded, in
        /// its order: what is read from state is what was applied.
        #[test]
        fn unset_keys_left_out_of_state_are_put_back_in_order(draw in prop::collection::vec(any::<u8>(), 0..200)) {
            let schema = nested_schema();
            let config = decoded(&schema, &mut draw.into_iter(), 0);
            let mut json = whole_json(&config);
            unset_left_out_of_blocks(&schema, &mut json);
            let mut back = json_object(&json);
            unset_put_back_in_blocks(&schema, &mut back);
            prop_assert_eq!(pairs(&back), pairs(&config));
            // An entry written with its unset keys (by an earlier version) reads as it is.
            let mut whole = config.clone();
            unset_put_back_in_blocks(&schema, &mut whole);
            let (back, whole, config) = (Value::object(back), Value::object(whole), Value::object(config));
            prop_assert_eq!(ordered(&back).to_string(), ordered(&config).to_string());
            prop_assert_eq!(ordered(&whole).to_string(), ordered(&config).to_string());
        }

        /// Leaving a block's unset keys out while converting it gives what converting it
        /// whole and then leaving them out gave, key order included; a block a sensitive
        /// path leads into is converted whole.
        #[test]
        fn unset_keys_are_left_out_as_a_configuration_is_converted(draw in prop::collection::vec(any::<u8>(), 0..200)) {
            let schema = nested_schema();
            let config = decoded(&schema, &mut draw.into_iter(), 0);
            let mut whole = whole_json(&config);
            let redacted = [vec![PathStep::Key("one".to_string()), PathStep::Key("note".to_string())]];
            let kept_whole = config_json(&schema, &config, &redacted);
            prop_assert_eq!(
                serde_json::to_string(&kept_whole["one"]).unwrap(),
                serde_json::to_string(&whole["one"]).unwrap()
            );
            unset_left_out_of_blocks(&schema, &mut whole);
            let direct = config_json(&schema, &config, &[]);
            prop_assert_eq!(
                serde_json::to_string(&direct).unwrap(),
                serde_json::to_string(&whole).unwrap()
            );
        }

        #[test]
        fn merged_from_is_the_naive_merge_with_its_order(config in half(), computed in half()) {
            let entry = serde_json::json!({
                "address": "t.x", "mode": "managed", "type": "t", "name": "x",
                "index_key": null, "provider": "p", "id": "1",
                "config": serde_json::Map::from_iter(config),
                "computed": serde_json::Map::from_iter(computed),
            });
            let r: brickform_state::ResourceState = serde_json::from_value(entry).unwrap();
            let fast: Vec<(String, Value)> = merged_from(&r, &Schema::default()).into_iter().collect();
            let naive: Vec<(String, Value)> = merged_naively(&r).into_iter().collect();
            prop_assert_eq!(fast, naive);
        }
    }
}
