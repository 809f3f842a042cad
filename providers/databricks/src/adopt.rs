//! `brickform adopt`: the live objects a rule chooses, and what they need, read as an import
//! reads them so that configuration written from them plans nothing.
//!
//! The rules:
//! - `--catalog C` chooses the catalog C, the schemas and volumes in it, and the pipelines
//!   that publish into it or stage in it;
//! - `--prefix P` chooses the objects whose name starts with P; for notebooks and workspace
//!   files, whose names are their paths, a prefix starting with `/` chooses those under it;
//! - `--tag K=V` chooses the jobs and pipelines tagged so;
//! - `--creator U` keeps, of what the others choose (of everything when it is alone), what U
//!   made: jobs and pipelines by their creator, Unity Catalog objects by who made them (or
//!   their owner), workspace objects by lying in U's home folder.
//!
//! Then, until nothing more is found, what a chosen object runs or reads is chosen with it (a
//! job's pipelines, an ingestion pipeline's gateway, a pipeline's notebooks), and so is a job
//! or pipeline that uses a chosen one (the job that runs a chosen pipeline). Objects others'
//! work lives in or runs on (a catalog, a schema, a connection, a warehouse) are taken only
//! when a rule chooses them: a chosen pipeline's catalog stays a name, never adopted because
//! the pipeline publishes into it.

use crate::Shared;
use crate::client::Client;
use crate::resources::DatabricksKind;
use brickform_core::lang::generate::{names, reference_sites};
use brickform_core::provider::{ErrorKind, OpContext, ProviderError, ProviderResult, Remote};
use brickform_core::value::{Object, Value};
use serde_json::Value as Json;
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

/// Objects read at once.
const READS_IN_FLIGHT: usize = 10;

/// What chooses the objects to adopt (see the module's documentation).
#[derive(Debug, Clone, Default)]
pub struct Rules {
    pub catalogs: Vec<String>,
    pub prefixes: Vec<String>,
    pub tags: Vec<(String, String)>,
    pub creator: Option<String>,
}

impl Rules {
    fn scoped(&self) -> bool {
        !(self.catalogs.is_empty() && self.prefixes.is_empty() && self.tags.is_empty())
    }

    /// Why the rules choose a listed object; `None` when they do not.
    fn choose(&self, l: &Listed) -> Option<String> {
        if !self.made_by(l.creator.as_deref(), &l.name) {
            return None;
        }
        if !self.scoped() {
            return Some(format!(
                "made by {}",
                self.creator.as_deref().unwrap_or_default()
            ));
        }
        if let Some(c) = self.catalogs.iter().find(|c| {
            l.catalog
                .as_deref()
                .is_some_and(|lc| lc.eq_ignore_ascii_case(c))
        }) {
            return Some(format!("in catalog {c}"));
        }
        if let Some(p) = self
            .prefixes
            .iter()
            .find(|p| l.name.starts_with(p.as_str()))
        {
            return Some(format!("name starts with {p}"));
        }
        self.tags
            .iter()
            .find(|(k, v)| l.tags.get(k) == Some(v))
            .map(|(k, v)| format!("tagged {k}={v}"))
    }

    /// Whether `--creator` (if given) keeps an object made by `creator`, or lying at `path`
    /// in the workspace when nothing tells who made it.
    fn made_by(&self, creator: Option<&str>, path: &str) -> bool {
        let Some(want) = &self.creator else {
            return true;
        };
        match creator {
            Some(c) => c.eq_ignore_ascii_case(want),
            None => {
                let home = format!("/Users/{want}/");
                path.starts_with(&home) || path.starts_with(&format!("/Workspace{home}"))
            }
        }
    }

    /// The workspace folders to look in: the path prefixes, or with `--creator` alone the
    /// creator's home folder.
    pub fn workspace_prefixes(&self) -> Vec<String> {
        match &self.creator {
            Some(c) if !self.scoped() => vec![format!("/Users/{c}/")],
            _ => self
                .prefixes
                .iter()
                .filter(|p| p.starts_with('/'))
                .cloned()
                .collect(),
        }
    }

    /// The catalogs whose schemas (and their volumes) need listing: only the named ones
    /// when catalogs are all the rules name, else every one.
    fn catalogs_to_list<'a>(&'a self, all: &'a [String]) -> &'a [String] {
        if !self.catalogs.is_empty() && self.prefixes.is_empty() && self.tags.is_empty() {
            &self.catalogs
        } else {
            all
        }
    }
}

/// A live object as a listing shows it, with what the rules look at.
#[derive(Debug, Clone, Default)]
pub struct Listed {
    pub id: String,
    /// Its name; a workspace object's path.
    pub name: String,
    /// The catalog it is in or publishes into.
    pub catalog: Option<String>,
    pub creator: Option<String>,
    pub tags: BTreeMap<String, String>,
    /// Its attributes when the listing holds them (jobs, pipelines): what it uses is then
    /// known without reading it again.
    pub attrs: Option<Object>,
}

/// What a kind's listing is given: the rules, the Unity Catalog parents found so far, and
/// listings several kinds share (every pipeline, read once for the three pipeline kinds).
pub struct Scope<'a> {
    pub rules: &'a Rules,
    /// Catalogs whose schemas to list.
    pub catalogs: Vec<String>,
    /// Schemas (`catalog.schema`) whose volumes to list.
    pub schemas: Vec<String>,
    pub shared_lists: &'a tokio::sync::Mutex<HashMap<&'static str, Arc<Vec<Json>>>>,
}

impl Scope<'_> {
    /// The listing `key`, made by `list` the first time it is asked for.
    pub async fn shared_list<F, Fut>(
        &self,
        key: &'static str,
        list: F,
    ) -> ProviderResult<Arc<Vec<Json>>>
    where
        F: FnOnce() -> Fut,
        Fut: std::future::Future<Output = ProviderResult<Vec<Json>>>,
    {
        let mut lists = self.shared_lists.lock().await;
        if let Some(l) = lists.get(key) {
            return Ok(l.clone());
        }
        let l = Arc::new(list().await?);
        lists.insert(key, l.clone());
        Ok(l)
    }
}

/// A local file written for an adopted object's content, and the attribute naming it.
pub struct AdoptedFile {
    pub name: String,
    pub bytes: Vec<u8>,
    pub attr: &'static str,
}

/// What is written for an adopted object.
pub struct Adoption {
    /// Its attributes, shaped as a configuration.
    pub values: Object,
    pub file: Option<AdoptedFile>,
}

/// A kind's attributes as adopt writes them, leaving out the optional and computed ones
/// whose value `chosen_by_the_service` says nobody chose (an owner that is whoever made it, a
/// managed volume's storage): left out, they keep their value, so that is no change.
pub fn as_configured(
    schema: &brickform_core::provider::Schema,
    attrs: &Object,
    chosen_by_the_service: impl Fn(&str, &Value) -> bool,
) -> Object {
    let mut values = attrs.clone();
    for a in &schema.attributes {
        if a.presence == brickform_core::provider::Presence::OptionalComputed
            && values
                .get(a.name)
                .is_some_and(|v| chosen_by_the_service(a.name, v))
        {
            values.insert(a.name.to_string(), Value::Null);
        }
    }
    values
}

/// An object adopt takes.
pub struct Found {
    pub kind: Arc<dyn DatabricksKind>,
    pub remote: Remote,
    /// What its resource name is made from.
    pub label: String,
    /// Why it was taken.
    pub why: String,
}

/// The objects the rules choose and what they need, in the provider's order of kinds, each
/// read as `import` reads it. `managed(type, id, location)` tells objects a state manages
/// already (by id, or by where the object is when its id is a path written two ways):
/// they are left out (and still count as found, so what uses them refers to them by id).
pub async fn discover(
    shared: &Arc<Shared>,
    rules: &Rules,
    managed: &(dyn Fn(&str, &str, Option<&str>) -> bool + Sync),
) -> ProviderResult<(Vec<Found>, Vec<String>)> {
    let client = shared.client()?;
    let ctx = OpContext::default();
    let kinds = crate::resources::all(shared);
    let shared_lists = Default::default();
    let mut scope = Scope {
        rules,
        catalogs: Vec::new(),
        schemas: Vec::new(),
        shared_lists: &shared_lists,
    };
    // Every listing, by kind (Unity Catalog parents before their children).
    let mut listed: Vec<(usize, Listed)> = Vec::new();
    for (k, kind) in kinds.iter().enumerate() {
        let Some(list) = kind.listing(&client, &scope).await else {
            continue;
        };
        let list = list?;
        match kind.type_name() {
            "databricks_catalog" => {
                let all: Vec<String> = list.iter().map(|l| l.id.clone()).collect();
                if let Some(missing) = rules.catalogs.iter().find(|c| !all.contains(c)) {
                    return Err(ProviderError::invalid(format!(
                        "there is no catalog \"{missing}\" in the workspace (it has {})",
                        if all.is_empty() {
                            "none".to_string()
                        } else {
                            all.join(", ")
                        }
                    )));
                }
                scope.catalogs = rules.catalogs_to_list(&all).to_vec();
            }
            "databricks_schema" => {
                scope.schemas = list.iter().map(|l| l.id.clone()).collect();
            }
            _ => {}
        }
        for l in list {
            if !listed.iter().any(|(j, m)| *j == k && m.id == l.id) {
                listed.push((k, l));
            }
        }
    }

    let mut chosen: Vec<Found> = Vec::new();
    let is_chosen = |chosen: &[Found], k: &Arc<dyn DatabricksKind>, id: &str| {
        chosen
            .iter()
            .any(|f| f.kind.type_name() == k.type_name() && f.remote.id == id)
    };
    // Read as an import reads them, a few at once.
    let mut reads = tokio::task::JoinSet::new();
    let sem = Arc::new(tokio::sync::Semaphore::new(READS_IN_FLIGHT));
    for (i, (k, l)) in listed.iter().enumerate() {
        if let Some(why) = rules.choose(l) {
            let (kind, ctx, sem, id) = (kinds[*k].clone(), ctx.clone(), sem.clone(), l.id.clone());
            reads.spawn(async move {
                let _permit = sem.acquire_owned().await;
                (i, why, kind.import(&ctx, &id).await)
            });
        }
    }
    let mut read: Vec<(usize, Found)> = Vec::new();
    while let Some(joined) = reads.join_next().await {
        let (i, why, remote) = joined.map_err(|e| ProviderError::other(e.to_string()))?;
        if let Some(remote) = remote? {
            read.push((
                i,
                Found {
                    kind: kinds[listed[i].0].clone(),
                    remote,
                    label: label_of(&listed[i].1.name),
                    why,
                },
            ));
        }
    }
    read.sort_by_key(|(i, _)| *i);
    chosen.extend(read.into_iter().map(|(_, f)| f));

    loop {
        let mut more: Vec<Found> = Vec::new();
        // What the chosen objects run or read.
        for f in &chosen {
            for r in f.kind.references() {
                if r.is_loose() {
                    continue;
                }
                for site in reference_sites(&f.remote.attrs, r) {
                    let named = |t: &Found| {
                        r.to.contains(&t.kind.type_name())
                            && names(r, &site, &t.remote.id, &t.remote.attrs)
                    };
                    if chosen.iter().chain(&more).any(named) {
                        continue;
                    }
                    for to in r.to {
                        let Some(kind) = kinds.iter().find(|k| k.type_name() == *to) else {
                            continue;
                        };
                        if kind.shared_by_others() {
                            continue;
                        }
                        match kind.import(&ctx, &site.value).await {
                            Ok(Some(remote)) => {
                                let creator = creator_of(&remote.attrs);
                                if rules.made_by(creator.as_deref(), &remote.id) {
                                    more.push(Found {
                                        kind: kind.clone(),
                                        label: label_from(&remote),
                                        remote,
                                        why: format!("used by {}", what(f)),
                                    });
                                }
                                break;
                            }
                            Ok(None) => {}
                            // Not of this kind (a gateway's id asked of the pipeline kind).
                            Err(e)
                                if matches!(
                                    e.kind,
                                    ErrorKind::InvalidInput | ErrorKind::NotFound
                                ) => {}
                            Err(e) => return Err(e),
                        }
                    }
                }
            }
        }
        // Jobs and pipelines that use a chosen one.
        for (k, l) in &listed {
            let kind = &kinds[*k];
            let Some(attrs) = &l.attrs else { continue };
            if is_chosen(&chosen, kind, &l.id)
                || is_chosen(&more, kind, &l.id)
                || !rules.made_by(l.creator.as_deref(), &l.name)
            {
                continue;
            }
            let uses = kind.references().iter().find_map(|r| {
                reference_sites(attrs, r).into_iter().find_map(|site| {
                    chosen.iter().find(|t| {
                        !t.kind.shared_by_others()
                            && r.to.contains(&t.kind.type_name())
                            && names(r, &site, &t.remote.id, &t.remote.attrs)
                    })
                })
            });
            if let Some(t) = uses {
                let why = format!("uses {}", what(t));
                if let Some(remote) = kind.import(&ctx, &l.id).await? {
                    more.push(Found {
                        kind: kind.clone(),
                        remote,
                        label: label_of(&l.name),
                        why,
                    });
                }
            }
        }
        if more.is_empty() {
            break;
        }
        for m in more {
            if !is_chosen(&chosen, &m.kind, &m.remote.id) {
                chosen.push(m);
            }
        }
    }

    // In the provider's order of kinds, so containers come before what is in them.
    let order = |f: &Found| {
        kinds
            .iter()
            .position(|k| k.type_name() == f.kind.type_name())
            .unwrap_or(usize::MAX)
    };
    chosen.sort_by(|a, b| order(a).cmp(&order(b)).then(a.remote.id.cmp(&b.remote.id)));
    let mut kept = Vec::new();
    let mut already = Vec::new();
    for f in chosen {
        let location = f.kind.location(&f.remote.attrs);
        if managed(f.kind.type_name(), &f.remote.id, location.as_deref()) {
            already.push(what(&f));
        } else {
            kept.push(f);
        }
    }
    Ok((kept, already))
}

/// How messages name an adopted object: `databricks_job "nightly" (123)`.
pub fn what(f: &Found) -> String {
    if f.label == f.remote.id {
        format!("{} {}", f.kind.type_name(), f.remote.id)
    } else {
        format!("{} \"{}\" ({})", f.kind.type_name(), f.label, f.remote.id)
    }
}

/// Who made an object, as its attributes say.
fn creator_of(attrs: &Object) -> Option<String> {
    ["creator_user_name", "created_by", "owner"]
        .iter()
        .find_map(|k| attrs.get(*k).and_then(Value::as_str))
        .map(str::to_string)
}

/// A resource name's source: a workspace path's last part, or the name (a job's name may
/// hold a `/` of its own).
fn label_of(name: &str) -> String {
    match name.strip_prefix('/') {
        Some(path) => path.rsplit('/').next().unwrap_or(path).to_string(),
        None => name.to_string(),
    }
}

fn label_from(remote: &Remote) -> String {
    let name = remote
        .attrs
        .get("name")
        .and_then(Value::as_str)
        .unwrap_or(&remote.id);
    label_of(name)
}

/// A listing failed: what was being listed, and why.
pub fn listing_error(what: &str, e: crate::client::ApiError) -> ProviderError {
    ProviderError::other(format!("listing {what}: {e}"))
}

/// The objects a Unity Catalog list call returns, as listed objects.
pub fn uc_listed(objects: &[Json], is_catalog: bool, skip: impl Fn(&str) -> bool) -> Vec<Listed> {
    objects
        .iter()
        .filter_map(|o| {
            let id = o
                .get("full_name")
                .or_else(|| o.get("name"))
                .and_then(Json::as_str)?;
            if skip(id) {
                return None;
            }
            let text = |k: &str| o.get(k).and_then(Json::as_str).map(str::to_string);
            Some(Listed {
                id: id.to_lowercase(),
                name: text("name").unwrap_or_else(|| id.to_string()),
                // A catalog is in itself.
                catalog: if is_catalog {
                    Some(id.to_lowercase())
                } else {
                    text("catalog_name")
                },
                creator: text("created_by").or_else(|| text("owner")),
                ..Listed::default()
            })
        })
        .collect()
}

/// Lists `path` (paging as the collection pages) or fails saying what was listed.
pub async fn list(
    client: &Client,
    path: &str,
    query: &[(&str, String)],
    items: &str,
    page: Option<crate::client::PageSize>,
) -> ProviderResult<Vec<Json>> {
    client
        .list_all(path, query, items, page)
        .await
        .map_err(|e| listing_error(path, e))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn listed(name: &str, catalog: Option<&str>, creator: Option<&str>) -> Listed {
        Listed {
            id: name.into(),
            name: name.into(),
            catalog: catalog.map(Into::into),
            creator: creator.map(Into::into),
            tags: BTreeMap::from([("team".to_string(), "data".to_string())]),
            attrs: None,
        }
    }

    #[test]
    fn scopes_choose_and_the_creator_keeps() {
        let rules = Rules {
            catalogs: vec!["Main".into()],
            prefixes: vec!["demo_".into(), "/Users/a@x/demo/".into()],
            tags: vec![],
            creator: Some("a@x".into()),
        };
        let by = |n, c, who| rules.choose(&listed(n, c, who));
        assert_eq!(
            by("s", Some("main"), Some("a@x")).as_deref(),
            Some("in catalog Main")
        );
        assert_eq!(by("s", Some("main"), Some("b@x")), None, "somebody else's");
        assert_eq!(
            by("demo_job", None, Some("A@X")).as_deref(),
            Some("name starts with demo_")
        );
        assert_eq!(by("other", None, Some("a@x")), None);
        assert_eq!(
            by("/Users/a@x/demo/nb", None, None).as_deref(),
            Some("name starts with /Users/a@x/demo/"),
            "a workspace object is the user's when it is in their home folder"
        );
        let tagged = Rules {
            tags: vec![("team".into(), "data".into())],
            ..Rules::default()
        };
        assert_eq!(
            tagged.choose(&listed("x", None, None)).as_deref(),
            Some("tagged team=data")
        );
        let mine = Rules {
            creator: Some("a@x".into()),
            ..Rules::default()
        };
        assert_eq!(
            mine.choose(&listed("x", None, Some("a@x"))).as_deref(),
            Some("made by a@x")
        );
        assert_eq!(mine.choose(&listed("/Shared/x", None, None)), None);
    }

    #[test]
    fn only_named_catalogs_are_listed_when_catalogs_are_all_the_rules_name() {
        let all = vec!["a".to_string(), "b".to_string()];
        let only = Rules {
            catalogs: vec!["b".into()],
            ..Rules::default()
        };
        assert_eq!(only.catalogs_to_list(&all), ["b".to_string()]);
        let prefix = Rules {
            catalogs: vec!["b".into()],
            prefixes: vec!["x".into()],
            ..Rules::default()
        };
        assert_eq!(prefix.catalogs_to_list(&all), all.as_slice());
    }
}
