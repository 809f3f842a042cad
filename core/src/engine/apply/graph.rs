//! The graph of instances that do something. A replacement is two nodes, its delete and its
//! create, so a parent replaced together with its children can be deleted after them and
//! created before them. Nodes are added in plan order, the delete of a replacement before
//! its create, which is the order ready nodes start in.

use crate::dag::{Dag, NodeId};
use crate::plan::{Action, Mode, Plan, PlanMode, ResourceChange};
use std::collections::HashMap;

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

/// Orders the nodes by what each change depends on.
/// `parts_of` holds the nodes of each change, by its index in the plan.
fn add_dependency_edges(g: &mut Graph, plan: &Plan, parts_of: &[Option<Parts>]) {
    let by_base: HashMap<&crate::addrs::ResourceAddr, Vec<usize>, foldhash::fast::RandomState> =
        plan.changes
            .iter()
            .enumerate()
            .fold(HashMap::default(), |mut m, (i, c)| {
                m.entry(c.resource()).or_default().push(i);
                m
            });
    // The changes an instance's dependencies name.
    // A dependency names a resource as a whole (an address without a key).
    let named = |deps: &[crate::addrs::InstanceAddr]| -> Vec<usize> {
        deps.iter()
            .flat_map(|dep| {
                dep.whole()
                    .and_then(|r| by_base.get(r))
                    .map(Vec::as_slice)
                    .unwrap_or(&[])
            })
            .copied()
            .collect()
    };
    for (i, c) in plan.changes.iter().enumerate() {
        let Some(&Some((del_i, make_i))) = parts_of.get(i) else {
            continue;
        };
        // The new object is made after what it depends on is made.
        for j in named(&c.dependencies) {
            if let (Some(&Some((_, Some(a)))), Some(b)) = (parts_of.get(j), make_i) {
                g.add_edge(a, b, "made after its dependency");
            }
        }
        // The old object goes before what it depended on goes or changes: for a
        // replacement, what it depended on when it was made (the configuration may name
        // new dependencies, which its old object never needed).
        let old_deps = c
            .replaced_dependencies
            .as_deref()
            .unwrap_or(&c.dependencies);
        for j in named(old_deps) {
            let Some(&Some((del_j, make_j))) = parts_of.get(j) else {
                continue;
            };
            if let (Some(a), Some(b)) = (del_i, del_j) {
                g.add_edge(a, b, "deleted before its dependency");
            }
            // A node that changes nothing (an unchanged instance evaluated again for its
            // sensitive values) need not be waited for, and waiting would close a cycle
            // through a create-first replacement that depends on both.
            let changes = plan.changes[j].action != Action::NoOp;
            if let (Some(a), None, Some(b), true) = (del_i, make_i, make_j, changes) {
                g.add_edge(a, b, "gone before its dependency changes");
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
        // its sensitive values; `new` is replaced create-first and depends on both.
        let mut base = change("base", Action::NoOp, &[]);
        base.sensitive_paths = vec![vec![crate::value::PathStep::Key("s".into())]];
        let plan = Plan {
            changes: vec![
                base,
                change("new", Action::CreateThenDelete, &["t.base", "t.old"]),
                change("old", Action::Delete, &["t.base"]),
            ],
            ..Plan::default()
        };
        assert_eq!(cycles(&plan), Vec::<String>::new());
        let mut changed = plan.clone();
        changed.changes[0].action = Action::Update;
        assert_eq!(
            cycles(&changed).len(),
            1,
            "a real change still orders the delete"
        );
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
        // configuration's.
        let mut saved = plan.clone();
        saved.changes[1].replaced_dependencies = None;
        assert_eq!(cycles(&saved).len(), 1);
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
