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
use crate::provider::{Remote, ResourceKind, Schema};
use crate::value::{Object, PathStep, Value};
use brickform_state::{ResourceState, StateDocument};

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
        .filter(|b| b.nesting == crate::provider::Nesting::Single)
    {
        for inner in sensitive_schema_paths(&b.schema) {
            let mut path = vec![PathStep::Key(b.name.to_string())];
            path.extend(inner);
            out.push(path);
        }
    }
    out
}

pub(super) fn prior_of(
    state: &StateDocument,
    address: &crate::addrs::InstanceAddr,
) -> Option<(String, Prior)> {
    let r = state.get(address)?;
    Some((r.id.clone(), prior_from(r)))
}

pub(super) fn prior_from(r: &brickform_state::ResourceState) -> Prior {
    Prior {
        config: json_object(&r.config),
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
pub fn merged_from(r: &brickform_state::ResourceState) -> Object {
    merged_where(r, |_| true)
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
    rs.config = config
        .iter()
        .map(|(k, v)| (k.clone(), v.to_json()))
        .collect();
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
    Ok(rs)
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

    proptest! {
        #[test]
        fn merged_from_is_the_naive_merge_with_its_order(config in half(), computed in half()) {
            let entry = serde_json::json!({
                "address": "t.x", "mode": "managed", "type": "t", "name": "x",
                "index_key": null, "provider": "p", "id": "1",
                "config": serde_json::Map::from_iter(config),
                "computed": serde_json::Map::from_iter(computed),
            });
            let r: brickform_state::ResourceState = serde_json::from_value(entry).unwrap();
            let fast: Vec<(String, Value)> = merged_from(&r).into_iter().collect();
            let naive: Vec<(String, Value)> = merged_naively(&r).into_iter().collect();
            prop_assert_eq!(fast, naive);
        }
    }
}
