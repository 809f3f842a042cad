//! The pure steps of planning a managed instance: which action its diff calls for, what the
//! planned object holds, and what references to it see. Nothing here calls a provider.

use crate::addrs::{InstanceAddr, ResourceAddr};
use crate::lang::load::Resource;
use crate::plan::diff::{DiffOutput, Prior};
use crate::plan::{Action, ActionReason, FieldChange, FieldReason, ResourceChange, SerValue};
use crate::provider::{Presence, ResourceKind};
use crate::value::{Object, PathStep, Value};
use std::collections::HashMap;

/// What the instances planned so far tell the resources that depend on them, by resource
/// block (`TYPE.NAME`, `data.TYPE.NAME`, in its module instance).
pub(super) type SettledMap = HashMap<ResourceAddr, Vec<Settled>>;

/// What a dependent needs to know of one planned instance.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Settled {
    pub action: Action,
    /// An update that renames it: its name before and after (a rename in the configuration,
    /// or one made outside brickform being put back).
    pub renamed: Option<(Value, Value)>,
    /// The top-level attributes an update changes (what `replace_triggered_by` naming one
    /// attribute looks at).
    pub changed: Vec<String>,
}

impl Settled {
    /// An instance the plan leaves as it is.
    pub fn unchanged() -> Self {
        Settled::by(Action::NoOp)
    }

    /// An instance the plan deletes.
    pub fn deleted() -> Self {
        Settled::by(Action::Delete)
    }

    fn by(action: Action) -> Self {
        Settled {
            action,
            renamed: None,
            changed: Vec::new(),
        }
    }

    pub fn of(c: &ResourceChange) -> Self {
        let renamed = (c.action == Action::Update)
            .then(|| {
                c.fields.iter().find_map(|f| {
                    let name = matches!(f.path.as_slice(), [PathStep::Key(k)] if k == "name");
                    let why = matches!(f.reason, FieldReason::Configuration | FieldReason::Drift);
                    if name && why {
                        Some((f.before.as_ref()?.0.clone(), f.after.as_ref()?.0.clone()))
                    } else {
                        None
                    }
                })
            })
            .flatten();
        let changed = c
            .fields
            .iter()
            .filter_map(|f| match f.path.first() {
                Some(PathStep::Key(k)) => Some(k.clone()),
                _ => None,
            })
            .collect();
        Settled {
            action: c.action,
            renamed,
            changed,
        }
    }

    /// Whether what the instance holds changes by apply. A delete leaves it as it is until
    /// then: a destroy reads the lookups of what it deletes now, so what is keyed by their
    /// results stays known.
    fn changes(&self) -> bool {
        !matches!(self.action, Action::NoOp | Action::Read | Action::Delete)
    }

    /// Whether this instance's change replaces what names it in `replace_triggered_by`: a
    /// new object or a replacement always does, an update when it changes `attribute` (or
    /// anything, when the reference names the whole resource). A delete or a forget does
    /// not: nothing new comes of it (Terraform's `CanTriggerDownstreamReplace`).
    fn triggers(&self, attribute: Option<&str>) -> bool {
        match self.action {
            Action::Create | Action::DeleteThenCreate | Action::CreateThenDelete => true,
            Action::Update => attribute.is_none_or(|a| self.changed.iter().any(|c| c == a)),
            Action::NoOp | Action::Read | Action::Delete | Action::Forget => false,
        }
    }
}

/// Whether something in `dependencies` changes in this plan (a lookup of it then waits for
/// apply).
pub(super) fn dependency_pending(settled: &SettledMap, dependencies: &[InstanceAddr]) -> bool {
    dependencies
        .iter()
        .filter_map(|d| settled.get(d.whole()?))
        .flatten()
        .any(Settled::changes)
}

/// A value that cannot change in place but changes exactly as a dependency is renamed in
/// place (a child's reference to its parent's name, when the parent is renamed) follows the
/// rename: the service moves the child with its parent, so replacing the child would be wrong (and
/// would fail, the child being already there under the new name). A rename made outside
/// brickform that the plan puts back is followed the same way.
pub(super) fn follow_renames(
    d: &mut DiffOutput,
    settled: &SettledMap,
    dependencies: &[InstanceAddr],
) {
    let renamed: Vec<&(Value, Value)> = dependencies
        .iter()
        .filter_map(|dep| settled.get(dep.whole()?))
        .flatten()
        .filter_map(|s| s.renamed.as_ref())
        .collect();
    if renamed.is_empty() {
        return;
    }
    let mut still_replaced = false;
    for f in d.fields.iter_mut().filter(|f| f.forces_replacement) {
        let follows = matches!((&f.before, &f.after), (Some(b), Some(a)) if renamed.iter().any(|(ob, oa)| crate::value::values_equal(ob, &b.0) && crate::value::values_equal(oa, &a.0)));
        if follows {
            f.forces_replacement = false;
        } else {
            still_replaced = true;
        }
    }
    d.replace = still_replaced;
}

/// `lifecycle.replace_triggered_by`: a referenced resource that changes in this plan.
pub(super) fn replace_triggered(r: &Resource, settled: &SettledMap) -> bool {
    triggers_of(r).any(|(target, attribute)| {
        settled
            .get(&target)
            .is_some_and(|instances| instances.iter().any(|s| s.triggers(attribute.as_deref())))
    })
}

/// The blocks `replace_triggered_by` names, each with the attribute named, if any.
fn triggers_of(r: &Resource) -> impl Iterator<Item = (ResourceAddr, Option<String>)> + '_ {
    r.lifecycle
        .replace_triggered_by
        .iter()
        .flat_map(|t| crate::lang::refs::expr_refs(&t.expr))
        .filter_map(|rf| {
            // `TYPE.NAME.ATTR`: the attribute, when the reference names one before any index.
            let at = if rf.root == "data" { 2 } else { 1 };
            let attribute = rf.attrs.get(at).cloned();
            // The reference names a block of the root module, as it always has here.
            let target = rf.target().and_then(|t| ResourceAddr::parse(&t).ok())?;
            Some((target, attribute))
        })
}

/// The blocks whose settled instances the decisions of `r`'s instances read: those it
/// depends on (renames they follow) and those its `replace_triggered_by` names.
pub(super) fn settled_read_by(r: &Resource, dependencies: &[InstanceAddr]) -> Vec<ResourceAddr> {
    dependencies
        .iter()
        .filter_map(|d| d.whole().cloned())
        .chain(triggers_of(r).map(|(target, _)| target))
        .collect()
}

/// Why an instance is replaced, when something asks for it besides its diff.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct ReplaceAsked {
    /// `--replace` names it.
    pub by_request: bool,
    /// `replace_triggered_by` names something that changes.
    pub by_triggers: bool,
}

/// The action an instance's diff calls for, and why. `prior` is whether the instance has an
/// object to compare with (none when it is new, or was deleted outside brickform).
pub(super) fn decide(
    prior: bool,
    deleted_outside: bool,
    importing: bool,
    d: &DiffOutput,
    asked: ReplaceAsked,
    create_before_destroy: bool,
) -> (Action, Option<ActionReason>) {
    let mut action = if !prior {
        Action::Create
    } else if asked.by_request || d.replace || asked.by_triggers {
        if create_before_destroy {
            Action::CreateThenDelete
        } else {
            Action::DeleteThenCreate
        }
    } else if d.fields.is_empty() {
        Action::NoOp
    } else {
        Action::Update
    };
    let reason = if deleted_outside {
        Some(ActionReason::CreateBecauseDeletedOutside)
    } else if asked.by_request && action.is_replace() {
        Some(ActionReason::ReplaceByRequest)
    } else if asked.by_triggers && action.is_replace() {
        Some(ActionReason::ReplaceByTriggers)
    } else if action.is_replace() {
        Some(ActionReason::ReplaceBecauseCannotUpdate)
    } else {
        None
    };
    // An imported object exists already: there is nothing to create.
    if importing && action == Action::Create {
        action = Action::NoOp;
    }
    (action, reason)
}

/// What the object holds after apply: the diff's planned object, with what the service keeps
/// where the configuration is silent (an update), the defaults a new object gets (a
/// replacement), and what only the service assigns (a new object). `current` is what the
/// object holds now, [`current`] of `prior` and what the refresh read (made once by the
/// caller, which needs it too).
pub(super) fn planned_after(
    kind: &dyn ResourceKind,
    action: Action,
    config: &Object,
    prior: Option<&Prior>,
    current: Option<&Object>,
    diff_after: Object,
) -> Object {
    let schema = kind.schema();
    let mut after = diff_after;
    if let (Some(p), Some(current), Action::Update | Action::NoOp) = (prior, current, action) {
        // What the service fills in where the configuration is silent stays as it is;
        // showing it as removed would be noise, not a change.
        // What the service answered to the last write, in the form live values take: what
        // it filled in then, a whole write leaves to it again. (A merged write does not
        // touch what it does not send.)
        let returned = (schema.writes == crate::provider::Writes::Whole).then(|| {
            let mut r = p.computed.clone();
            crate::plan::diff::normalize_object(schema, &mut r);
            r
        });
        crate::plan::diff::keep_service_values(
            schema,
            &mut after,
            current,
            &p.config,
            action == Action::Update,
            returned.as_ref(),
        );
    }
    if action.is_replace() {
        // The new object holds what is configured and the service's defaults, not
        // what the old one had been given outside brickform.
        for a in schema
            .attributes
            .iter()
            .filter(|a| a.presence == Presence::Optional && !a.sensitive)
        {
            if config.get(a.name).is_none_or(Value::is_null) {
                after.insert(
                    a.name.to_string(),
                    a.server_default.clone().unwrap_or(Value::Null),
                );
            }
        }
        for b in &schema.blocks {
            if config.get(b.name).is_none_or(Value::is_null) {
                after.insert(b.name.to_string(), Value::Null);
            }
        }
    }
    if action.is_replace() || action == Action::Create {
        crate::engine::instance::fill_service_assigned(
            kind,
            config,
            action.is_replace(),
            &mut after,
        );
    }
    after
}

/// The field changes shown: the diff's, each with the planned value of `after` (what the
/// service keeps included), and for a new object what the service assigns.
pub(super) fn planned_fields(
    kind: &dyn ResourceKind,
    (action, current): (Action, Option<&Object>),
    config: &Object,
    diff_fields: Vec<FieldChange>,
    after: &Object,
    sensitive: &[Vec<PathStep>],
) -> Vec<FieldChange> {
    let mut fields = diff_fields;
    let mut hidden = Vec::new();
    for f in fields.iter_mut() {
        if let ([PathStep::Key(k)], Some(a)) = (f.path.as_slice(), &f.after)
            && !matches!(a.0, Value::Unknown)
            && !f.sensitive
            && let Some(v) = after.get(k)
            && !identical(&a.0, v)
        {
            f.after = Some(SerValue(v.clone()));
        }
        hidden.extend(crate::engine::sensitive::hidden_changes(f, sensitive));
        crate::engine::sensitive::redact_field(f, sensitive);
    }
    fields.append(&mut hidden);
    if action == Action::Create || action.is_replace() {
        let assigned: Vec<_> = kind
            .schema()
            .attributes
            .iter()
            .filter(|a| crate::engine::instance::service_assigned(a, config, action.is_replace()))
            .collect();
        fields.reserve_exact(assigned.len());
        for a in assigned {
            let planned = after.get(a.name).cloned().unwrap_or(Value::Unknown);
            let path = vec![PathStep::Key(a.name.to_string())];
            // A replacement's new object takes the place of one that has a value: the
            // change is from that value (shown as `~`, not as an addition), and none at all
            // where the new object is planned to get the same. A sensitive one's value is
            // not put in the plan.
            let before = current
                .filter(|_| action.is_replace() && !a.sensitive && !sensitive.contains(&path))
                .and_then(|c| c.get(a.name))
                .filter(|b| !b.is_null())
                .cloned();
            if planned.is_wholly_known() && before.as_ref().is_some_and(|b| identical(b, &planned))
            {
                continue;
            }
            let reason = if planned.is_wholly_known() {
                FieldReason::Configuration
            } else {
                FieldReason::KnownAfterApply
            };
            fields.push(FieldChange {
                path,
                before: before.map(SerValue),
                after: Some(SerValue(planned)),
                live: None,
                reason,
                forces_replacement: false,
                sensitive: false,
            });
        }
    }
    fields
}

/// Whether two values are the same down to the order of their keys (`==` on objects does
/// not look at order, which a rendered plan shows).
fn identical(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .zip(y.iter())
                    .all(|((kx, vx), (ky, vy))| kx == ky && identical(vx, vy))
        }
        (Value::List(x), Value::List(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| identical(p, q))
        }
        _ => a == b,
    }
}

/// The object as it is now: what state recorded, updated by what the service reports.
pub(super) fn current(prior: Option<&Prior>, live: Option<&Object>) -> Option<Object> {
    prior.map(|p| {
        let mut b = p.merged();
        if let Some(l) = live {
            b.extend(l.iter().map(|(k, v)| (k.clone(), v.clone())));
        }
        b
    })
}

/// What references to the instance see during the rest of the plan: for an unchanged one
/// (or one a destroy deletes), what it holds with its configuration over it; otherwise the
/// planned object.
#[cfg(test)]
pub(super) fn reference_value(
    action: Action,
    prior: Option<&Prior>,
    live: Option<&Object>,
    config: &Object,
    after: &Object,
) -> Object {
    reference_value_from(action, || current(prior, live), config, after)
}

/// [`reference_value`] with what the object holds now given by `current` (called only for
/// an unchanged or deleted instance).
pub(super) fn reference_value_from(
    action: Action,
    current: impl FnOnce() -> Option<Object>,
    config: &Object,
    after: &Object,
) -> Object {
    match action {
        // An object a destroy deletes is still there while the plan is made.
        Action::NoOp | Action::Delete => match current() {
            Some(mut v) => {
                v.extend(
                    config
                        .iter()
                        .filter(|(_, v)| !v.is_null())
                        .map(|(k, v)| (k.clone(), v.clone())),
                );
                v
            }
            // An import target not read (an offline plan): the planned object, with what
            // the service assigns unknown.
            None => after.clone(),
        },
        _ => after.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn diff(fields: Vec<FieldChange>, replace: bool) -> DiffOutput {
        DiffOutput {
            fields,
            drift: Vec::new(),
            replace,
            after: Object::default(),
        }
    }

    fn field(path: &str, before: Value, after: Value, forces: bool) -> FieldChange {
        FieldChange {
            path: vec![PathStep::Key(path.to_string())],
            before: Some(SerValue(before)),
            after: Some(SerValue(after)),
            live: None,
            reason: FieldReason::Configuration,
            forces_replacement: forces,
            sensitive: false,
        }
    }

    #[test]
    fn an_instance_without_prior_is_created_and_an_imported_one_is_not() {
        let d = diff(Vec::new(), false);
        let none = ReplaceAsked::default();
        assert_eq!(
            decide(false, false, false, &d, none, false),
            (Action::Create, None)
        );
        assert_eq!(
            decide(false, false, true, &d, none, false),
            (Action::NoOp, None)
        );
        assert_eq!(
            decide(false, true, false, &d, none, false),
            (
                Action::Create,
                Some(ActionReason::CreateBecauseDeletedOutside)
            )
        );
    }

    #[test]
    fn a_diff_that_cannot_update_replaces_in_the_order_lifecycle_asks() {
        let d = diff(vec![field("name", "a".into(), "b".into(), true)], true);
        let none = ReplaceAsked::default();
        assert_eq!(
            decide(true, false, false, &d, none, false),
            (
                Action::DeleteThenCreate,
                Some(ActionReason::ReplaceBecauseCannotUpdate)
            )
        );
        assert_eq!(
            decide(true, false, false, &d, none, true).0,
            Action::CreateThenDelete
        );
    }

    #[test]
    fn a_requested_replacement_says_so_before_triggers() {
        let d = diff(Vec::new(), false);
        let both = ReplaceAsked {
            by_request: true,
            by_triggers: true,
        };
        assert_eq!(
            decide(true, false, false, &d, both, false).1,
            Some(ActionReason::ReplaceByRequest)
        );
        let triggers = ReplaceAsked {
            by_request: false,
            by_triggers: true,
        };
        assert_eq!(
            decide(true, false, false, &d, triggers, false).1,
            Some(ActionReason::ReplaceByTriggers)
        );
    }

    #[test]
    fn no_field_changes_is_no_op_and_some_is_an_update() {
        let none = ReplaceAsked::default();
        assert_eq!(
            decide(true, false, false, &diff(Vec::new(), false), none, false).0,
            Action::NoOp
        );
        let d = diff(vec![field("comment", "a".into(), "b".into(), false)], false);
        assert_eq!(
            decide(true, false, false, &d, none, false).0,
            Action::Update
        );
    }

    fn renamed_parent(action: Action) -> SettledMap {
        let mut m = SettledMap::new();
        m.insert(
            ResourceAddr::parse("t.parent").unwrap(),
            vec![Settled {
                action,
                renamed: (action == Action::Update).then(|| ("old".into(), "new".into())),
                changed: vec!["name".into()],
            }],
        );
        m
    }

    #[test]
    fn only_a_new_or_changed_object_triggers_a_replacement_and_an_attribute_only_by_changing() {
        let settled = |action, changed: &[&str]| Settled {
            action,
            renamed: None,
            changed: changed.iter().map(|c| c.to_string()).collect(),
        };
        let update = settled(Action::Update, &["comment"]);
        assert!(update.triggers(None));
        assert!(update.triggers(Some("comment")));
        assert!(!update.triggers(Some("id")));
        for action in [
            Action::Create,
            Action::DeleteThenCreate,
            Action::CreateThenDelete,
        ] {
            assert!(settled(action, &[]).triggers(Some("id")), "{action:?}");
        }
        for action in [Action::Delete, Action::Forget, Action::NoOp, Action::Read] {
            assert!(!settled(action, &["comment"]).triggers(None), "{action:?}");
        }
    }

    #[test]
    fn a_child_follows_its_parents_rename_instead_of_being_replaced() {
        let mut d = diff(
            vec![field("catalog", "old".into(), "new".into(), true)],
            true,
        );
        follow_renames(
            &mut d,
            &renamed_parent(Action::Update),
            &[InstanceAddr::parse("t.parent").unwrap()],
        );
        assert!(!d.replace);
        assert!(!d.fields[0].forces_replacement);
    }

    #[test]
    fn a_change_that_is_not_the_rename_still_replaces() {
        let mut d = diff(
            vec![
                field("catalog", "old".into(), "new".into(), true),
                field("storage", "x".into(), "y".into(), true),
            ],
            true,
        );
        follow_renames(
            &mut d,
            &renamed_parent(Action::Update),
            &[InstanceAddr::parse("t.parent").unwrap()],
        );
        assert!(d.replace);
        // A rename of something it does not depend on is not followed.
        let mut d = diff(
            vec![field("catalog", "old".into(), "new".into(), true)],
            true,
        );
        follow_renames(
            &mut d,
            &renamed_parent(Action::Update),
            &[InstanceAddr::parse("t.other").unwrap()],
        );
        assert!(d.replace);
    }

    #[test]
    fn only_a_dependency_that_changes_is_pending() {
        let deps = [InstanceAddr::parse("t.parent").unwrap()];
        assert!(dependency_pending(&renamed_parent(Action::Update), &deps));
        assert!(!dependency_pending(&renamed_parent(Action::NoOp), &deps));
        assert!(!dependency_pending(&renamed_parent(Action::Read), &deps));
        assert!(!dependency_pending(
            &renamed_parent(Action::Update),
            &[InstanceAddr::parse("t.other").unwrap()]
        ));
    }

    #[test]
    fn an_unchanged_or_deleted_instance_is_seen_as_it_is_with_its_configuration_over_it() {
        let prior = Prior {
            config: Object::from_iter([("name".to_string(), Value::from("a"))]),
            computed: Object::from_iter([
                ("id".to_string(), Value::from("1")),
                ("owner".to_string(), Value::from("me")),
            ]),
            sensitive: Default::default(),
        };
        let live = Object::from_iter([("owner".to_string(), Value::from("you"))]);
        let config = Object::from_iter([
            ("name".to_string(), Value::from("a")),
            ("comment".to_string(), Value::Null),
        ]);
        let after = Object::from_iter([("name".to_string(), Value::Unknown)]);
        let seen = reference_value(Action::NoOp, Some(&prior), Some(&live), &config, &after);
        assert_eq!(seen.get("owner"), Some(&Value::from("you")));
        assert_eq!(seen.get("id"), Some(&Value::from("1")));
        assert_eq!(seen.get("name"), Some(&Value::from("a")));
        // One a destroy deletes is still there while the plan is made.
        assert_eq!(
            reference_value(Action::Delete, Some(&prior), Some(&live), &config, &after),
            seen
        );
        assert_eq!(
            reference_value(Action::Update, Some(&prior), Some(&live), &config, &after),
            after
        );
    }

    /// A kind with only a schema: planning the fields asks nothing else of it.
    struct Shaped(crate::provider::Schema);

    #[async_trait::async_trait]
    impl ResourceKind for Shaped {
        fn type_name(&self) -> &'static str {
            "t_shaped"
        }
        fn schema(&self) -> &crate::provider::Schema {
            &self.0
        }
        async fn create(
            &self,
            _: &crate::provider::OpContext,
            _: &Object,
        ) -> crate::provider::ProviderResult<crate::provider::Remote> {
            unreachable!("fields are planned without calls")
        }
        async fn read(
            &self,
            _: &crate::provider::OpContext,
            _: &str,
            _: &Object,
        ) -> crate::provider::ProviderResult<Option<crate::provider::Remote>> {
            unreachable!("fields are planned without calls")
        }
        async fn update(
            &self,
            _: &crate::provider::OpContext,
            _: &str,
            _: &Object,
            _: &Object,
        ) -> crate::provider::ProviderResult<crate::provider::Remote> {
            unreachable!("fields are planned without calls")
        }
        async fn delete(
            &self,
            _: &crate::provider::OpContext,
            _: &str,
            _: &Object,
        ) -> crate::provider::ProviderResult<()> {
            unreachable!("fields are planned without calls")
        }
    }

    #[test]
    fn a_replacement_changes_what_the_service_assigns_from_the_old_object_s_values() {
        use crate::provider::{AttrType, Attribute, Schema};
        let kind = Shaped(
            Schema::new()
                .attr(Attribute::required("name", AttrType::String))
                .attr(Attribute::computed("id", AttrType::String))
                .attr(Attribute::computed("full_name", AttrType::String))
                .attr(Attribute::computed("token", AttrType::String).sensitive()),
        );
        let config = Object::from_iter([("name".to_string(), Value::from("a"))]);
        let current = Object::from_iter([
            ("name".to_string(), Value::from("a")),
            ("id".to_string(), Value::from("id-1")),
            ("full_name".to_string(), Value::from("c.a")),
            ("token".to_string(), Value::from("t0p")),
        ]);
        // The new object gets a new id and token, and the same full name.
        let after = Object::from_iter([
            ("name".to_string(), Value::from("a")),
            ("id".to_string(), Value::Unknown),
            ("full_name".to_string(), Value::from("c.a")),
            ("token".to_string(), Value::Unknown),
        ]);
        let fields = planned_fields(
            &kind,
            (Action::DeleteThenCreate, Some(&current)),
            &config,
            Vec::new(),
            &after,
            &[],
        );
        let of = |name: &str| {
            fields
                .iter()
                .find(|f| f.path == [PathStep::Key(name.to_string())])
        };
        let id = of("id").expect("the id changes");
        assert_eq!(id.before, Some(SerValue(Value::from("id-1"))));
        assert_eq!(id.after, Some(SerValue(Value::Unknown)));
        assert!(of("full_name").is_none(), "unchanged: {fields:?}");
        let token = of("token").expect("the token changes");
        assert_eq!(
            token.before, None,
            "a sensitive value stays out of the plan"
        );
        // A create has no old object: everything assigned is added.
        let created = planned_fields(
            &kind,
            (Action::Create, None),
            &config,
            Vec::new(),
            &after,
            &[],
        );
        assert_eq!(created.len(), 3);
        assert!(created.iter().all(|f| f.before.is_none()));
    }
}
