//! Containers: objects whose delete takes what lies inside them (a namespace deleted
//! with a force flag, a store and its files, a folder deleted recursively). A plan must name
//! everything such a delete removes: the managed instances inside it are planned with it
//! (replaced when the container is replaced), and the live objects this state does not
//! manage are counted and listed; apply refuses the delete when those changed since the
//! plan. Kinds say where their objects live ([`ResourceKind::location`]); the engine knows
//! nothing else of them.

use super::Engine;
use super::instance::{merged_from, scalars_from};
use crate::addrs::InstanceAddr;
use crate::diagnostics::{Diagnostic, Diagnostics};
use crate::location::Location;
use crate::plan::{Action, ActionReason, Contents, Plan};
use crate::provider::ProviderError;
use brickform_state::StateDocument;
use std::collections::HashMap;

/// Managed instances' locations by address, in the state's order (the order of the
/// addresses' text), which is the order containment dependencies are listed in.
pub(crate) type Locations = indexmap::IndexMap<InstanceAddr, Location>;

/// Whether `loc` lies inside `container` (at any depth).
pub(super) fn inside(loc: &Location, container: &Location) -> bool {
    container.contains(loc)
}

/// Why what a container holds stops its delete, or is missing from its plan. The text is
/// what the apply or the plan reports.
#[derive(Debug, Clone, thiserror::Error)]
pub(crate) enum ContentsError {
    /// The container holds what the plan did not list (`new`, as shown), which its delete
    /// would take unseen.
    #[error(
        "{address} was not deleted: it holds {} new since the plan ({}), which the delete would take with it; run plan again to see what the delete takes",
        .new.len(),
        first_few(.new)
    )]
    NewSincePlan { address: String, new: Vec<String> },
    /// What the container holds could not be listed: the provider's call failed.
    #[error("{address}: cannot list what it holds, which its delete would remove: {cause}")]
    NotListed {
        address: String,
        cause: ProviderError,
    },
}

/// The first five of `items`, and how many more there are: a message names a few, not 500.
fn first_few(items: &[String]) -> String {
    let shown = items
        .iter()
        .take(5)
        .map(String::as_str)
        .collect::<Vec<_>>()
        .join(", ");
    match items.len().saturating_sub(5) {
        0 => shown,
        n => format!("{shown} and {n} more"),
    }
}

/// The locations of every managed instance in `state`, by address.
pub(super) fn managed_locations(
    registry: &crate::provider::Registry,
    state: &StateDocument,
) -> Locations {
    state
        .resources()
        .iter()
        .filter(|r| r.mode() == brickform_state::ResourceMode::Managed)
        .filter_map(|r| {
            let kind = registry.kind(r.type_name())?;
            Some((r.addr.clone(), kind.location(&scalars_from(r))?))
        })
        .collect()
}

/// Where the managed objects of `state` are: their locations by address, and the
/// locations each lies under (see `ResourceKind::lies_under`). One pass, each entry's
/// scalar attributes converted once.
struct Placements {
    locations: Locations,
    under: Vec<(InstanceAddr, Location)>,
}

fn placements(registry: &crate::provider::Registry, state: &StateDocument) -> Placements {
    let mut out = Placements {
        locations: Locations::new(),
        under: Vec::new(),
    };
    for r in state.resources() {
        let Some(kind) = (r.mode() == brickform_state::ResourceMode::Managed)
            .then(|| registry.kind(r.type_name()))
            .flatten()
        else {
            continue;
        };
        let attrs = scalars_from(r);
        if let Some(loc) = kind.location(&attrs) {
            out.locations.insert(r.addr.clone(), loc);
        }
        for loc in kind.lies_under(&attrs) {
            out.under.push((r.addr.clone(), loc));
        }
    }
    out
}

/// Locations as the user knows the objects (the plan lists these, and apply compares them).
pub(super) fn shown(
    kind: &dyn crate::provider::ResourceKind,
    locations: Vec<Location>,
) -> Vec<String> {
    let mut out: Vec<String> = locations.iter().map(|l| kind.show_location(l)).collect();
    out.sort();
    out.dedup();
    out
}

/// What of a container's live contents this state does not manage: not a managed object in
/// it, not inside one (that one's business), not a folder on the way to one.
pub(super) fn unmanaged<'a>(
    listing: Vec<Location>,
    container: &Location,
    managed: impl Iterator<Item = &'a Location>,
) -> Vec<Location> {
    let within: Vec<&Location> = managed.filter(|m| inside(m, container)).collect();
    let mut out: Vec<Location> = listing
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

/// Compares what a container holds now with what the plan saw (both as shown); `Err` says
/// what is new. Something gone since the plan is no reason to stop: the delete takes less
/// than the plan listed, never more (an object deleted just before its container may take
/// some of what the container held along).
pub(super) fn check_unchanged(
    address: &str,
    seen: &[String],
    now: &[String],
) -> Result<(), ContentsError> {
    let new: Vec<String> = now.iter().filter(|l| !seen.contains(l)).cloned().collect();
    if new.is_empty() {
        return Ok(());
    }
    Err(ContentsError::NewSincePlan {
        address: address.to_string(),
        new,
    })
}

/// A container whose delete takes what it holds, to be listed.
struct Listed {
    /// Its index in the plan's changes, and its address.
    change: usize,
    address: String,
    kind: std::sync::Arc<dyn crate::provider::ResourceKind>,
    id: String,
    attrs: crate::value::Object,
    loc: Location,
}

impl Engine<'_> {
    /// Plans what deleting or replacing containers takes with them (see the module doc).
    /// Runs on the finished list of changes, before `--target` narrows it, so a targeted
    /// destroy of a container includes what lies in it.
    pub(super) async fn plan_containers(
        &self,
        plan: &mut Plan,
        specs: &[super::InstanceSpec],
        state: &StateDocument,
        parallelism: usize,
        diags: &mut Diagnostics,
    ) {
        let Placements { locations, under } = placements(self.registry, state);
        self.depend_on_containers(plan, &locations, under);
        let taken_along = self.taken_along(plan, state);
        let to_list = self.plan_deletes_of_containers(plan, specs, state, &locations, diags);
        // What a listing may hold that this plan knows of: managed objects, and what the
        // deletes take along.
        let known: Vec<&Location> = locations.values().chain(&taken_along).collect();
        self.list_contents(plan, state, to_list, &known, parallelism, diags)
            .await;
    }

    /// Containment is a dependency: what lies inside is created after its container and
    /// deleted before it, and a targeted destroy of the container takes it along. Where
    /// objects are now (`locations`, from state, and `under`, what they lie under) and where
    /// they will be (the plan's `after`) both count.
    fn depend_on_containers(
        &self,
        plan: &mut Plan,
        locations: &Locations,
        mut lies_under: Vec<(InstanceAddr, Location)>,
    ) {
        let mut placed: Vec<(InstanceAddr, Location)> = locations
            .iter()
            .map(|(a, l)| (a.clone(), l.clone()))
            .collect();
        for c in &plan.changes {
            if let (Some(kind), Some(after)) =
                (self.registry_for(&c.provider).kind(c.type_name()), &c.after)
            {
                if let Some(loc) = kind.location(&after.0) {
                    placed.push((c.addr.clone(), loc));
                }
                for loc in kind.lies_under(&after.0) {
                    lies_under.push((c.addr.clone(), loc));
                }
            }
        }
        // What is placed at each location, and each address's locations: an object's
        // containers are the objects placed at the ancestors of its locations, and at the
        // locations it lies under or their ancestors.
        let mut at: HashMap<&Location, Vec<usize>> = HashMap::new();
        let mut of: HashMap<&InstanceAddr, Vec<&Location>> = HashMap::new();
        let mut beneath: HashMap<&InstanceAddr, Vec<&Location>> = HashMap::new();
        for (i, (a, l)) in placed.iter().enumerate() {
            at.entry(l).or_default().push(i);
            of.entry(a).or_default().push(l);
        }
        for (a, l) in &lies_under {
            beneath.entry(a).or_default().push(l);
        }
        for c in plan.changes.iter_mut() {
            let mine = of.get(&c.addr).map_or(&[][..], Vec::as_slice);
            let below = beneath.get(&c.addr).map_or(&[][..], Vec::as_slice);
            if mine.is_empty() && below.is_empty() {
                continue;
            }
            // In the order they were placed, as the dependencies have always been listed.
            let mut containers: Vec<usize> = mine
                .iter()
                .flat_map(|l| l.ancestors())
                .chain(
                    below
                        .iter()
                        .flat_map(|l| l.ancestors().chain([(*l).clone()])),
                )
                .filter_map(|ancestor| at.get(&ancestor))
                .flatten()
                .copied()
                .collect();
            containers.sort_unstable();
            containers.dedup();
            for i in containers {
                // The container's resource as a whole, as dependencies name resources.
                let dep = placed[i].0.resource.instance(None);
                if dep.resource != *c.resource() && !c.dependencies.contains(&dep) {
                    c.dependencies.push(dep);
                }
            }
        }
    }

    /// What the deletes of this plan remove besides their own objects.
    fn taken_along(&self, plan: &Plan, state: &StateDocument) -> Vec<Location> {
        plan.changes
            .iter()
            .filter(|c| c.action == Action::Delete || c.action.is_replace())
            .filter_map(|c| {
                let kind = self
                    .registry_for(&c.provider)
                    .kind(c.type_name())
                    .filter(|k| k.may_take_along())?;
                let r = state.get(&c.addr)?;
                Some(kind.takes_along(&r.id, &merged_from(r, kind.schema())))
            })
            .flatten()
            .collect()
    }

    /// Plans the managed instances inside each container the plan deletes or replaces, and
    /// names them in the change of a container whose delete takes what it holds; those
    /// containers are returned, to be listed for what this state does not manage.
    fn plan_deletes_of_containers(
        &self,
        plan: &mut Plan,
        specs: &[super::InstanceSpec],
        state: &StateDocument,
        locations: &Locations,
        diags: &mut Diagnostics,
    ) -> Vec<Listed> {
        let mut to_list: Vec<Listed> = Vec::new();
        for i in 0..plan.changes.len() {
            let c = &plan.changes[i];
            if !(c.action == Action::Delete || c.action.is_replace()) {
                continue;
            }
            let Some(kind) = self.registry_for(&c.provider).kind(c.type_name()).cloned() else {
                continue;
            };
            let (Some(r), Some(loc)) = (state.get(&c.addr), locations.get(&c.addr)) else {
                continue;
            };
            let (id, attrs) = (r.id.clone(), merged_from(r, kind.schema()));
            // A container replaced (for whatever reason: its diff, a trigger, `--replace`)
            // cannot keep what lies inside it, whether or not its delete takes contents: the
            // managed objects inside are replaced with it, or its delete would fail on them.
            let deletes_contents = kind.deletes_contents(&attrs);
            let replaced = c.action.is_replace();
            if !deletes_contents && !replaced {
                continue;
            }
            let container = c.addr.clone();
            let address = container.to_string();
            // In the order of their text, as the plan lists them.
            let mut managed: Vec<(String, &InstanceAddr)> = locations
                .iter()
                .filter(|(a, l)| **a != container && inside(l, loc))
                .map(|(a, _)| (a.to_string(), a))
                .collect();
            managed.sort();
            let fate = ContainerFate {
                container: &container,
                replaced,
                deletes_contents,
            };
            self.plan_inside(plan, specs, &managed, fate, diags);
            if !deletes_contents {
                continue;
            }
            plan.changes[i].contents = Some(Contents {
                managed: managed.into_iter().map(|(_, a)| a.clone()).collect(),
                unmanaged: None,
            });
            if !self.offline {
                to_list.push(Listed {
                    change: i,
                    address,
                    kind,
                    id,
                    attrs,
                    loc: loc.clone(),
                });
            }
        }
        to_list
    }

    /// The managed instances `managed` inside the container `address`, which the plan
    /// replaces or deletes with what it holds (`replaced`, `deletes_contents`): kept ones
    /// are replaced with a replaced container, and refused when its delete would take them.
    fn plan_inside(
        &self,
        plan: &mut Plan,
        specs: &[super::InstanceSpec],
        managed: &[(String, &InstanceAddr)],
        fate: ContainerFate<'_>,
        diags: &mut Diagnostics,
    ) {
        let ContainerFate {
            container,
            replaced,
            deletes_contents,
        } = fate;
        for (m, addr) in managed {
            let Some(at) = plan.changes.iter().position(|x| x.addr == **addr) else {
                continue;
            };
            let if_replaced = specs.get(at).and_then(|s| s.if_replaced.as_ref());
            let inner = &mut plan.changes[at];
            if inner.action == Action::Delete || inner.action.is_replace() {
                continue;
            }
            let address = container;
            if replaced && matches!(inner.action, Action::NoOp | Action::Update) {
                self.replace_with_container(inner, container, if_replaced);
                // Replaced with its container, it is destroyed as surely as on its own.
                if let Some(res) = self
                    .config
                    .resources
                    .get(inner.resource())
                    .filter(|res| res.lifecycle.prevent_destroy)
                {
                    diags.push(
                        crate::engine::planner::prevent_destroy_error(
                            &inner.addr,
                            res.span.clone(),
                        )
                        .hint(format!(
                            "{m} lies in {address}, which this plan replaces: keep {address} as it is, or lift prevent_destroy on {m}"
                        )),
                    );
                }
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
        known: &[&Location],
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
                    .min_by_key(|(_, o)| o.loc.depth())
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
            |(j, kind, ctx, id, attrs)| async move { (j, kind.contents(&ctx, &id, &attrs).await) },
        );
        // A listing whose task did not finish is a container whose contents are not known.
        let listings: HashMap<usize, Result<Vec<Location>, ProviderError>> =
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
                Some(Err(cause)) => {
                    let e = ContentsError::NotListed {
                        address: l.address.clone(),
                        cause,
                    };
                    diags.push(Diagnostic::error(e.to_string()));
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
    fn replace_with_container(
        &self,
        c: &mut crate::plan::ResourceChange,
        container: &InstanceAddr,
        if_replaced: Option<&crate::value::Object>,
    ) {
        c.action = Action::DeleteThenCreate;
        c.reason = Some(ActionReason::ReplaceBecauseContainerReplaced);
        c.container = Some(container.clone());
        // A new object: what the walk planned for it, were it replaced (its configuration
        // and the service's defaults, not what the old one had been given outside
        // brickform; unknown what the service assigns).
        if let Some(planned) = if_replaced {
            c.after = Some(crate::plan::SerObject(planned.clone()));
            return;
        }
        // Not planned so (a kind that did not say where its object lies from its
        // configuration): at least what the service assigns is known after apply, and so
        // is what it assigned the old object where the configuration may have left it to
        // the service (a storage location the service chose).
        if let (Some(kind), Some(after)) = (
            self.registry_for(&c.provider).kind(c.type_name()),
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

/// What the plan does to a container: replaces it, deletes what it holds with it, or both.
struct ContainerFate<'a> {
    container: &'a InstanceAddr,
    replaced: bool,
    deletes_contents: bool,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A location in the namespace `uc`, from `/`-separated steps.
    fn at(path: &str) -> Location {
        Location::new("uc", path.split('/'))
    }

    #[test]
    fn containment_and_unmanaged_contents() {
        assert!(inside(&at("c/s"), &at("c")));
        assert!(!inside(&at("cat"), &at("c")));
        assert!(!inside(&at("c"), &at("c")));
        let managed = [at("c"), at("c/s/v/in/data.csv"), at("c/s/v/conf")];
        let listing = vec![
            at("c/s/v"),
            at("c/s/v/in"),
            at("c/s/v/in/data.csv"),
            at("c/s/v/in/other.csv"),
            at("c/s/v/conf/onboarding.json"),
            at("c/s/v/notes.txt"),
        ];
        assert_eq!(
            unmanaged(listing, &at("c/s/v"), managed.iter()),
            [at("c/s/v/in/other.csv"), at("c/s/v/notes.txt")]
        );
        assert!(check_unchanged("v", &["a".into()], &["a".into()]).is_ok());
        let e = check_unchanged("v", &["a".into()], &["a".into(), "b".into()])
            .unwrap_err()
            .to_string();
        assert!(e.contains("1 new since the plan (b)"), "{e}");
        // Less than the plan listed is deleted: nothing the plan did not name.
        assert!(check_unchanged("v", &["a".into(), "b".into()], &["b".into()]).is_ok());
    }

    #[test]
    fn a_long_list_of_new_contents_names_five() {
        let now: Vec<String> = (0..8).map(|i| format!("f{i}")).collect();
        let e = check_unchanged("v", &[], &now).unwrap_err().to_string();
        assert!(
            e.starts_with("v was not deleted: it holds 8 new since the plan (f0, f1, f2, f3, f4 and 3 more), which"),
            "{e}"
        );
    }
}
