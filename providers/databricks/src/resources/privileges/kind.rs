//! The life cycle both grants kinds share, over the permissions API: a create adds what is
//! declared and refuses to revoke what it did not plan; an update writes the difference and
//! refuses to revoke what was given since the plan; a delete revokes what the plan saw.

use super::api::{
    Assignments, assignments_of, changes, privileges_of, privileges_value, read,
    unplanned_removals, without, write,
};
use super::{Target, check_principal, check_privileges, check_target, id_of, parse_id, target_of};
use crate::Shared;
use crate::resources::str_attr;
use async_trait::async_trait;
use brickform_core::provider::{
    Claim, ErrorKind, Finding, OpContext, ProviderError, ProviderResult, Remote, ResourceKind,
    Schema,
};
use brickform_core::value::{Object, PathStep, Value};
use std::sync::Arc;

/// Whom a grants kind speaks for on its securable.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// Every principal (`databricks_grants`: what it does not declare is revoked).
    All,
    /// One principal (`databricks_grant`: others' grants are left alone).
    One,
}

/// A grants kind: its schema and whom it speaks for; the life cycle is this file's.
pub struct GrantsKind {
    pub type_name: &'static str,
    pub scope: Scope,
    pub schema: Schema,
    pub shared: Arc<Shared>,
}

impl GrantsKind {
    /// The securable, its full name and the grants a configuration declares.
    fn wanted<'a>(
        &self,
        config: &'a Object,
    ) -> ProviderResult<(&'static Target, &'a str, Assignments)> {
        let (target, name) = target_of(config)
            .and_then(|(t, n)| Some((t, n?)))
            .ok_or_else(|| ProviderError::invalid("the securable of the grants is not known"))?;
        Ok((target, name, self.declared(config)))
    }

    fn declared(&self, attrs: &Object) -> Assignments {
        match self.scope {
            Scope::All => assignments_of(attrs.get("grant").unwrap_or(&Value::Null)),
            Scope::One => str_attr(attrs, "principal")
                .map(|p| {
                    Assignments::from([(p.to_string(), privileges_of(attrs.get("privileges")))])
                })
                .unwrap_or_default(),
        }
    }

    fn principal<'a>(&self, config: &'a Object) -> Option<&'a str> {
        match self.scope {
            Scope::All => None,
            Scope::One => str_attr(config, "principal"),
        }
    }

    /// The object as the service holds it; `None` for one principal's grant that holds
    /// nothing.
    fn remote(
        &self,
        target: &Target,
        name: &str,
        principal: Option<&str>,
        held: &Assignments,
    ) -> Option<Remote> {
        let id = id_of(target, name, principal);
        let mut attrs = Object::default();
        attrs.insert(target.attr.into(), Value::from(name));
        attrs.insert("id".into(), Value::from(id.as_str()));
        match (self.scope, principal) {
            (Scope::One, Some(p)) => {
                let privileges = held.get(p).filter(|s| !s.is_empty())?;
                attrs.insert("principal".into(), Value::from(p));
                attrs.insert("privileges".into(), privileges_value(privileges));
            }
            _ => {
                let grants = held
                    .iter()
                    .map(|(p, privileges)| {
                        let mut g = Object::default();
                        g.insert("principal".into(), Value::from(p.as_str()));
                        g.insert("privileges".into(), privileges_value(privileges));
                        Value::object(g)
                    })
                    .collect();
                attrs.insert("grant".into(), Value::List(grants));
            }
        }
        Some(Remote { id, attrs })
    }

    /// Writes what the configuration declares over what is held, and reads it back.
    /// `planned` is what the plan saw on the securable (`None` for a create, which saw
    /// nothing): nothing else is revoked.
    async fn converge(&self, config: &Object, planned: Option<&Object>) -> ProviderResult<Remote> {
        let client = self.shared.client()?;
        let (target, name, want) = self.wanted(config)?;
        let principal = self.principal(config);
        let all = self.scope == Scope::All;
        let held = read(&client, target, name, principal)
            .await?
            .ok_or_else(|| {
                ProviderError::not_found(format!("{} {name} does not exist", target.label))
            })?;
        // What this write would revoke that the plan did not list: on a create, anything it
        // does not declare; on an update, what was given since the plan read the securable
        // (a saved plan applied later must not revoke grants its reviewers never saw).
        let seen = planned.map(|p| self.declared(p)).unwrap_or_default();
        let taken = unplanned_removals(&without(&held, &seen), &want, all);
        if !taken.is_empty() {
            let (doing, next) = match planned {
                None => (
                    "creating",
                    format!(
                        "Plan again: the plan then asks to import them (brickform import {} {}).",
                        self.type_name,
                        id_of(target, name, principal)
                    ),
                ),
                Some(_) => (
                    "updating",
                    "Plan again: the plan then shows them, and what it would revoke.".to_string(),
                ),
            };
            return Err(ProviderError::new(
                ErrorKind::Conflict,
                format!(
                    "{} {name} now holds grants this configuration does not declare ({}); {doing} {} would revoke them, which the plan did not show",
                    target.label,
                    taken.join("; "),
                    self.type_name
                ),
            )
            .with_detail(next));
        }
        let now = write(
            &client,
            target,
            name,
            changes(&held, &want, all),
            &want,
            principal,
        )
        .await?;
        self.remote(target, name, principal, &now).ok_or_else(|| {
            ProviderError::other(format!(
                "the grants on {} {name} were written but are not listed",
                target.label
            ))
        })
    }
}

#[async_trait]
impl ResourceKind for GrantsKind {
    fn type_name(&self) -> &'static str {
        self.type_name
    }
    fn schema(&self) -> &Schema {
        &self.schema
    }
    fn check(&self, config: &Object) -> Vec<Finding> {
        let mut out = check_target(config);
        let Some((target, _)) = target_of(config) else {
            return out;
        };
        let key = |k: &str| PathStep::Key(k.to_string());
        let mut one = |privileges: Option<&Value>, principal: Option<&Value>, at: Vec<PathStep>| {
            let mut here = at.clone();
            here.push(key("privileges"));
            if let Some(v) = privileges {
                if v.as_list().is_some_and(|l| l.is_empty()) {
                    out.push(
                        Finding::error(
                            &[],
                            "no privileges: a grant of nothing is not kept by the service",
                        )
                        .at(here.clone())
                        .hint("list at least one privilege, or remove the grant"),
                    );
                }
                out.extend(check_privileges(target, v, here));
            }
            if let Some(p) = principal {
                let mut here = at;
                here.push(key("principal"));
                out.extend(check_principal(target, p, here));
            }
        };
        match self.scope {
            Scope::One => one(
                config.get("privileges"),
                config.get("principal"),
                Vec::new(),
            ),
            Scope::All => {
                for (i, g) in config
                    .get("grant")
                    .and_then(Value::as_list)
                    .into_iter()
                    .flatten()
                    .enumerate()
                {
                    if let Some(g) = g.as_object() {
                        one(
                            g.get("privileges"),
                            g.get("principal"),
                            vec![key("grant"), PathStep::Index(i)],
                        );
                    }
                }
            }
        }
        out
    }
    async fn create(&self, _: &OpContext, config: &Object) -> ProviderResult<Remote> {
        self.converge(config, None).await
    }
    async fn read(
        &self,
        _: &OpContext,
        id: &str,
        _prior: &Object,
    ) -> ProviderResult<Option<Remote>> {
        let client = self.shared.client()?;
        let (target, name, principal) = parse_id(id, self.scope == Scope::One)?;
        Ok(read(&client, target, name, principal)
            .await?
            .and_then(|held| self.remote(target, name, principal, &held)))
    }
    async fn update(
        &self,
        ctx: &OpContext,
        _id: &str,
        prior: &Object,
        config: &Object,
    ) -> ProviderResult<Remote> {
        self.converge(config, Some(ctx.planned.as_deref().unwrap_or(prior)))
            .await
    }
    /// Revokes what the plan saw (for `databricks_grants`, every grant on the securable,
    /// as it is authoritative): grants given since stay.
    async fn delete(&self, _: &OpContext, id: &str, prior: &Object) -> ProviderResult<()> {
        let client = self.shared.client()?;
        let (target, name, principal) = parse_id(id, self.scope == Scope::One)?;
        let Some(held) = read(&client, target, name, principal).await? else {
            return Ok(());
        };
        let mut want = without(&held, &self.declared(prior));
        if let Some(p) = principal {
            want.entry(p.to_string()).or_default();
        }
        write(
            &client,
            target,
            name,
            changes(&held, &want, true),
            &want,
            principal,
        )
        .await
        .map(|_| ())
        .or_else(|e| {
            if e.kind == ErrorKind::NotFound {
                Ok(())
            } else {
                Err(e)
            }
        })
    }
    /// The grants on its securable: all of them for `databricks_grants`, which revokes what
    /// it does not declare, so no other grants resource may speak for the same securable.
    fn claims(&self, config: &Object) -> Vec<Claim> {
        let Some((target, Some(name))) = target_of(config) else {
            return Vec::new();
        };
        // Unity Catalog names are case-insensitive.
        let name = name.to_lowercase();
        vec![Claim {
            key: format!("uc-grants/{}", id_of(target, &name, None)),
            exclusive: self.scope == Scope::All,
            what: format!("the grants on {} {name}", target.label),
        }]
    }
    /// Grants on another securable or for another principal are given before the old ones
    /// are revoked: a principal the account lacks fails the create and takes nothing.
    fn replaces_by_creating_first(&self) -> bool {
        true
    }
    /// The id, which follows from the configuration: a create whose answer was lost is found
    /// by it.
    fn natural_key(&self, _: &OpContext, config: &Object) -> Option<String> {
        let (target, name) = target_of(config)?;
        Some(id_of(target, name?, self.principal(config)))
    }
    /// Found only when it holds something: grants of nothing are no object.
    async fn find_by_key(&self, ctx: &OpContext, key: &str) -> ProviderResult<Option<Remote>> {
        let found = self.read(ctx, key, &Object::default()).await?;
        Ok(found.filter(|r| match self.scope {
            Scope::One => true,
            Scope::All => r
                .attrs
                .get("grant")
                .and_then(Value::as_list)
                .is_some_and(|l| !l.is_empty()),
        }))
    }

    /// Grants already held where a create would write are found by the default
    /// `find_existing` (the plan asks for an import rather than revoke them unseen); they
    /// are named by their securable, having no id of their own.
    fn describe_existing(&self, key: &str, _remote: &Remote) -> String {
        format!("grants on {}", key.replacen('/', " ", 1))
    }
}
