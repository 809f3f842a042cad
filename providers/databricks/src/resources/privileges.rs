//! What `databricks_grants` and `databricks_grant` share: the Unity Catalog securables
//! grants are kept for, the privileges each one takes, and the permissions API
//! (`/api/2.1/unity-catalog/permissions/{securable_type}/{full_name}`) that reads and
//! changes them.
//!
//! The securable is named by one attribute, as in the Terraform provider (`catalog`,
//! `schema`, `table`, `volume`, `foreign_connection`); its privileges are validated per
//! securable type before anything is sent. The service changes grants by difference
//! (`changes: [{principal, add, remove}]`) and can answer a read with the grants as they were
//! a moment before; a write is therefore read back until it shows.

use super::{err, str_attr};
use crate::Shared;
use async_trait::async_trait;
use brickform_core::lang::diagnostics::closest;
use brickform_core::provider::{
    AttrType, Attribute, ErrorKind, Existing, Finding, Normalize, OpContext, ProviderError,
    ProviderResult, Remote, ResourceKind, Schema,
};
use brickform_core::value::{Object, PathStep, Value, quote};
use serde_json::{Value as Json, json};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::time::Duration;

/// A securable grants are kept for, as its attribute names it.
#[derive(Debug)]
pub struct Target {
    /// The attribute that names it (`foreign_connection`).
    pub attr: &'static str,
    /// Its `securable_type` in the API's path (`connection`).
    pub api: &'static str,
    /// How messages name it.
    pub label: &'static str,
    /// The parts of its full name (`catalog.schema.table`: 3).
    pub parts: usize,
    /// The privileges a grant on it may hold: its own and those of what it contains (they
    /// are inherited downward), as Unity Catalog's privilege model 1.0 lists them.
    pub privileges: &'static [&'static str],
}

const TABLE: &[&str] = &[
    "ALL_PRIVILEGES",
    "APPLY_TAG",
    "BROWSE",
    "MANAGE",
    "MODIFY",
    "REFRESH",
    "SELECT",
];
const VOLUME: &[&str] = &[
    "ALL_PRIVILEGES",
    "APPLY_TAG",
    "BROWSE",
    "MANAGE",
    "READ_VOLUME",
    "WRITE_VOLUME",
];
const SCHEMA: &[&str] = &[
    "ALL_PRIVILEGES",
    "APPLY_TAG",
    "BROWSE",
    "CREATE_FUNCTION",
    "CREATE_MATERIALIZED_VIEW",
    "CREATE_MODEL",
    "CREATE_TABLE",
    "CREATE_VOLUME",
    "EXECUTE",
    "EXTERNAL_USE_SCHEMA",
    "MANAGE",
    "MODIFY",
    "READ_VOLUME",
    "REFRESH",
    "SELECT",
    "USE_SCHEMA",
    "WRITE_VOLUME",
];
const CATALOG: &[&str] = &[
    "ALL_PRIVILEGES",
    "APPLY_TAG",
    "BROWSE",
    "CREATE_FUNCTION",
    "CREATE_MATERIALIZED_VIEW",
    "CREATE_MODEL",
    "CREATE_SCHEMA",
    "CREATE_TABLE",
    "CREATE_VOLUME",
    "EXECUTE",
    "EXTERNAL_USE_SCHEMA",
    "MANAGE",
    "MODIFY",
    "READ_VOLUME",
    "REFRESH",
    "SELECT",
    "USE_CATALOG",
    "USE_SCHEMA",
    "WRITE_VOLUME",
];
const CONNECTION: &[&str] = &[
    "ALL_PRIVILEGES",
    "CREATE_FOREIGN_CATALOG",
    "MANAGE",
    "USE_CONNECTION",
];

pub const TARGETS: &[Target] = &[
    Target {
        attr: "catalog",
        api: "catalog",
        label: "catalog",
        parts: 1,
        privileges: CATALOG,
    },
    Target {
        attr: "schema",
        api: "schema",
        label: "schema",
        parts: 2,
        privileges: SCHEMA,
    },
    Target {
        attr: "table",
        api: "table",
        label: "table",
        parts: 3,
        privileges: TABLE,
    },
    Target {
        attr: "volume",
        api: "volume",
        label: "volume",
        parts: 3,
        privileges: VOLUME,
    },
    Target {
        attr: "foreign_connection",
        api: "connection",
        label: "connection",
        parts: 1,
        privileges: CONNECTION,
    },
];

/// Securables the Terraform provider grants on that brickform does not manage grants for.
const NOT_HERE: &[(&str, &str)] = &[
    (
        "metastore",
        "brickform does not manage grants on the metastore: they are an account administrator's, outside any one workspace's configuration. It manages grants on catalog, schema, table, volume and foreign_connection.",
    ),
    (
        "function",
        "brickform does not manage functions, nor grants on them. It manages grants on catalog, schema, table, volume and foreign_connection.",
    ),
    (
        "model",
        "brickform does not manage registered models, nor grants on them. It manages grants on catalog, schema, table, volume and foreign_connection.",
    ),
    (
        "share",
        "brickform does not manage Delta Sharing shares, nor grants on them. It manages grants on catalog, schema, table, volume and foreign_connection.",
    ),
    (
        "storage_credential",
        "brickform does not manage storage credentials, nor grants on them. It manages grants on catalog, schema, table, volume and foreign_connection.",
    ),
    (
        "external_location",
        "brickform does not manage external locations, nor grants on them. It manages grants on catalog, schema, table, volume and foreign_connection.",
    ),
    (
        "credential",
        "brickform does not manage service credentials, nor grants on them. It manages grants on catalog, schema, table, volume and foreign_connection.",
    ),
];

/// The names of privilege model 0.1, which Unity Catalog no longer takes, and the
/// privilege that replaced each.
const RENAMED: &[(&str, &str)] = &[
    ("USAGE", "USE_CATALOG or USE_SCHEMA"),
    ("CREATE", "CREATE_SCHEMA, CREATE_TABLE or CREATE_VOLUME"),
    ("READ_FILES", "READ_VOLUME"),
    ("WRITE_FILES", "WRITE_VOLUME"),
];

/// The workspace-local groups every workspace has: Unity Catalog grants take account
/// principals only, and the service answers these with "Could not find principal".
const WORKSPACE_GROUPS: &[&str] = &["users", "admins"];

/// Adds the securable attributes (one of them names what the grants are on) to a schema.
pub fn with_securables(mut schema: Schema) -> Schema {
    for t in TARGETS {
        schema = schema.attr(
            Attribute::optional(t.attr, AttrType::String)
                .force_new()
                .normalize(Normalize::LowerCase)
                .describe(match t.attr {
                    "catalog" => "The catalog the grants are on (set exactly one securable).",
                    "schema" => "The schema the grants are on, as CATALOG.SCHEMA.",
                    "table" => "The table or view the grants are on, as CATALOG.SCHEMA.TABLE.",
                    "volume" => "The volume the grants are on, as CATALOG.SCHEMA.VOLUME.",
                    _ => "The Unity Catalog connection the grants are on.",
                }),
        );
    }
    for (name, why) in NOT_HERE {
        schema = schema.unsupported(name, why);
    }
    schema
}

/// The privileges attribute: upper-cased, its order meaning nothing.
pub fn privileges_attr() -> Attribute {
    Attribute::required("privileges", AttrType::Set(Box::new(AttrType::String)))
        .normalize(Normalize::UpperCase)
        .describe("Privileges, as the API names them (USE_CATALOG, SELECT, CREATE_TABLE, …).")
}

/// The securable a configuration names, and its full name (`None` while unknown).
pub fn target_of(config: &Object) -> Option<(&'static Target, Option<&str>)> {
    TARGETS.iter().find_map(|t| match config.get(t.attr) {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => Some((t, Some(s.as_str()))),
        Some(_) => Some((t, None)),
    })
}

/// Exactly one securable, its full name with the parts its type has.
pub fn check_target(config: &Object) -> Vec<Finding> {
    let set: Vec<&Target> = TARGETS
        .iter()
        .filter(|t| config.get(t.attr).is_some_and(|v| !v.is_null()))
        .collect();
    let names = || {
        TARGETS
            .iter()
            .map(|t| t.attr)
            .collect::<Vec<_>>()
            .join(", ")
    };
    let mut out = Vec::new();
    match set.as_slice() {
        [] => out.push(
            Finding::error(&[], "no securable: the grants are on nothing")
                .hint(format!("set one of {}", names())),
        ),
        [t] => {
            if let Some(name) = str_attr(config, t.attr) {
                let parts: Vec<&str> = name.split('.').collect();
                if parts.len() != t.parts || parts.iter().any(|p| p.is_empty()) {
                    let hint = match t.parts {
                        1 => format!("a {}'s name is one part, without dots", t.label),
                        2 => "write it as CATALOG.SCHEMA".to_string(),
                        _ => format!("write it as CATALOG.SCHEMA.{}", t.attr.to_uppercase()),
                    };
                    out.push(
                        Finding::error(
                            &[t.attr],
                            format!("{} is not the full name of a {}", quote(name), t.label),
                        )
                        .hint(hint),
                    );
                }
            }
        }
        [first, rest @ ..] => {
            for t in rest {
                out.push(
                    Finding::error(
                        &[t.attr],
                        format!(
                            "{} and {} both set: grants are on one securable",
                            first.attr, t.attr
                        ),
                    )
                    .hint("declare one resource per securable"),
                );
            }
        }
    }
    out
}

/// Every privilege of a list one the securable takes, each unknown one reported with the
/// nearest it takes.
pub fn check_privileges(target: &Target, privileges: &Value, at: Vec<PathStep>) -> Vec<Finding> {
    let Some(list) = privileges.as_list() else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for p in list.iter().filter_map(Value::as_str) {
        if target.privileges.contains(&p) {
            continue;
        }
        let underscored = p.split_whitespace().collect::<Vec<_>>().join("_");
        let hint = if target.privileges.contains(&underscored.as_str()) {
            format!(
                "did you mean {}? The API names privileges with underscores",
                quote(&underscored)
            )
        } else if let Some((_, now)) = RENAMED.iter().find(|(old, _)| *old == p) {
            format!("{p} is a name of Unity Catalog's first privilege model; it is now {now}")
        } else if let Some(c) = closest(p, target.privileges.iter().copied()) {
            format!("did you mean {}?", quote(c))
        } else {
            format!("a {} takes {}", target.label, target.privileges.join(", "))
        };
        out.push(
            Finding::error(
                &[],
                format!("{} is not a privilege on a {}", quote(p), target.label),
            )
            .at(at.clone())
            .hint(hint),
        );
    }
    out
}

/// A workspace-local group named as a principal: the grant would be refused.
pub fn check_principal(principal: &Value, at: Vec<PathStep>) -> Vec<Finding> {
    match principal.as_str() {
        Some(p) if WORKSPACE_GROUPS.contains(&p) => vec![
            Finding::warning(
                &[],
                format!(
                    "{} is the workspace-local group of that name; Unity Catalog grants go to account users, groups and service principals",
                    quote(p)
                ),
            )
            .at(at)
            .hint(if p == "users" {
                "every user of the account is the group \"account users\"".to_string()
            } else {
                "grant to an account group instead".to_string()
            }),
        ],
        _ => Vec::new(),
    }
}

/// Principal → privileges held on one securable.
pub type Assignments = BTreeMap<String, BTreeSet<String>>;

/// The id of grants on a securable, `catalog/main` (the Terraform provider's form); for
/// one principal's, `catalog/main/alice@example.com`.
pub fn id_of(target: &Target, name: &str, principal: Option<&str>) -> String {
    match principal {
        Some(p) => format!("{}/{name}/{p}", target.attr),
        None => format!("{}/{name}", target.attr),
    }
}

/// The securable, full name and principal an id names. Full names hold no `/`; a principal
/// may.
pub fn parse_id(
    id: &str,
    with_principal: bool,
) -> ProviderResult<(&'static Target, &str, Option<&str>)> {
    let form = if with_principal {
        "SECURABLE/FULL_NAME/PRINCIPAL, for example schema/main.sales/data-engineers"
    } else {
        "SECURABLE/FULL_NAME, for example catalog/main"
    };
    let bad = || {
        let kinds = TARGETS
            .iter()
            .map(|t| t.attr)
            .collect::<Vec<_>>()
            .join(", ");
        ProviderError::invalid(format!(
            "grants are imported as {form}, where SECURABLE is one of {kinds}; got {id:?}"
        ))
    };
    let (attr, rest) = id.split_once('/').ok_or_else(bad)?;
    let target = TARGETS.iter().find(|t| t.attr == attr).ok_or_else(bad)?;
    let (name, principal) = if with_principal {
        let (n, p) = rest.split_once('/').ok_or_else(bad)?;
        (n, Some(Some(p).filter(|p| !p.is_empty()).ok_or_else(bad)?))
    } else {
        (rest, None)
    };
    if name.is_empty() || name.contains('/') || name.split('.').count() != target.parts {
        return Err(bad());
    }
    Ok((target, name, principal))
}

fn path(target: &Target, name: &str) -> String {
    format!("/api/2.1/unity-catalog/permissions/{}/{name}", target.api)
}

/// The grants on a securable (of one principal, when given); `None` when the securable
/// does not exist.
pub async fn read(
    client: &crate::client::Client,
    target: &Target,
    name: &str,
    principal: Option<&str>,
) -> ProviderResult<Option<Assignments>> {
    let query: Vec<(&str, String)> = principal
        .map(|p| ("principal", p.to_string()))
        .into_iter()
        .collect();
    let listed = match client
        .list_all(&path(target, name), &query, "privilege_assignments", None)
        .await
    {
        Ok(l) => l,
        Err(e) if e.kind == ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(err(e)),
    };
    let mut out = Assignments::new();
    for a in &listed {
        let Some(who) = a.get("principal").and_then(Json::as_str) else {
            continue;
        };
        if principal.is_some_and(|p| p != who) {
            continue;
        }
        let held = a
            .get("privileges")
            .and_then(Json::as_array)
            .into_iter()
            .flatten()
            // Each privilege is a string; older answers wrapped it as {"privilege": …}.
            .filter_map(|p| {
                p.as_str()
                    .or_else(|| p.get("privilege").and_then(Json::as_str))
            })
            .map(str::to_string);
        out.entry(who.to_string()).or_default().extend(held);
    }
    out.retain(|_, p| !p.is_empty());
    Ok(Some(out))
}

/// The changes that turn `from` into `to` for the principals `to` speaks for (all of them
/// for authoritative grants; one for a single principal's grant).
pub fn changes(from: &Assignments, to: &Assignments, all_principals: bool) -> Vec<Json> {
    let empty = BTreeSet::new();
    let principals: BTreeSet<&String> = if all_principals {
        from.keys().chain(to.keys()).collect()
    } else {
        to.keys().collect()
    };
    principals
        .into_iter()
        .filter_map(|p| {
            let have = from.get(p).unwrap_or(&empty);
            let want = to.get(p).unwrap_or(&empty);
            let add: Vec<&String> = want.difference(have).collect();
            let remove: Vec<&String> = have.difference(want).collect();
            (!add.is_empty() || !remove.is_empty()).then(|| {
                let mut c = json!({ "principal": p });
                if !add.is_empty() {
                    c["add"] = json!(add);
                }
                if !remove.is_empty() {
                    c["remove"] = json!(remove);
                }
                c
            })
        })
        .collect()
}

/// How long a written change may take to show in a read (the Terraform provider waits a
/// minute too).
const SETTLE: Duration = Duration::from_secs(60);

/// Sends `changes` (when there are any) and reads the grants back until they are `want`
/// for the principals `want` speaks for.
pub async fn write(
    client: &crate::client::Client,
    target: &Target,
    name: &str,
    changes_: Vec<Json>,
    want: &Assignments,
    principal: Option<&str>,
) -> ProviderResult<Assignments> {
    if !changes_.is_empty() {
        client
            .patch(&path(target, name), &json!({ "changes": changes_ }))
            .await
            .map_err(err)?;
    }
    let last = std::sync::Mutex::new(Assignments::new());
    let last_ref = &last;
    super::wait_until(
        SETTLE,
        &format!("grants on {} {name}", target.label),
        move || async move {
            let now = read(client, target, name, principal)
                .await?
                .ok_or_else(|| {
                    ProviderError::not_found(format!("{} {name} does not exist", target.label))
                })?;
            let settled = changes(&now, want, principal.is_none()).is_empty();
            *last_ref.lock().unwrap_or_else(|p| p.into_inner()) = now;
            Ok((!settled).then(|| "different from what was written".to_string()))
        },
    )
    .await?;
    Ok(last.into_inner().unwrap_or_else(|p| p.into_inner()))
}

/// The assignments a list of `grant` objects declares.
pub fn assignments_of(grants: &Value) -> Assignments {
    let mut out = Assignments::new();
    for g in grants
        .as_list()
        .into_iter()
        .flatten()
        .filter_map(Value::as_object)
    {
        if let Some(p) = str_attr(g, "principal") {
            out.entry(p.to_string())
                .or_default()
                .extend(privileges_of(g.get("privileges")));
        }
    }
    out
}

/// The privileges a `privileges` value lists.
pub fn privileges_of(v: Option<&Value>) -> BTreeSet<String> {
    v.and_then(Value::as_list)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .map(str::to_string)
        .collect()
}

/// A set of privileges as an attribute value (sorted, as the configuration's is).
pub fn privileges_value(p: &BTreeSet<String>) -> Value {
    Value::List(p.iter().map(|s| Value::from(s.as_str())).collect())
}

/// What a create would remove that the plan did not list: privileges held that the
/// configuration does not declare, for the principals it speaks for. A create adds; it
/// does not take grants someone else gave.
pub fn unplanned_removals(
    held: &Assignments,
    want: &Assignments,
    all_principals: bool,
) -> Vec<String> {
    let empty = BTreeSet::new();
    held.iter()
        .filter(|(p, _)| all_principals || want.contains_key(*p))
        .filter_map(|(p, have)| {
            let extra: Vec<&str> = have
                .difference(want.get(p).unwrap_or(&empty))
                .map(String::as_str)
                .collect();
            (!extra.is_empty()).then(|| format!("{p}: {}", extra.join(", ")))
        })
        .collect()
}

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
        let mut attrs = Object::new();
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
                        let mut g = Object::new();
                        g.insert("principal".into(), Value::from(p.as_str()));
                        g.insert("privileges".into(), privileges_value(privileges));
                        Value::Object(g)
                    })
                    .collect();
                attrs.insert("grant".into(), Value::List(grants));
            }
        }
        Some(Remote { id, attrs })
    }

    /// Writes what the configuration declares over what is held, and reads it back.
    async fn converge(&self, config: &Object, creating: bool) -> ProviderResult<Remote> {
        let client = self.shared.client()?;
        let (target, name, want) = self.wanted(config)?;
        let principal = self.principal(config);
        let all = self.scope == Scope::All;
        let held = read(&client, target, name, principal)
            .await?
            .ok_or_else(|| {
                ProviderError::not_found(format!("{} {name} does not exist", target.label))
            })?;
        if creating {
            let taken = unplanned_removals(&held, &want, all);
            if !taken.is_empty() {
                return Err(ProviderError::new(
                    ErrorKind::Conflict,
                    format!(
                        "{} {name} now holds grants this configuration does not declare ({}); creating {} would revoke them, which the plan did not show",
                        target.label,
                        taken.join("; "),
                        self.type_name
                    ),
                )
                .with_detail(format!(
                    "Plan again: the plan then asks to import them (brickform import {} {}).",
                    self.type_name,
                    id_of(target, name, principal)
                )));
            }
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
                out.extend(check_principal(p, here));
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
        self.converge(config, true).await
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
        _: &OpContext,
        _id: &str,
        _prior: &Object,
        config: &Object,
    ) -> ProviderResult<Remote> {
        self.converge(config, false).await
    }
    /// Revokes what the state holds: grants given since (by someone else) stay.
    async fn delete(&self, _: &OpContext, id: &str, prior: &Object) -> ProviderResult<()> {
        let client = self.shared.client()?;
        let (target, name, principal) = parse_id(id, self.scope == Scope::One)?;
        let Some(held) = read(&client, target, name, principal).await? else {
            return Ok(());
        };
        let gone = self.declared(prior);
        let mut want = held.clone();
        for (p, privileges) in &gone {
            if let Some(h) = want.get_mut(p) {
                h.retain(|x| !privileges.contains(x));
            }
        }
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
    /// The id, which follows from the configuration: a create whose answer was lost is found
    /// by it.
    fn natural_key(&self, _: &OpContext, config: &Object) -> Option<String> {
        let (target, name) = target_of(config)?;
        Some(id_of(target, name?, self.principal(config)))
    }
    /// Found only when it holds something: grants of nothing are no object.
    async fn find_by_key(&self, ctx: &OpContext, key: &str) -> ProviderResult<Option<Remote>> {
        let found = self.read(ctx, key, &Object::new()).await?;
        Ok(found.filter(|r| match self.scope {
            Scope::One => true,
            Scope::All => r
                .attrs
                .get("grant")
                .and_then(Value::as_list)
                .is_some_and(|l| !l.is_empty()),
        }))
    }
    /// Grants already held where a create would write: the plan asks for an import rather
    /// than revoke them unseen.
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
                what: format!("grants on {}", key.replacen('/', " ", 1)),
                remote,
                tag: None,
                owner: None,
                exclusive: true,
            })
            .into_iter()
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn a(pairs: &[(&str, &[&str])]) -> Assignments {
        pairs
            .iter()
            .map(|(p, ps)| (p.to_string(), ps.iter().map(|s| s.to_string()).collect()))
            .collect()
    }

    #[test]
    fn changes_add_and_remove_by_principal() {
        let from = a(&[("alice", &["SELECT", "MODIFY"]), ("bob", &["SELECT"])]);
        let to = a(&[("alice", &["SELECT", "USE_SCHEMA"]), ("carol", &["BROWSE"])]);
        assert_eq!(
            changes(&from, &to, true),
            vec![
                json!({"principal": "alice", "add": ["USE_SCHEMA"], "remove": ["MODIFY"]}),
                json!({"principal": "bob", "remove": ["SELECT"]}),
                json!({"principal": "carol", "add": ["BROWSE"]}),
            ]
        );
        // One principal's grant leaves everyone else alone.
        assert_eq!(
            changes(&from, &a(&[("bob", &["BROWSE"])]), false),
            vec![json!({"principal": "bob", "add": ["BROWSE"], "remove": ["SELECT"]})]
        );
        assert!(changes(&to, &to, true).is_empty());
    }

    #[test]
    fn ids_round_trip_and_bad_ones_say_the_form() {
        assert_eq!(id_of(&TARGETS[1], "main.sales", None), "schema/main.sales");
        let (t, n, p) = parse_id("schema/main.sales", false).unwrap();
        assert_eq!((t.attr, n, p), ("schema", "main.sales", None));
        let (t, n, p) = parse_id("foreign_connection/pg/team/a b", true).unwrap();
        assert_eq!((t.api, n, p), ("connection", "pg", Some("team/a b")));
        for bad in [
            "main",
            "catalog/",
            "schema/main",
            "tables/a.b.c",
            "catalog/a/b",
        ] {
            let e = parse_id(bad, false).unwrap_err();
            assert!(
                e.message.contains("SECURABLE/FULL_NAME"),
                "{bad}: {}",
                e.message
            );
        }
        assert!(parse_id("catalog/main", true).is_err());
    }

    #[test]
    fn privileges_are_checked_per_securable_with_a_hint() {
        let list = |ps: &[&str]| Value::List(ps.iter().map(|p| Value::from(*p)).collect());
        let catalog = &TARGETS[0];
        assert!(check_privileges(catalog, &list(&["USE_CATALOG", "SELECT"]), vec![]).is_empty());
        let f = check_privileges(catalog, &list(&["CREATE TABLE"]), vec![]);
        assert_eq!(
            f[0].message,
            "\"CREATE TABLE\" is not a privilege on a catalog"
        );
        assert!(f[0].hint.as_deref().unwrap().contains("\"CREATE_TABLE\""));
        let f = check_privileges(catalog, &list(&["USAGE"]), vec![]);
        assert!(f[0].hint.as_deref().unwrap().contains("USE_CATALOG"));
        let f = check_privileges(&TARGETS[3], &list(&["USE_CATALOG"]), vec![]);
        assert_eq!(
            f[0].message,
            "\"USE_CATALOG\" is not a privilege on a volume"
        );
        let f = check_privileges(&TARGETS[2], &list(&["SELEKT"]), vec![]);
        assert!(
            f[0].hint.as_deref().unwrap().contains("\"SELECT\""),
            "{:?}",
            f[0].hint
        );
    }

    #[test]
    fn one_securable_with_its_full_name() {
        let o = |pairs: &[(&str, &str)]| -> Object {
            pairs
                .iter()
                .map(|(k, v)| (k.to_string(), Value::from(*v)))
                .collect()
        };
        assert!(check_target(&o(&[("schema", "main.sales")])).is_empty());
        let f = check_target(&o(&[("schema", "sales")]));
        assert_eq!(f[0].hint.as_deref(), Some("write it as CATALOG.SCHEMA"));
        let f = check_target(&o(&[("volume", "a.b")]));
        assert_eq!(
            f[0].hint.as_deref(),
            Some("write it as CATALOG.SCHEMA.VOLUME")
        );
        assert!(check_target(&o(&[("catalog", "main")])).is_empty());
        assert_eq!(check_target(&o(&[])).len(), 1);
        let f = check_target(&o(&[("catalog", "main"), ("volume", "a.b.c")]));
        assert!(f[0].message.contains("both set"));
    }

    #[test]
    fn a_create_does_not_take_what_others_granted() {
        let held = a(&[("alice", &["SELECT", "MODIFY"]), ("bob", &["SELECT"])]);
        let want = a(&[("alice", &["SELECT"])]);
        assert_eq!(
            unplanned_removals(&held, &want, true),
            ["alice: MODIFY", "bob: SELECT"]
        );
        assert_eq!(unplanned_removals(&held, &want, false), ["alice: MODIFY"]);
        assert!(unplanned_removals(&want, &held, true).is_empty());
    }
}
