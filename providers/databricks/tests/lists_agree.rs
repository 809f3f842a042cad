//! The provider and the local workspace each keep their own copy of the service's lists:
//! the provider validates a configuration against its copy before anything is sent, the
//! local workspace refuses what the service refuses. Kept apart on purpose (the local
//! workspace stands for the service, not for brickform), they must still say the same: a
//! type or privilege only the provider knows passes validate and then fails every apply,
//! one only the local workspace knows is refused by validate although the service takes it.

use brickform_databricks::resources::{connection, privileges};
use std::collections::BTreeSet;

fn set(items: &[&'static str]) -> BTreeSet<&'static str> {
    items.iter().copied().collect()
}

#[test]
fn connection_types_agree() {
    let provider = set(connection::CONNECTION_TYPES);
    let workspace = set(brickform_emulator::CONNECTION_TYPES);
    assert_eq!(
        provider.difference(&workspace).collect::<Vec<_>>(),
        Vec::<&&str>::new(),
        "connection types only the provider knows"
    );
    assert_eq!(
        workspace.difference(&provider).collect::<Vec<_>>(),
        Vec::<&&str>::new(),
        "connection types only the local workspace knows"
    );
}

#[test]
fn privileges_per_securable_agree() {
    let workspace: Vec<(&str, &[&str])> = brickform_emulator::grantable_privileges().collect();
    for target in privileges::TARGETS {
        // One securable type may stand for several kinds of object (`function`: functions
        // and registered models), each with its privileges: one of them must agree.
        let theirs: Vec<BTreeSet<&str>> = workspace
            .iter()
            .filter(|(t, _)| *t == target.api)
            .map(|(_, p)| set(p))
            .collect();
        assert!(
            !theirs.is_empty(),
            "the local workspace has no grants on {}",
            target.api
        );
        let ours: BTreeSet<&str> = target
            .privileges
            .iter()
            .chain(target.inherited)
            .copied()
            .collect();
        assert!(
            theirs.contains(&ours),
            "privileges on a {} ({}): ours {ours:?}, the local workspace's {theirs:?}",
            target.label,
            target.api
        );
    }
}
