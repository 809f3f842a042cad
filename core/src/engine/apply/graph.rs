//! The graph of instances that do something. A replacement is two nodes, its delete and its
//! create, so a parent replaced together with its children can be deleted after them and
//! created before them. Nodes are added in plan order, the delete of a replacement before
//! its create, which is the order ready nodes start in.

use crate::dag::{Dag, NodeId};
use crate::plan::{Action, Mode, Plan, PlanMode, ResourceChange};
use indexmap::IndexMap;
use std::collections::{HashMap, HashSet};

/// Which part of a change a node carries out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(super) enum Part {
    Whole,
    /// The delete of a replacement.
    Delete,
    /// The create of a replacement.
    Create,
}

/// Each half of a replacement reports as what it does.
pub(super) fn shown_action(action: Action, part: Part) -> Action {
    match part {
        Part::Delete => Action::Delete,
        Part::Create => Action::Create,
        Part::Whole => action,
    }
}

/// The nodes of the walk: the index of the change in the plan, and the part it carries out.
pub(super) type Graph = Dag<(usize, Part), &'static str>;

/// A change's nodes: the one that takes its object away, the one that makes it.
type Parts = (Option<NodeId>, Option<NodeId>);

/// The graph of the plan's changes that do something, ordered by their dependencies.
pub(super) fn build(plan: &Plan) -> Graph {
    let mut g: Graph = Dag::new();
    let parts_of: Vec<Option<Parts>> = plan
        .changes
        .iter()
        .enumerate()
        .map(|(i, c)| runs(plan, c).then(|| add_parts(&mut g, i, c)))
        .collect();
    add_dependency_edges(&mut g, plan, &parts_of);
    g
}

/// The changes that would wait for each other in the order apply carries them out, one line
/// per cycle (`a → b (why) → a (why)`); a plan with any cannot be carried out.
pub(crate) fn cycles(plan: &Plan) -> Vec<String> {
    let g = build(plan);
    g.cycles()
        .iter()
        .map(|c| {
            c.render(|n| {
                let (i, part) = g[n];
                let address = &plan.changes[i].address();
                match part {
                    Part::Whole => address.clone(),
                    Part::Delete => format!("{address} (its delete)"),
                    Part::Create => format!("{address} (its create)"),
                }
            })
        })
        .collect()
}

/// Whether a change has a node.
fn runs(plan: &Plan, c: &ResourceChange) -> bool {
    // An import whose object already matches is a no-op that still must run: it
    // records the object in state.
    // Unchanged instances are skipped, except those holding sensitive values: the
    // plan does not carry them, so the configuration is evaluated again to give
    // references (outputs, other resources) the real values.
    // A destroy evaluates nothing: what stays needs no values, and the objects it
    // would read may be the ones going.
    !(c.action == Action::NoOp
        && c.importing.is_none()
        && (c.mode() != Mode::Managed
            || c.sensitive_paths.is_empty()
            || plan.mode == PlanMode::Destroy))
}

/// Adds the nodes of change `i`: two for a replacement, in the order it does them.
fn add_parts(g: &mut Graph, i: usize, c: &ResourceChange) -> Parts {
    match c.action {
        Action::DeleteThenCreate => {
            let d = g.add_node((i, Part::Delete));
            let k = g.add_node((i, Part::Create));
            g.add_edge(d, k, "replacement order");
            (Some(d), Some(k))
        }
        Action::CreateThenDelete => {
            let d = g.add_node((i, Part::Delete));
            let k = g.add_node((i, Part::Create));
            g.add_edge(k, d, "replacement order");
            (Some(d), Some(k))
        }
        Action::Delete | Action::Forget => (Some(g.add_node((i, Part::Whole))), None),
        _ => (None, Some(g.add_node((i, Part::Whole)))),
    }
}

/// How one node waits for another because of a dependency.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Wait {
    /// The new object is made after what it depends on is made.
    MadeAfter,
    /// The old object goes before what it depended on goes.
    DeletedBefore,
    /// An object that goes (and is not made again) goes before what it depended on changes.
    GoneBefore,
}

impl Wait {
    fn label(self) -> &'static str {
        match self {
            Wait::MadeAfter => "made after its dependency",
            Wait::DeletedBefore => "deleted before its dependency",
            Wait::GoneBefore => "gone before its dependency changes",
        }
    }
}

/// The nodes that wait, by the kind of wait and the resource they wait on.
type Waits<'p> =
    IndexMap<(Wait, &'p crate::addrs::ResourceAddr), Vec<NodeId>, foldhash::fast::RandomState>;

/// `node` (if the change has one) waits, in the way `wait` says, on each resource `deps` names.
fn wait_for<'p>(
    waits: &mut Waits<'p>,
    wait: Wait,
    deps: &'p [crate::addrs::InstanceAddr],
    node: Option<NodeId>,
) {
    let Some(node) = node else { return };
    for r in deps.iter().filter_map(|d| d.whole()) {
        waits.entry((wait, r)).or_default().push(node);
    }
}

/// What a change's old object depended on: for a replacement, what it depended on when it
/// was made (the configuration may name new dependencies, which its old object never
/// needed).
fn old_dependencies(c: &ResourceChange) -> &[crate::addrs::InstanceAddr] {
    c.replaced_dependencies
        .as_deref()
        .unwrap_or(&c.dependencies)
}

/// The resources whose going objects wait for a create-first replacement: what the old
/// object of such a replacement depended on, and, going, what those depended on in turn.
/// Such an object goes after the replacement's old object, which goes after its new one is
/// made — after what it depends on has changed; so it cannot also go before what it
/// depended on changes (the order for a plain delete), or the plan has no order at all.
/// It goes in the create-first order instead, as Terraform orders the delete of a
/// dependency of a create_before_destroy resource.
fn deleted_in_create_first_order(plan: &Plan) -> HashSet<&crate::addrs::ResourceAddr> {
    fn old_deps(c: &ResourceChange) -> impl Iterator<Item = &crate::addrs::ResourceAddr> {
        old_dependencies(c).iter().filter_map(|d| d.whole())
    }
    let mut deletes: HashMap<&crate::addrs::ResourceAddr, Vec<&ResourceChange>> = HashMap::new();
    for c in plan.changes.iter().filter(|c| c.action == Action::Delete) {
        deletes.entry(c.resource()).or_default().push(c);
    }
    let mut needed: HashSet<&crate::addrs::ResourceAddr> = HashSet::new();
    let mut next: Vec<&crate::addrs::ResourceAddr> = plan
        .changes
        .iter()
        .filter(|c| c.action == Action::CreateThenDelete)
        .flat_map(old_deps)
        .collect();
    // Each resource is followed once, through the deletes of its instances.
    while let Some(r) = next.pop() {
        if needed.insert(r) {
            next.extend(
                deletes
                    .get(r)
                    .into_iter()
                    .flatten()
                    .flat_map(|c| old_deps(c)),
            );
        }
    }
    needed
}

/// Orders the nodes by what each change depends on.
/// `parts_of` holds the nodes of each change, by its index in the plan.
///
/// A dependency names a resource as a whole, so each kind of wait joins every instance on
/// one side to every instance of the resource on the other: it is added once per resource
/// and kind, as all of one set before any of the other (see `Dag::add_edges_between`), not
/// once per pair of instances — a block of 200 instances that depends on one of 100 is
/// 300 edges, not 20,000.
fn add_dependency_edges(g: &mut Graph, plan: &Plan, parts_of: &[Option<Parts>]) {
    // The dependents' side of each wait, in plan order; the other side is the instances
    // of the resource depended on.
    let mut waits: Waits = IndexMap::default();
    let after_replacements = deleted_in_create_first_order(plan);
    for (i, c) in plan.changes.iter().enumerate() {
        let Some(&Some((del_i, make_i))) = parts_of.get(i) else {
            continue;
        };
        wait_for(&mut waits, Wait::MadeAfter, &c.dependencies, make_i);
        // The old object goes before what it depended on goes or changes.
        let old_deps = old_dependencies(c);
        wait_for(&mut waits, Wait::DeletedBefore, old_deps, del_i);
        let gone = del_i.filter(|_| make_i.is_none() && !after_replacements.contains(c.resource()));
        wait_for(&mut waits, Wait::GoneBefore, old_deps, gone);
    }
    let by_resource: HashMap<&crate::addrs::ResourceAddr, Vec<Parts>, foldhash::fast::RandomState> =
        plan.changes
            .iter()
            .zip(parts_of)
            .filter_map(|(c, p)| Some((c, (*p)?)))
            .fold(HashMap::default(), |mut m, (c, p)| {
                m.entry(c.resource()).or_default().push(p);
                m
            });
    for ((wait, r), dependents) in waits {
        let Some(instances) = by_resource.get(r) else {
            continue;
        };
        let label = wait.label();
        match wait {
            Wait::MadeAfter => {
                let made: Vec<NodeId> = instances.iter().filter_map(|p| p.1).collect();
                g.add_edges_between(&made, &dependents, label);
            }
            Wait::DeletedBefore => {
                let deleted: Vec<NodeId> = instances.iter().filter_map(|p| p.0).collect();
                g.add_edges_between(&dependents, &deleted, label);
            }
            Wait::GoneBefore => {
                // A node that changes nothing (an unchanged instance evaluated again for
                // its sensitive values) need not be waited for, and waiting would close a
                // cycle through a create-first replacement that depends on both.
                let changed: Vec<NodeId> = instances
                    .iter()
                    .filter_map(|p| p.1)
                    .filter(|&n| plan.changes[g[n].0].action != Action::NoOp)
                    .collect();
                g.add_edges_between(&dependents, &changed, label);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn change(name: &str, action: Action, deps: &[&str]) -> ResourceChange {
        let mut c = ResourceChange::bare("t", name, "test", action);
        c.dependencies = deps
            .iter()
            .map(|d| crate::addrs::InstanceAddr::parse(d).unwrap())
            .collect();
        c
    }

    /// The nodes of `g` as `NAME/PART`, each with what it waits for.
    fn shape(g: &Graph, plan: &Plan) -> Vec<(String, Vec<String>)> {
        let name = |n: NodeId| {
            let (i, part) = g[n];
            format!("{}/{part:?}", plan.changes[i].name())
        };
        g.nodes()
            .map(|n| {
                let mut deps: Vec<String> = g.dependencies(n).into_iter().map(name).collect();
                deps.sort();
                (name(n), deps)
            })
            .collect()
    }

    fn strs(pairs: &[(&str, &[&str])]) -> Vec<(String, Vec<String>)> {
        pairs
            .iter()
            .map(|(n, d)| (n.to_string(), d.iter().map(|s| s.to_string()).collect()))
            .collect()
    }

    #[test]
    fn what_goes_need_not_wait_for_an_unchanged_dependency_evaluated_again() {
        // `old` (going) depended on `base`, which changes nothing but is evaluated again for
        // its sensitive values.
        let mut base = change("base", Action::NoOp, &[]);
        base.sensitive_paths = vec![vec![crate::value::PathStep::Key("s".into())]];
        let plan = Plan {
            changes: vec![base, change("old", Action::Delete, &["t.base"])],
            ..Plan::default()
        };
        let expected: &[(&str, &[&str])] = &[("base/Whole", &[]), ("old/Whole", &[])];
        assert_eq!(shape(&build(&plan), &plan), strs(expected));
        // A real change still waits for the delete.
        let mut changed = plan.clone();
        changed.changes[0].action = Action::Update;
        let expected: &[(&str, &[&str])] = &[("base/Whole", &["old/Whole"]), ("old/Whole", &[])];
        assert_eq!(shape(&build(&changed), &changed), strs(expected));
        // Beside a create-first replacement that depends on both, whose old object goes
        // before `old`: `old` goes last, after `base` changes and the replacement is done.
        let mut beside = changed.clone();
        beside.changes.insert(
            1,
            change("new", Action::CreateThenDelete, &["t.base", "t.old"]),
        );
        assert_eq!(cycles(&beside), Vec::<String>::new());
        let expected: &[(&str, &[&str])] = &[
            ("base/Whole", &[]),
            ("new/Delete", &["new/Create"]),
            ("new/Create", &["base/Whole"]),
            ("old/Whole", &["new/Delete"]),
        ];
        assert_eq!(shape(&build(&beside), &beside), strs(expected));
    }

    #[test]
    fn a_replaced_object_goes_in_the_order_of_what_it_depended_on_not_what_its_successor_will() {
        // `new` is replaced create-first; its configuration now names `gone` (which goes,
        // and depended on `base`, which changes), its old object named only `base`.
        let mut new = change("new", Action::CreateThenDelete, &["t.base", "t.gone"]);
        new.replaced_dependencies =
            Some(vec![crate::addrs::InstanceAddr::parse("t.base").unwrap()]);
        let plan = Plan {
            changes: vec![
                change("base", Action::Update, &[]),
                new,
                change("gone", Action::Delete, &["t.base"]),
            ],
            ..Plan::default()
        };
        assert_eq!(cycles(&plan), Vec::<String>::new());
        let g = build(&plan);
        let expected: &[(&str, &[&str])] = &[
            ("base/Whole", &["gone/Whole"]),
            ("new/Delete", &["new/Create"]),
            ("new/Create", &["base/Whole"]),
            ("gone/Whole", &[]),
        ];
        assert_eq!(shape(&g, &plan), strs(expected));
        // A plan saved before the old object's dependencies were recorded orders by the
        // configuration's: the old object goes before `gone`, which then goes in the
        // create-first order (after `base` changes).
        let mut saved = plan.clone();
        saved.changes[1].replaced_dependencies = None;
        let expected: &[(&str, &[&str])] = &[
            ("base/Whole", &[]),
            ("new/Delete", &["new/Create"]),
            ("new/Create", &["base/Whole"]),
            ("gone/Whole", &["new/Delete"]),
        ];
        assert_eq!(shape(&build(&saved), &saved), strs(expected));
    }

    #[test]
    fn a_block_that_depends_on_a_block_waits_for_every_instance_through_few_edges() {
        let keyed = |name: &str, k: usize, action: Action, deps: &[&str]| {
            let mut c = change(name, action, deps);
            c.addr = crate::addrs::InstanceAddr::parse(&format!("t.{name}[{k}]")).unwrap();
            c
        };
        // 30 instances of `p` change; 40 of `c` are made after them; 20 of `old`, which
        // depended on `p`, go before it changes.
        let mut changes: Vec<_> = (0..30)
            .map(|k| keyed("p", k, Action::Update, &[]))
            .collect();
        changes.extend((0..40).map(|k| keyed("c", k, Action::Create, &["t.p"])));
        changes.extend((0..20).map(|k| keyed("old", k, Action::Delete, &["t.p"])));
        let plan = Plan {
            changes,
            ..Plan::default()
        };
        let g = build(&plan);
        let of = |range: std::ops::Range<usize>| -> Vec<NodeId> {
            g.nodes().filter(|&n| range.contains(&g[n].0)).collect()
        };
        let (p, c, old) = (of(0..30), of(30..70), of(70..90));
        assert!(c.iter().all(|&n| g.dependencies(n) == p));
        assert!(p.iter().all(|&n| g.dependencies(n) == old));
        assert!(old.iter().all(|&n| g.dependencies(n).is_empty()));
        // An edge for each instance on each side of the two waits, not one for each pair
        // (30 × 40 + 20 × 30).
        assert_eq!(g.edge_count(), (30 + 40) + (20 + 30));
        assert_eq!(cycles(&plan), Vec::<String>::new());
    }

    #[test]
    fn what_a_create_first_replacement_needed_goes_after_its_own_dependencies_change() {
        // `r3` is replaced create-first: its new object is made after `r1` changes, its
        // old one depended on `r2`, which goes and depended on `r1`. `r2` goes after `r3`'s
        // old object, not before `r1` changes (which would be a cycle).
        let mut r3 = change("r3", Action::CreateThenDelete, &["t.r1"]);
        r3.replaced_dependencies = Some(vec![crate::addrs::InstanceAddr::parse("t.r2").unwrap()]);
        let plan = Plan {
            changes: vec![
                change("r1", Action::Update, &[]),
                change("r2", Action::Delete, &["t.r1"]),
                r3,
            ],
            ..Plan::default()
        };
        assert_eq!(cycles(&plan), Vec::<String>::new());
        let expected: &[(&str, &[&str])] = &[
            ("r1/Whole", &[]),
            ("r2/Whole", &["r3/Delete"]),
            ("r3/Delete", &["r3/Create"]),
            ("r3/Create", &["r1/Whole"]),
        ];
        assert_eq!(shape(&build(&plan), &plan), strs(expected));
        // A plain delete still goes before what it depended on changes.
        let plain = Plan {
            changes: plan.changes[..2].to_vec(),
            ..Plan::default()
        };
        let expected: &[(&str, &[&str])] = &[("r1/Whole", &["r2/Whole"]), ("r2/Whole", &[])];
        assert_eq!(shape(&build(&plain), &plain), strs(expected));
    }

    #[test]
    fn a_chain_of_deletes_under_a_create_first_replacement_goes_in_its_order() {
        // As above, one level deeper: `r3`'s old object depended on `r2`, which goes and
        // depended on `r4`, which goes too and depended on `r1`, which changes. `r4` goes
        // after `r2`, so it cannot go before `r1` changes either.
        let mut r3 = change("r3", Action::CreateThenDelete, &["t.r1"]);
        r3.replaced_dependencies = Some(vec![crate::addrs::InstanceAddr::parse("t.r2").unwrap()]);
        let plan = Plan {
            changes: vec![
                change("r1", Action::Update, &[]),
                change("r2", Action::Delete, &["t.r4"]),
                r3,
                change("r4", Action::Delete, &["t.r1"]),
            ],
            ..Plan::default()
        };
        assert_eq!(cycles(&plan), Vec::<String>::new());
        let expected: &[(&str, &[&str])] = &[
            ("r1/Whole", &[]),
            ("r2/Whole", &["r3/Delete"]),
            ("r3/Delete", &["r3/Create"]),
            ("r3/Create", &["r1/Whole"]),
            ("r4/Whole", &["r2/Whole"]),
        ];
        assert_eq!(shape(&build(&plan), &plan), strs(expected));
    }

    #[test]
    fn a_replacement_is_two_nodes_in_the_order_it_replaces() {
        let plan = Plan {
            changes: vec![
                change("first", Action::DeleteThenCreate, &[]),
                change("second", Action::CreateThenDelete, &[]),
            ],
            ..Plan::default()
        };
        let g = build(&plan);
        let expected: &[(&str, &[&str])] = &[
            ("first/Delete", &[]),
            ("first/Create", &["first/Delete"]),
            ("second/Delete", &["second/Create"]),
            ("second/Create", &[]),
        ];
        assert_eq!(shape(&g, &plan), strs(expected));
    }

    #[test]
    fn dependencies_are_made_first_and_deleted_last_and_unchanged_instances_skipped() {
        let mut quiet = change("quiet", Action::NoOp, &[]);
        quiet.sensitive_paths = Vec::new();
        let mut secret = change("secret", Action::NoOp, &[]);
        secret.sensitive_paths = vec![vec![crate::value::PathStep::Key("s".into())]];
        let plan = Plan {
            changes: vec![
                change("parent", Action::Create, &[]),
                change("child", Action::Update, &["t.parent"]),
                change("old_parent", Action::Delete, &[]),
                change("old_child", Action::Delete, &["t.old_parent", "t.parent"]),
                quiet,
                secret,
            ],
            ..Plan::default()
        };
        let g = build(&plan);
        let expected: &[(&str, &[&str])] = &[
            // `old_child` goes before what it depends on changes.
            ("parent/Whole", &["old_child/Whole"]),
            ("child/Whole", &["parent/Whole"]),
            ("old_parent/Whole", &["old_child/Whole"]),
            ("old_child/Whole", &[]),
            ("secret/Whole", &[]),
        ];
        assert_eq!(shape(&g, &plan), strs(expected));
    }
}
