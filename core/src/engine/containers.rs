//! Containers: objects whose delete takes what lies inside them (a namespace deleted
//! with a force flag, a store and its files, a folder deleted recursively). A plan must name
//! everything such a delete removes: the managed instances inside it are planned with it
//! (replaced when the container is replaced), and the live objects this state does not
//! manage are counted and listed; apply refuses the delete when those changed since the
//! plan. Kinds say where their objects live ([`ResourceKind::location`]); the engine knows
//! nothing else of them.

use super::Engine;
use super::instance::{merged_from, scalars_from};
use crate::addrs::base_of;
use crate::lang::diagnostics::{Diagnostic, Diagnostics};
use crate::plan::{Action, ActionReason, Contents, Plan};
use brickform_state::StateDocument;
use std::collections::{BTreeMap, HashMap};

/// Whether `loc` lies inside `container` (at any depth).
pub(super) fn inside(loc: &str, container: &str) -> bool {
    loc.len() > container.len()
        && loc.starts_with(container)
        && loc.as_bytes().get(container.len()) == Some(&b'/')
}

/// The locations of every managed instance in `state`, by address.
pub(super) fn managed_locations(
    registry: &crate::provider::Registry,
    state: &StateDocument,
) -> BTreeMap<String, String> {
    state
        .resources()
        .iter()
        .filter(|r| r.mode == brickform_state::ResourceMode::Managed)
        .filter_map(|r| {
            let kind = registry.kind(&r.resource_type)?;
            Some((r.address.clone(), kind.location(&scalars_from(r))?))
        })
        .collect()
}

/// The locations above `location`, outermost first (`a` and `a/b` above `a/b/c`).
fn ancestors(location: &str) -> impl Iterator<Item = &str> {
    location.match_indices('/').map(|(p, _)| &location[..p])
}

/// Where the managed objects of `state` are: their locations by address, and the
/// locations each lies under (see `ResourceKind::lies_under`). One pass, each entry's
/// scalar attributes converted once.
struct Placements {
    locations: BTreeMap<String, String>,
    under: Vec<(String, String)>,
}

fn placements(registry: &crate::provider::Registry, state: &StateDocument) -> Placements {
    let mut out = Placements {
        locations: BTreeMap::new(),
        under: Vec::new(),
    };
    for r in state.resources() {
        let Some(kind) = (r.mode == brickform_state::ResourceMode::Managed)
            .then(|| registry.kind(&r.resource_type))
            .flatten()
        else {
            continue;
        };
        let attrs = scalars_from(r);
        if let Some(loc) = kind.location(&attrs) {
            out.locations.insert(r.address.clone(), loc);
        }
        for loc in kind.lies_under(&attrs) {
            out.under.push((r.address.clone(), loc));
        }
    }
    out
}

/// Locations as the user knows the objects (the plan lists these, and apply compares them).
pub(super) fn shown(
    kind: &dyn crate::provider::ResourceKind,
    locations: Vec<String>,
) -> Vec<String> {
    let mut out: Vec<String> = locations.iter().map(|l| kind.show_location(l)).collect();
    out.sort();
    out.dedup();
    out
}

/// What of a container's live contents this state does not manage: not a managed object in
/// it, not inside one (that one's business), not a folder on the way to one.
pub(super) fn unmanaged<'a>(
    listing: Vec<String>,
    container: &str,
    managed: impl Iterator<Item = &'a String>,
) -> Vec<String> {
    let within: Vec<&String> = managed.filter(|m| inside(m, container)).collect();
    let mut out: Vec<String> = listing
        .into_iter()
        .filter(|l| l != container)
        .filter(|l| {
            !within
                .iter()
                .any(|m| *m == l || inside(l, m) || inside(m, l))
        })
        .collect();
    out.sort();
    out.dedup();
    out
}

/// Compares what a container holds now with what the plan saw; `Err` says what is new.
/// Something gone since the plan is no reason to stop: the delete takes less than the plan
/// listed, never more (an object deleted just before its container may take some of what
/// the container held along).
pub(super) fn check_unchanged(
    address: &str,
    seen: &[String],
    now: &[String],
) -> Result<(), String> {
    let new: Vec<&String> = now.iter().filter(|l| !seen.contains(l)).collect();
    if new.is_empty() {
        return Ok(());
    }
    let shown: Vec<&str> = new.iter().take(5).map(|s| s.as_str()).collect();
    let more = match new.len().saturating_sub(5) {
        0 => String::new(),
        n => format!(" and {n} more"),
    };
    Err(format!(
        "{address} was not deleted: it holds {} new since the plan ({}{more}), which the delete would take with it; run plan again to see what the delete takes",
        new.len(),
        shown.join(", ")
    ))
}

/// A container whose delete takes what it holds, to be listed.
struct Listed {
    /// Its index in the plan's changes, and its address.
    change: usize,
    address: String,
    kind: std::sync::Arc<dyn crate::provider::ResourceKind>,
    id: String,
    attrs: crate::value::Object,
    loc: String,
}

impl Engine<'_> {
    /// Plans what deleting or replacing containers takes with them (see the module doc).
    /// Runs on the finished list of changes, before `--target` narrows it, so a targeted
    /// destroy of a container includes what lies in it.
    pub(super) async fn plan_containers(
        &self,
        plan: &mut Plan,
        state: &StateDocument,
        parallelism: usize,
        diags: &mut Diagnostics,
    ) {
        let Placements { locations, under } = placements(self.registry, state);
        // Containment is a dependency: what lies inside is created after its container and
        // deleted before it, and a targeted destroy of the container takes it along.
        // Where objects are now (state) and where they will be (the plan's `after`).
        let mut placed: Vec<(String, String)> = locations
            .iter()
            .map(|(a, l)| (a.clone(), l.clone()))
            .collect();
        let mut lies_under = under;
        for c in &plan.changes {
            if let (Some(kind), Some(after)) =
                (self.registry_for(&c.provider).kind(&c.type_name), &c.after)
            {
                if let Some(loc) = kind.location(&after.0) {
                    placed.push((c.address.clone(), loc));
                }
                for loc in kind.lies_under(&after.0) {
                    lies_under.push((c.address.clone(), loc));
                }
            }
        }
        // What is placed at each location, and each address's locations: an object's
        // containers are the objects placed at the ancestors of its locations, and at the
        // locations it lies under or their ancestors.
        let mut at: HashMap<&str, Vec<usize>> = HashMap::new();
        let mut of: HashMap<&str, Vec<&str>> = HashMap::new();
        let mut beneath: HashMap<&str, Vec<&str>> = HashMap::new();
        for (i, (a, l)) in placed.iter().enumerate() {
            at.entry(l.as_str()).or_default().push(i);
            of.entry(a.as_str()).or_default().push(l.as_str());
        }
        for (a, l) in &lies_under {
            beneath.entry(a.as_str()).or_default().push(l.as_str());
        }
        for c in plan.changes.iter_mut() {
            let own = base_of(&c.address);
            let mine = of.get(c.address.as_str()).map_or(&[][..], Vec::as_slice);
            let below = beneath
                .get(c.address.as_str())
                .map_or(&[][..], Vec::as_slice);
            if mine.is_empty() && below.is_empty() {
                continue;
            }
            // In the order they were placed, as the dependencies have always been listed.
            let mut containers: Vec<usize> = mine
                .iter()
                .flat_map(|l| ancestors(l))
                .chain(below.iter().flat_map(|l| ancestors(l).chain([*l])))
                .filter_map(|ancestor| at.get(ancestor))
                .flatten()
                .copied()
                .collect();
            containers.sort_unstable();
            containers.dedup();
            for i in containers {
                let dep = base_of(&placed[i].0);
                if dep != own && !c.dependencies.iter().any(|d| d == dep) {
                    c.dependencies.push(dep.to_string());
                }
            }
        }

        // What the deletes of this plan remove besides their own objects.
        let taken_along: Vec<String> = plan
            .changes
            .iter()
            .filter(|c| c.action == Action::Delete || c.action.is_replace())
            .filter_map(|c| {
                let kind = self.registry_for(&c.provider).kind(&c.type_name)?;
                let r = state.get(&c.address)?;
                Some(kind.takes_along(&r.id, &merged_from(r)))
            })
            .flatten()
            .collect();
        let mut to_list: Vec<Listed> = Vec::new();
        for i in 0..plan.changes.len() {
            let c = &plan.changes[i];
            if !(c.action == Action::Delete || c.action.is_replace()) {
                continue;
            }
            let Some(kind) = self.registry_for(&c.provider).kind(&c.type_name).cloned() else {
                continue;
            };
            let Some(r) = state.get(&c.address) else {
                continue;
            };
            let Some(loc) = locations.get(&c.address).cloned() else {
                continue;
            };
            let (id, attrs) = (r.id.clone(), merged_from(r));
            // A container replaced (for whatever reason: its diff, a trigger, `--replace`)
            // cannot keep what lies inside it, whether or not its delete takes contents: the
            // managed objects inside are replaced with it, or its delete would fail on them.
            let deletes_contents = kind.deletes_contents(&attrs);
            let replaced = c.action.is_replace();
            if !deletes_contents && !replaced {
                continue;
            }
            let address = c.address.clone();
            let mut managed: Vec<String> = locations
                .iter()
                .filter(|(a, l)| **a != address && inside(l, &loc))
                .map(|(a, _)| a.clone())
                .collect();
            managed.sort();
            for m in &managed {
                let Some(j) = plan.changes.iter().position(|x| &x.address == m) else {
                    continue;
                };
                let inner = &mut plan.changes[j];
                if inner.action == Action::Delete || inner.action.is_replace() {
                    continue;
                }
                if replaced && matches!(inner.action, Action::NoOp | Action::Update) {
                    self.replace_with_container(inner, &address);
                } else if deletes_contents {
                    diags.push(
                        Diagnostic::error(format!(
                            "{m} lies in {address}, which this plan deletes with everything in it"
                        ))
                        .detail(format!(
                            "Deleting {address} deletes {m} too, but the configuration keeps {m}."
                        ))
                        .hint(format!(
                            "remove {m} from the configuration as well (a `removed` block keeps the object out of state without destroying anything else), or keep {address}"
                        )),
                    );
                }
            }
            if !deletes_contents {
                continue;
            }
            plan.changes[i].contents = Some(Contents {
                managed,
                unmanaged: None,
            });
            if !self.offline {
                to_list.push(Listed {
                    change: i,
                    address: address.clone(),
                    kind,
                    id,
                    attrs,
                    loc,
                });
            }
        }
        // What a listing may hold that this plan knows of: managed objects, and what the
        // deletes take along.
        let known: Vec<&String> = locations.values().chain(&taken_along).collect();
        self.list_contents(plan, state, to_list, &known, parallelism, diags)
            .await;
    }

    /// Lists what the containers a plan deletes hold, all at once within the parallelism.
    /// A container inside another one of them is not listed itself: the outer one's
    /// listing holds everything inside it at any depth (the contract of
    /// `ResourceKind::contents`), so 500 containers deleted with the one holding them cost
    /// that one's listing, not 500 more.
    async fn list_contents(
        &self,
        plan: &mut Plan,
        state: &StateDocument,
        to_list: Vec<Listed>,
        known: &[&String],
        parallelism: usize,
        diags: &mut Diagnostics,
    ) {
        // The outermost of the listed containers each one lies in, if any.
        let outer: Vec<Option<usize>> = to_list
            .iter()
            .map(|l| {
                to_list
                    .iter()
                    .enumerate()
                    .filter(|(_, o)| inside(&l.loc, &o.loc))
                    .min_by_key(|(_, o)| o.loc.len())
                    .map(|(j, _)| j)
            })
            .collect();
        let lineage = state.lineage();
        let outermost = to_list
            .iter()
            .enumerate()
            .filter(|(j, _)| outer[*j].is_none())
            .map(|(j, l)| {
                let ctx = self.op_context(&l.address, lineage);
                (j, l.kind.clone(), ctx, l.id.clone(), l.attrs.clone())
            });
        let listed = crate::fan_out::bounded(
            "listing containers",
            outermost,
            parallelism,
            |(j, kind, ctx, id, attrs)| async move {
                let listed = kind.contents(&ctx, &id, &attrs).await;
                (j, listed.map_err(|e| e.message))
            },
        );
        // A listing whose task did not finish is a container whose contents are not known.
        let listings: HashMap<usize, Result<Vec<String>, String>> =
            listed.await.into_iter().flatten().collect();
        for (j, l) in to_list.iter().enumerate() {
            let listing = match outer[j] {
                None => listings.get(&j).cloned(),
                Some(o) => listings
                    .get(&o)
                    .cloned()
                    .map(|r| r.map(|all| all.into_iter().filter(|x| inside(x, &l.loc)).collect())),
            };
            let seen = match listing {
                Some(Ok(listing)) => Some(shown(
                    l.kind.as_ref(),
                    unmanaged(listing, &l.loc, known.iter().copied()),
                )),
                Some(Err(message)) => {
                    diags.push(Diagnostic::error(format!(
                        "{}: cannot list what it holds, which its delete would remove: {message}",
                        l.address
                    )));
                    None
                }
                None => None,
            };
            if let Some(c) = plan.changes[l.change].contents.as_mut() {
                c.unmanaged = seen;
            }
        }
    }

    /// An unchanged or updated instance inside a replaced container is replaced with it.
    fn replace_with_container(&self, c: &mut crate::plan::ResourceChange, container: &str) {
        c.action = Action::DeleteThenCreate;
        c.reason = Some(ActionReason::ReplaceBecauseContainerReplaced);
        c.container = Some(container.to_string());
        // A new object: what only the service tells is known after apply, and so is what it
        // assigned the old object where the configuration may have left it to the service
        // (a storage location the service chose). One the configuration sets is shown as
        // known after apply too, and apply sends it as configured.
        if let (Some(kind), Some(after)) = (
            self.registry_for(&c.provider).kind(&c.type_name),
            c.after.as_mut(),
        ) {
            let mut config = after.0.clone();
            for a in &kind.schema().attributes {
                if a.presence == crate::provider::Presence::OptionalComputed {
                    config.shift_remove(a.name);
                }
            }
            super::instance::fill_service_assigned(kind.as_ref(), &config, true, &mut after.0);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn containment_and_unmanaged_contents() {
        assert!(inside("uc/c/s", "uc/c"));
        assert!(!inside("uc/cat", "uc/c"));
        assert!(!inside("uc/c", "uc/c"));
        let managed = [
            "uc/c".to_string(),
            "uc/c/s/v/in/data.csv".to_string(),
            "uc/c/s/v/conf".to_string(),
        ];
        let listing = vec![
            "uc/c/s/v".into(),
            "uc/c/s/v/in".into(),
            "uc/c/s/v/in/data.csv".into(),
            "uc/c/s/v/in/other.csv".into(),
            "uc/c/s/v/conf/onboarding.json".into(),
            "uc/c/s/v/notes.txt".into(),
        ];
        assert_eq!(
            unmanaged(listing, "uc/c/s/v", managed.iter()),
            ["uc/c/s/v/in/other.csv", "uc/c/s/v/notes.txt"]
        );
        assert!(check_unchanged("v", &["a".into()], &["a".into()]).is_ok());
        let e = check_unchanged("v", &["a".into()], &["a".into(), "b".into()]).unwrap_err();
        assert!(e.contains("1 new since the plan (b)"), "{e}");
        // Less than the plan listed is deleted: nothing the plan did not name.
        assert!(check_unchanged("v", &["a".into(), "b".into()], &["b".into()]).is_ok());
    }
}
