//! An instance's final configuration — what the plan shows and apply sends — made by one
//! function for both: decode, the kind's checks, the development presets, the kind's own
//! preparation; then `ignore_changes`, which keeps what the object holds in place of what
//! the configuration says; then, at apply, the check that it is what the plan said.
//!
//! Plan and apply differ only in what they hand it: the plan, the values the walk knows so
//! far and the values the object keeps (from state and the refresh); apply, the values its
//! dependencies got and the plan's `after`. So apply carries out the plan, and an
//! `ignore_changes` the plan honoured is not undone by the write.

use super::instance::decode_instance;
use super::world::World;
use crate::diagnostics::{Diagnostic, Diagnostics};
use crate::lang::load::{IgnoreChanges, Lifecycle, Resource};
use crate::plan::InstanceKey;
use crate::provider::{Finding, FindingLevel, PresetChange, Presets, ResourceKind, Schema};
use crate::value::values_equal;
use crate::value::{Object, PathStep, Value};

/// What the configuration of one instance is made from.
pub(crate) struct Inputs<'a> {
    pub resource: &'a Resource,
    pub kind: &'a dyn ResourceKind,
    pub world: &'a World,
    pub base_dir: &'a std::path::Path,
    pub key: Option<&'a InstanceKey>,
    pub each: Option<&'a Value>,
    /// Whether the environment is in production mode: its findings apply too.
    pub production: bool,
    pub presets: Option<&'a Presets>,
}

/// An instance's configuration, decoded, checked and prepared.
pub(crate) struct Configured {
    pub config: Object,
    /// Paths the configuration made sensitive (a sensitive variable's value).
    pub sensitive_paths: Vec<Vec<PathStep>>,
    /// Errors and warnings, located in the configuration.
    pub diags: Diagnostics,
    /// What the development presets changed.
    pub preset_notes: Vec<PresetChange>,
}

/// Decodes one instance and runs the kind's checks, the development presets and its own
/// preparation. While values are still unknown (a plan before its dependencies are made),
/// the preparation is what the kind can tell from the known ones.
pub(crate) fn configure(i: &Inputs<'_>, address: &crate::addrs::InstanceAddr) -> Configured {
    let mut made = decoded(i, address);
    if !made.diags.has_errors() {
        Preparing::of(i, address).prepare(&mut made.config, &mut made.diags);
    }
    made
}

/// [`configure`] for an object that exists, with the values `ignore_changes` keeps (see
/// [`Preparing::keeping`]).
pub(crate) fn configure_keeping(
    i: &Inputs<'_>,
    address: &crate::addrs::InstanceAddr,
    ignored: &Ignored<'_>,
    kept: &Object,
) -> Configured {
    let mut made = decoded(i, address);
    if !made.diags.has_errors() {
        let raw = std::mem::take(&mut made.config);
        made.config = Preparing::of(i, address).keeping(raw, ignored, kept, &mut made.diags);
    }
    made
}

/// Decodes one instance and runs the kind's checks and the development presets: the
/// configuration before the kind's own preparation.
pub(crate) fn decoded(i: &Inputs<'_>, address: &crate::addrs::InstanceAddr) -> Configured {
    let (r, kind) = (i.resource, i.kind);
    let schema = kind.schema();
    let (mut config, sensitive_paths, mut diags) =
        decode_instance(r, schema, i.world, i.base_dir, i.key, i.each);
    let mut preset_notes = Vec::new();
    // Values an allowed set or a rule rejected are still in the object, so the kind's
    // checks across attributes (a job's task graph) can report in the same run; anything
    // else missing from it would make them report what is not wrong.
    let complete = diags
        .errors()
        .all(|d| d.label.as_deref() == Some(crate::lang::decode::REJECTED));
    if complete {
        let placeholders = super::placeholders::found(&config);
        diags.extend(findings(placeholders, r, address, &config, schema));
        diags.extend(findings(kind.check(&config), r, address, &config, schema));
        if i.production {
            let found = kind.production_findings(&config);
            diags.extend(findings(found, r, address, &config, schema));
        }
    }
    if !diags.has_errors()
        && let Some(p) = i.presets
    {
        preset_notes = kind.apply_presets(p, &mut config);
    }
    Configured {
        config,
        sensitive_paths,
        diags,
        preset_notes,
    }
}

/// The kind's own preparation of one instance's decoded configuration.
pub(crate) struct Preparing<'a> {
    pub kind: &'a dyn ResourceKind,
    pub resource: &'a Resource,
    pub base_dir: &'a std::path::Path,
    pub address: &'a crate::addrs::InstanceAddr,
}

impl<'a> Preparing<'a> {
    pub fn of(i: &Inputs<'a>, address: &'a crate::addrs::InstanceAddr) -> Self {
        Preparing {
            kind: i.kind,
            resource: i.resource,
            base_dir: i.base_dir,
            address,
        }
    }

    /// What the kind derives (a content's hash), or, while values are unknown, what it
    /// can tell from the known ones.
    pub fn prepare(&self, config: &mut Object, diags: &mut Diagnostics) {
        let schema = self.kind.schema();
        if config.values().all(Value::is_wholly_known) {
            if let Err(msg) = self.kind.prepare_config(config, self.base_dir) {
                diags.push(
                    Diagnostic::error(format!("Invalid configuration for {}", self.address))
                        .at(self.resource.span.clone())
                        .detail(msg.to_string()),
                );
            }
        } else {
            // What prepare_config would derive, as far as the known values tell; the rest
            // is known after apply.
            for (k, v) in self.kind.plan_computed(config) {
                if schema.attribute(&k).is_some_and(|a| a.can_configure())
                    && config.get(&k).is_none_or(Value::is_null)
                {
                    config.insert(k, v);
                }
            }
        }
    }

    /// The decoded configuration `raw` prepared with what `ignore_changes` keeps put in
    /// before the kind derives values from it (a content's hash from the content kept),
    /// and again after (an ignored value the kind derives stays as kept).
    pub fn keeping(
        &self,
        mut raw: Object,
        ignored: &Ignored<'_>,
        kept: &Object,
        diags: &mut Diagnostics,
    ) -> Object {
        let schema = self.kind.schema();
        let written: Vec<String> = raw
            .iter()
            .filter(|(_, v)| !v.is_null())
            .map(|(k, _)| k.clone())
            .collect();
        // Before: only what the configuration writes (a value the kind derives itself, such
        // as an ingestion pipeline's tables, is refused when given to it).
        ignored.keep_written(schema, &mut raw, kept);
        self.prepare(&mut raw, diags);
        // After: what is ignored, and what the kind derived from an ignored value the
        // configuration does not write (so it was not put back before, and the kind derived
        // it from nothing). One derived from ignored values put back is derived again, from
        // those and from the new values of the rest.
        let from_unwritten = |a: &crate::provider::Attribute| {
            a.derived_from
                .iter()
                .any(|d| ignored.covers(d) && !written.iter().any(|w| w == d))
        };
        ignored.keep_where(schema, &mut raw, kept, ignored.replacing, |name| {
            ignored.covers(name) || schema.attribute(name).is_some_and(from_unwritten)
        });
        raw
    }
}

/// Which attributes `ignore_changes` covers for an object that exists (a new object is
/// made as configured): every one for `all`, else those a listed path starts with. A path
/// into an attribute (`properties["owner"]`, `task[0].timeout`) covers the whole attribute.
pub(crate) struct Ignored<'l> {
    lifecycle: &'l Lifecycle,
    exists: bool,
    /// For the new object of a replacement: only what the configuration writes is kept.
    /// What the service assigned the old object (a storage location the service chose) is
    /// not the new one's, and sending it would fail the create.
    replacing: bool,
}

impl<'l> Ignored<'l> {
    pub fn new(lifecycle: &'l Lifecycle, exists: bool) -> Self {
        Ignored {
            lifecycle,
            exists,
            replacing: false,
        }
    }

    /// The same, for the new object of a replacement.
    pub fn replacing(mut self) -> Self {
        self.replacing = true;
        self
    }

    pub fn covers(&self, name: &str) -> bool {
        match &self.lifecycle.ignore_changes {
            IgnoreChanges::None => false,
            IgnoreChanges::All => self.exists,
            IgnoreChanges::Paths(ps) => ps
                .iter()
                .any(|(p, _)| matches!(p.first(), Some(PathStep::Key(k)) if k == name)),
        }
    }

    /// [`Ignored::covers`], and also an attribute the kind derives from one it covers (a
    /// content's hash from the content): kept with it, or the object's own would show as a
    /// change and be written back. Not when something else it derives from changes
    /// (`config` against `kept`): then it is derived again, from the values kept and the
    /// new ones, or the change of what is not ignored would be lost with it.
    pub fn covers_in(&self, schema: &Schema, name: &str, config: &Object, kept: &Object) -> bool {
        if self.covers(name) {
            return true;
        }
        let Some(a) = schema.attribute(name) else {
            return false;
        };
        let null = Value::Null;
        let unchanged = |d: &str| {
            let (now, was) = (config.get(d).unwrap_or(&null), kept.get(d).unwrap_or(&null));
            now.is_null() && was.is_null() || values_equal(now, was)
        };
        a.derived_from.iter().any(|d| self.covers(d))
            && a.derived_from
                .iter()
                .all(|d| self.covers(d) || unchanged(d))
    }

    /// Whether `ignore_changes` says anything: only then is the decoded configuration kept
    /// for a second preparation.
    pub fn any(&self) -> bool {
        self.exists && !matches!(self.lifecycle.ignore_changes, IgnoreChanges::None)
    }

    /// Puts in `config`, for every ignored attribute of an object that exists that `config`
    /// sets, the value the object keeps (`kept`: at plan what the diff kept, at apply the
    /// plan's `after`), so the write leaves it as it is. Sensitive attributes are not:
    /// their values are never kept anywhere, and an ignored one is not compared either.
    pub fn keep_written(&self, schema: &Schema, config: &mut Object, kept: &Object) {
        self.keep_where(schema, config, kept, true, |n| self.covers(n))
    }

    /// Puts in `config` the value `kept` holds for each attribute or block `covered` names
    /// (only those `config` sets, when `written`).
    fn keep_where(
        &self,
        schema: &Schema,
        config: &mut Object,
        kept: &Object,
        written: bool,
        covered: impl Fn(&str) -> bool,
    ) {
        if !self.exists || matches!(self.lifecycle.ignore_changes, IgnoreChanges::None) {
            return;
        }
        for name in schema_names(schema) {
            if !covered(name) || (written && config.get(name).is_none_or(Value::is_null)) {
                continue;
            }
            match kept.get(name) {
                Some(Value::Unknown) => {}
                Some(v) => {
                    config.insert(name.to_string(), v.clone());
                }
                None => {}
            }
        }
    }
}

/// The attributes a configuration may set (sensitive ones left out: their values are kept
/// nowhere) and the blocks.
fn schema_names(schema: &Schema) -> impl Iterator<Item = &'static str> + '_ {
    schema
        .attributes
        .iter()
        .filter(|a| a.can_configure() && !a.sensitive)
        .map(|a| a.name)
        .chain(schema.blocks.iter().map(|b| b.name))
}

/// Where the configuration apply is about to send differs from what the plan said: the
/// first such path, with both values. A value the plan showed as unknown may be anything;
/// one the configuration leaves out (null) is the service's to keep, as the plan showed.
/// Sensitive parts are compared by neither (the plan holds none, and compared them by
/// fingerprint).
pub(crate) fn differs_from_plan(
    config: &Object,
    planned: &Object,
    sensitive: &[Vec<PathStep>],
) -> Option<(Vec<PathStep>, Value, Value)> {
    // Redacted on a copy only when something is sensitive: an instance's configuration is
    // compared once per node, and a job's runs to thousands of values.
    let redacted;
    let shown = if sensitive.is_empty() {
        config
    } else {
        let mut copy = config.clone();
        super::sensitive::redact_object(&mut copy, sensitive);
        redacted = copy;
        &redacted
    };
    let mut path = Vec::new();
    let null = Value::Null;
    for (k, v) in shown {
        path.push(Step::Key(k));
        if let Some(found) = differs(v, planned.get(k).unwrap_or(&null), &mut path) {
            return Some(found);
        }
        path.pop();
    }
    None
}

/// A step of the path being compared, borrowed: the owned path is made only for a
/// difference found.
#[derive(Clone, Copy)]
enum Step<'a> {
    Key(&'a str),
    Index(usize),
}

fn differs<'a>(
    now: &'a Value,
    planned: &'a Value,
    path: &mut Vec<Step<'a>>,
) -> Option<(Vec<PathStep>, Value, Value)> {
    let found = |path: &[Step<'_>]| {
        let owned = path
            .iter()
            .map(|s| match s {
                Step::Key(k) => PathStep::Key((*k).to_string()),
                Step::Index(i) => PathStep::Index(*i),
            })
            .collect();
        Some((owned, planned.clone(), now.clone()))
    };
    match (now, planned) {
        (_, Value::Unknown) | (Value::Null, _) => None,
        (Value::Object(a), Value::Object(b)) => {
            for (k, v) in a.iter() {
                path.push(Step::Key(k));
                if let Some(f) = differs(v, b.get(k).unwrap_or(&Value::Null), path) {
                    return Some(f);
                }
                path.pop();
            }
            None
        }
        (Value::List(a), Value::List(b)) => {
            if a.len() != b.len() {
                return found(path);
            }
            for (n, (x, y)) in a.iter().zip(b).enumerate() {
                path.push(Step::Index(n));
                if let Some(f) = differs(x, y, path) {
                    return Some(f);
                }
                path.pop();
            }
            None
        }
        (Value::List(a), Value::Null) if a.is_empty() => None,
        (Value::Object(a), Value::Null) if a.is_empty() => None,
        _ if values_equal(now, planned) => None,
        _ => found(path),
    }
}

/// A path as the configuration writes it: `task[0].timeout_seconds`, `schedule.pause_status`.
pub(crate) fn path_text(path: &[PathStep]) -> String {
    let mut out = String::new();
    for s in path {
        match s {
            PathStep::Key(k) if out.is_empty() => out.push_str(k),
            PathStep::Key(k) => {
                out.push('.');
                out.push_str(k);
            }
            PathStep::Index(i) => out.push_str(&format!("[{i}]")),
        }
    }
    out
}

/// A kind's static findings as diagnostics, each at the field it concerns.
fn findings(
    found: Vec<Finding>,
    r: &Resource,
    address: &crate::addrs::InstanceAddr,
    config: &Object,
    schema: &Schema,
) -> Diagnostics {
    let mut out = Diagnostics::new();
    for f in found {
        let span = crate::lang::load::locate(&r.body.body, &f.path, config, schema)
            .map(|range| crate::source::Span::new(r.body.file, range))
            .or_else(|| r.span.clone());
        let summary = match &f.rule {
            Some(rule) => format!("{address}: {} [{rule}]", f.message),
            None => format!("{address}: {}", f.message),
        };
        let mut d = match f.level {
            FindingLevel::Error => Diagnostic::error(summary),
            FindingLevel::Warning => Diagnostic::warning(summary),
        }
        .at(span);
        if let Some(h) = f.hint {
            d = d.hint(h);
        }
        out.push(d);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn obj(pairs: &[(&str, Value)]) -> Object {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.clone()))
            .collect()
    }

    #[test]
    fn a_known_planned_value_must_be_what_apply_sends() {
        let planned = obj(&[("name", "a".into()), ("comment", "c".into())]);
        let now = obj(&[("name", "a".into()), ("comment", "d".into())]);
        let (path, was, is) = differs_from_plan(&now, &planned, &[]).unwrap();
        assert_eq!(path_text(&path), "comment");
        assert_eq!((was, is), (Value::from("c"), Value::from("d")));
    }

    #[test]
    fn unknown_planned_values_and_unset_ones_are_filled_in() {
        let planned = obj(&[
            ("name", "a".into()),
            ("parent", Value::Unknown),
            ("owner", "service".into()),
            (
                "item",
                Value::List(vec![Value::object(obj(&[
                    ("key", "k".into()),
                    ("extra", "kept".into()),
                ]))]),
            ),
        ]);
        let now = obj(&[
            ("name", "a".into()),
            ("parent", "id-1".into()),
            ("owner", Value::Null),
            (
                "item",
                Value::List(vec![Value::object(obj(&[("key", "k".into())]))]),
            ),
        ]);
        assert_eq!(differs_from_plan(&now, &planned, &[]), None);
    }

    #[test]
    fn a_nested_difference_is_named_by_its_path_and_sensitive_ones_are_not_compared() {
        let item = |k: &str| Value::object(obj(&[("key", k.into())]));
        let planned = obj(&[
            ("item", Value::List(vec![item("a"), item("b")])),
            ("secret", Value::Null),
        ]);
        let now = obj(&[
            ("item", Value::List(vec![item("a"), item("c")])),
            ("secret", "hunter2".into()),
        ]);
        let secret = vec![vec![PathStep::Key("secret".into())]];
        let (path, _, _) = differs_from_plan(&now, &planned, &secret).unwrap();
        assert_eq!(path_text(&path), "item[1].key");
        let shorter = obj(&[("item", Value::List(vec![item("a")]))]);
        let (path, _, _) = differs_from_plan(&shorter, &planned, &secret).unwrap();
        assert_eq!(path_text(&path), "item");
    }

    #[test]
    fn a_value_derived_from_an_ignored_one_is_kept_only_while_the_rest_is_unchanged() {
        use crate::provider::{AttrType, Attribute};
        let schema = Schema::new()
            .attr(Attribute::optional("env", AttrType::String))
            .attr(Attribute::optional("author", AttrType::String))
            .attr(
                Attribute::optional_computed("params", AttrType::String)
                    .derived_from(&["env", "author"]),
            );
        let lifecycle = Lifecycle {
            ignore_changes: IgnoreChanges::Paths(vec![(vec![PathStep::Key("env".into())], None)]),
            ..Default::default()
        };
        let ignored = Ignored::new(&lifecycle, true);
        let kept = obj(&[("env", "dev".into()), ("author", "a".into())]);
        let same = obj(&[("env", "edited".into()), ("author", "a".into())]);
        let changed = obj(&[("env", "edited".into()), ("author", "b".into())]);
        assert!(ignored.covers_in(&schema, "env", &changed, &kept));
        assert!(ignored.covers_in(&schema, "params", &same, &kept));
        // The author's change must reach what is derived from it.
        assert!(!ignored.covers_in(&schema, "params", &changed, &kept));
        assert!(!ignored.covers_in(&schema, "author", &changed, &kept));
    }

    #[test]
    fn ignored_attributes_keep_what_the_object_holds_once_it_exists() {
        use crate::provider::{AttrType, Attribute};
        let schema = Schema::new()
            .attr(Attribute::required("name", AttrType::String))
            .attr(Attribute::optional("comment", AttrType::String))
            .attr(Attribute::optional("secret", AttrType::String).sensitive());
        let lifecycle = Lifecycle {
            ignore_changes: IgnoreChanges::All,
            ..Default::default()
        };
        let kept = obj(&[
            ("name", "old".into()),
            ("comment", "kept".into()),
            ("secret", Value::Null),
        ]);
        let config = obj(&[
            ("name", "new".into()),
            ("comment", "new".into()),
            ("secret", "s".into()),
        ]);
        let mut existing = config.clone();
        let ignored = Ignored::new(&lifecycle, true);
        ignored.keep_where(&schema, &mut existing, &kept, false, |n| ignored.covers(n));
        assert_eq!(existing["name"], Value::from("old"));
        assert_eq!(existing["comment"], Value::from("kept"));
        assert_eq!(existing["secret"], Value::from("s"));
        let mut new = config.clone();
        let ignored = Ignored::new(&lifecycle, false);
        ignored.keep_where(&schema, &mut new, &kept, false, |n| ignored.covers(n));
        assert_eq!(new, config);
    }
}
