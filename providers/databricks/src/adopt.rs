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
//!
//! What a state of the backend manages is left out. So is what carries the ownership tag of
//! another state (a state of another backend cannot be listed, its tag can be read), unless
//! asked for: adopted, it would be managed twice, and a destroy of either state would delete
//! it. What such an object uses, and what uses it, is not chosen because of it.

use crate::Shared;
use crate::resources::DatabricksKind;
use crate::resources::Namespace;
pub use crate::resources::adoption::{
    AdoptedFile, Adoption, Listed, Scope, as_configured, list, listing_error, uc_listed,
};
use brickform_core::fan_out;
use brickform_core::lang::generate::{Site, names, reference_sites};
use brickform_core::location::Location;
use brickform_core::provider::{
    ErrorKind, Existing, OpContext, OwnerTag, ProviderError, ProviderResult, Reference, Remote,
};
use brickform_core::value::{Object, Value};
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

    /// Every catalog the rules name must be one of the workspace's (`all`).
    fn check_catalogs(&self, all: &[String]) -> ProviderResult<()> {
        match self.catalogs.iter().find(|c| !all.contains(c)) {
            Some(missing) => Err(ProviderError::invalid(format!(
                "there is no catalog \"{missing}\" in the workspace (it has {})",
                if all.is_empty() {
                    "none".to_string()
                } else {
                    all.join(", ")
                }
            ))),
            None => Ok(()),
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

/// An object adopt takes.
pub struct Found {
    pub kind: Arc<dyn DatabricksKind>,
    pub remote: Remote,
    /// The ownership tag it carries, for kinds that tag what they create.
    pub tag: Option<OwnerTag>,
    /// What its resource name is made from.
    pub label: String,
    /// Why it was taken.
    pub why: String,
}

impl Found {
    fn new(kind: Arc<dyn DatabricksKind>, found: Existing, label: String, why: String) -> Self {
        Found {
            kind,
            remote: found.remote,
            tag: found.tag,
            label,
            why,
        }
    }

    /// The ownership tag it carries when that names a state other than `state`'s.
    pub fn other_owner(&self, state: &ForState) -> Option<&OwnerTag> {
        self.tag
            .as_ref()
            .filter(|t| t.names_other_state(&state.lineage, &state.environment))
    }

    /// Whether it is left out as another state's: what it uses and what uses it are then
    /// that state's business too, and not chosen for it.
    fn left_to_other(&self, state: &ForState) -> bool {
        !state.take_from_others && self.other_owner(state).is_some()
    }

    /// For the comment adopt writes above it: the state it is taken from, when its
    /// ownership tag names another, and what that state must do so a destroy there does
    /// not delete it.
    pub fn taken_from(&self, state: &ForState) -> Option<String> {
        self.other_owner(state).map(|tag| {
            format!(
                "Taken from another brickform state ({tag}), which still manages it: let go of it there (replace its block with a `removed` block with `lifecycle {{ destroy = false }}` and apply), or a destroy there deletes it."
            )
        })
    }
}

/// The state adopt writes import blocks for: what another brickform state's ownership tag
/// claims is that state's, and taken from it only when asked.
#[derive(Debug, Clone, Default)]
pub struct ForState {
    pub lineage: String,
    pub environment: String,
    /// Take the objects another state's tag claims too (`--take-from-other-states`).
    pub take_from_others: bool,
}

/// What [`discover`] found, sorted out.
pub struct Discovered {
    /// The objects to adopt, in the provider's order of kinds.
    pub found: Vec<Found>,
    /// What a state of this backend manages already, as messages name it: left out.
    pub managed: Vec<String>,
    /// What carries the ownership tag of another brickform state, with that tag: left out
    /// unless [`ForState::take_from_others`] holds.
    pub others: Vec<(String, OwnerTag)>,
}

/// The objects the rules choose and what they need, in the provider's order of kinds, each
/// read as `import` reads it. `managed(type, id, location)` tells objects a state of this
/// backend manages already (by id, or by where the object is when its id is a path written
/// two ways): they are left out (and still count as found, so what uses them refers to them
/// by id). So are, unless `state` says to take them, the objects whose ownership tag names
/// another state than `state`: a state of another backend (another configuration directory
/// with its own local state) that manages them, which no listing of this backend shows.
pub async fn discover(
    shared: &Arc<Shared>,
    rules: &Rules,
    state: &ForState,
    managed: &(dyn Fn(&str, &str, Option<&Location>) -> bool + Sync),
) -> ProviderResult<Discovered> {
    let client = shared.client()?;
    let d = Discovery {
        kinds: crate::resources::all(shared),
        rules,
        state,
        ctx: OpContext::default(),
    };
    let listed = d.list_everything(&client).await?;
    let mut chosen = d.read_chosen(&listed).await?;
    // Until nothing more is found: what the chosen objects use, and what uses them.
    loop {
        let mut more = d.used_by(&chosen).await?;
        d.users_of(&listed, &chosen, &mut more).await?;
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
        d.kinds
            .iter()
            .position(|k| k.type_name() == f.kind.type_name())
            .unwrap_or(usize::MAX)
    };
    chosen.sort_by(|a, b| order(a).cmp(&order(b)).then(a.remote.id.cmp(&b.remote.id)));
    Ok(sort_out(chosen, state, managed))
}

/// What [`discover`] works with at each step: the provider's kinds (in its order), the
/// rules that choose, the state adopt writes for, and the context objects are read in.
struct Discovery<'a> {
    kinds: Vec<Arc<dyn DatabricksKind>>,
    rules: &'a Rules,
    state: &'a ForState,
    ctx: OpContext,
}

impl Discovery<'_> {
    /// Every listing, by kind (index into `kinds`), each object once. Unity Catalog parents
    /// come before their children, whose listings need them: the catalogs to list schemas
    /// in, the schemas to list volumes in.
    async fn list_everything(
        &self,
        client: &crate::client::Client,
    ) -> ProviderResult<Vec<(usize, Listed)>> {
        let shared_lists = Default::default();
        let mut scope = Scope {
            workspace_prefixes: self.rules.workspace_prefixes(),
            catalogs: Vec::new(),
            schemas: Vec::new(),
            shared_lists: &shared_lists,
        };
        let mut listed: Vec<(usize, Listed)> = Vec::new();
        for (k, kind) in self.kinds.iter().enumerate() {
            let Some(list) = kind.listing(client, &scope).await else {
                continue;
            };
            let list = list?;
            match kind.namespace() {
                Some(Namespace::Catalog) => {
                    let all: Vec<String> = list.iter().map(|l| l.id.clone()).collect();
                    self.rules.check_catalogs(&all)?;
                    scope.catalogs = self.rules.catalogs_to_list(&all).to_vec();
                }
                Some(Namespace::Schema) => {
                    scope.schemas = list.iter().map(|l| l.id.clone()).collect();
                }
                None => {}
            }
            for l in list {
                if !listed.iter().any(|(j, m)| *j == k && m.id == l.id) {
                    listed.push((k, l));
                }
            }
        }
        Ok(listed)
    }

    /// The listed objects the rules choose, read as an import reads them, a few at once.
    async fn read_chosen(&self, listed: &[(usize, Listed)]) -> ProviderResult<Vec<Found>> {
        let picked = listed
            .iter()
            .enumerate()
            .filter_map(|(i, (k, l))| self.rules.choose(l).map(|why| (i, *k, why, l.id.clone())));
        let reads = fan_out::bounded(
            "reading what adopt chose",
            picked,
            READS_IN_FLIGHT,
            |(i, k, why, id)| {
                let (kind, ctx) = (self.kinds[k].clone(), self.ctx.clone());
                async move { (i, why, kind.import_existing(&ctx, &id).await) }
            },
        );
        let mut chosen: Vec<Found> = Vec::new();
        for joined in reads.await {
            let (i, why, remote) = joined?;
            if let Some(found) = remote? {
                let (kind, label) = (self.kinds[listed[i].0].clone(), label_of(&listed[i].1.name));
                chosen.push(Found::new(kind, found, label, why));
            }
        }
        Ok(chosen)
    }

    /// What the chosen objects run or read that is not chosen yet, made by whom the rules
    /// keep. Nothing through a chosen object left to another state, and no object others'
    /// work lives in or runs on (those are taken only when a rule chooses them).
    async fn used_by(&self, chosen: &[Found]) -> ProviderResult<Vec<Found>> {
        let mut more: Vec<Found> = Vec::new();
        for f in chosen.iter().filter(|f| !f.left_to_other(self.state)) {
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
                    if let Some(found) = self.read_referenced(f, r, &site).await? {
                        more.push(found);
                    }
                }
            }
        }
        Ok(more)
    }

    /// The object a reference of `f` names at `site`, read as an import reads it: from the
    /// first of the kinds the reference may point to that has it, and only when the rules
    /// keep who made it.
    async fn read_referenced(
        &self,
        f: &Found,
        r: &Reference,
        site: &Site,
    ) -> ProviderResult<Option<Found>> {
        for to in r.to {
            let Some(kind) = self.kinds.iter().find(|k| k.type_name() == *to) else {
                continue;
            };
            if kind.shared_by_others() {
                continue;
            }
            match kind.import_existing(&self.ctx, &site.value).await {
                Ok(Some(found)) => {
                    let creator = creator_of(&found.remote.attrs);
                    if !self.rules.made_by(creator.as_deref(), &found.remote.id) {
                        return Ok(None);
                    }
                    let label = label_from(&found.remote);
                    let why = format!("used by {}", what(f));
                    return Ok(Some(Found::new(kind.clone(), found, label, why)));
                }
                Ok(None) => {}
                // Not of this kind (a gateway's id asked of the pipeline kind).
                Err(e) if matches!(e.kind, ErrorKind::InvalidInput | ErrorKind::NotFound) => {}
                Err(e) => return Err(e),
            }
        }
        Ok(None)
    }

    /// Adds to `more` the listed jobs and pipelines that use a chosen object (not one left
    /// to another state, nor one others' work lives in), made by whom the rules keep, that
    /// are not chosen yet.
    async fn users_of(
        &self,
        listed: &[(usize, Listed)],
        chosen: &[Found],
        more: &mut Vec<Found>,
    ) -> ProviderResult<()> {
        for (k, l) in listed {
            let kind = &self.kinds[*k];
            let Some(attrs) = &l.attrs else { continue };
            if is_chosen(chosen, kind, &l.id)
                || is_chosen(more, kind, &l.id)
                || !self.rules.made_by(l.creator.as_deref(), &l.name)
            {
                continue;
            }
            let uses = kind.references().iter().find_map(|r| {
                reference_sites(attrs, r).into_iter().find_map(|site| {
                    chosen.iter().find(|t| {
                        !t.kind.shared_by_others()
                            && !t.left_to_other(self.state)
                            && r.to.contains(&t.kind.type_name())
                            && names(r, &site, &t.remote.id, &t.remote.attrs)
                    })
                })
            });
            if let Some(t) = uses {
                let why = format!("uses {}", what(t));
                if let Some(found) = kind.import_existing(&self.ctx, &l.id).await? {
                    more.push(Found::new(kind.clone(), found, label_of(&l.name), why));
                }
            }
        }
        Ok(())
    }
}

/// Whether `found` holds the object `id` of the kind `k`.
fn is_chosen(found: &[Found], k: &Arc<dyn DatabricksKind>, id: &str) -> bool {
    found
        .iter()
        .any(|f| f.kind.type_name() == k.type_name() && f.remote.id == id)
}

/// Leaves out of `chosen` what a state of this backend manages already, then what another
/// state's ownership tag claims (unless `state` says to take it): two states managing one
/// object would each delete it on destroy.
fn sort_out(
    chosen: Vec<Found>,
    state: &ForState,
    managed: &(dyn Fn(&str, &str, Option<&Location>) -> bool + Sync),
) -> Discovered {
    let mut out = Discovered {
        found: Vec::new(),
        managed: Vec::new(),
        others: Vec::new(),
    };
    for f in chosen {
        let location = f.kind.location(&f.remote.attrs);
        if managed(f.kind.type_name(), &f.remote.id, location.as_ref()) {
            out.managed.push(what(&f));
        } else if f.left_to_other(state)
            && let Some(tag) = f.tag.clone()
        {
            out.others.push((what(&f), tag));
        } else {
            out.found.push(f);
        }
    }
    out
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

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
    fn what_another_state_tagged_is_left_out_unless_taken() {
        let kinds = crate::resources::all(&Arc::new(Shared::default()));
        let job = kinds
            .iter()
            .find(|k| k.type_name() == "databricks_job")
            .cloned()
            .unwrap();
        let found = |id: &str, tag: Option<(&str, &str)>| Found {
            kind: job.clone(),
            remote: Remote {
                id: id.into(),
                attrs: Object::default(),
            },
            tag: tag.map(|(lineage, environment)| OwnerTag {
                lineage: lineage.into(),
                environment: Some(environment.into()),
                address: format!("databricks_job.j{id}"),
            }),
            label: format!("job{id}"),
            why: "name starts with job".into(),
        };
        let chosen = || {
            vec![
                found("1", None),
                found("2", Some(("L", "dev"))),
                found("3", Some(("M", "dev"))),
                found("4", Some(("L", "prod"))),
                found("5", Some(("M", "dev"))),
            ]
        };
        let mut state = ForState {
            lineage: "L".into(),
            environment: "dev".into(),
            take_from_others: false,
        };
        // Object 5 is managed by a state of this backend: that comes first.
        let managed = |_: &str, id: &str, _: Option<&Location>| id == "5";
        let out = sort_out(chosen(), &state, &managed);
        let ids = |fs: &[Found]| fs.iter().map(|f| f.remote.id.clone()).collect::<Vec<_>>();
        assert_eq!(ids(&out.found), ["1", "2"]);
        assert_eq!(out.managed, ["databricks_job \"job5\" (5)"]);
        let others: Vec<String> = out
            .others
            .iter()
            .map(|(w, t)| format!("{w} ({t})"))
            .collect();
        assert_eq!(
            others,
            [
                "databricks_job \"job3\" (3) (state M, environment dev, as databricks_job.j3)",
                "databricks_job \"job4\" (4) (state L, environment prod, as databricks_job.j4)",
            ]
        );
        assert!(out.found.iter().all(|f| f.taken_from(&state).is_none()));

        state.take_from_others = true;
        let out = sort_out(chosen(), &state, &managed);
        assert_eq!(ids(&out.found), ["1", "2", "3", "4"]);
        assert!(out.others.is_empty());
        let note = out.found[2].taken_from(&state).unwrap();
        assert!(
            note.starts_with(
                "Taken from another brickform state (state M, environment dev, as databricks_job.j3)"
            ),
            "{note}"
        );
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
