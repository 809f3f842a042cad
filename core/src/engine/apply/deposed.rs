//! The delete of a deposed object: one a create-first replacement put aside, kept in state
//! under the address its replacement now holds, until its delete is recorded. It is deleted
//! by its own id; the log's result tells it from the replacement by that id, and drops
//! only it.

use super::error::NodeError;
use super::{Step, delete};

/// Deletes the deposed object the step's change names.
pub(super) async fn run(step: &Step<'_>) -> Result<Option<String>, NodeError> {
    let old = step.id()?;
    delete::object(step, old).await.map(|_| None)
}

#[cfg(test)]
mod tests {
    use super::run;
    use crate::engine::apply::Shared;
    use crate::engine::apply::graph::Part;
    use crate::engine::apply::testkit::*;
    use crate::plan::{Action, ResourceChange};

    /// State after a create-first replacement whose delete did not finish: the old object
    /// deposed, the new one at the address. The delete of the old one, and both ids.
    async fn deposed(kit: &Kit, shared: &Shared) -> (ResourceChange, String, String) {
        let old = kit.existing(shared, "a", "old").await;
        shared
            .doc
            .lock()
            .await
            .depose(&crate::addrs::InstanceAddr::parse("test_thing.a").unwrap());
        let new = kit.existing(shared, "a", "first").await;
        let mut change = kit.change_of("a", Action::Delete, &old);
        change.deposed = true;
        (change, old, new)
    }

    #[tokio::test]
    async fn a_deposed_delete_removes_the_old_object_and_keeps_its_replacement() {
        let kit = Kit::new();
        let shared = kit.shared().await;
        let (change, old, new) = deposed(&kit, &shared).await;
        let node = kit.node(change, Part::Whole);
        assert_eq!(run(&node.step(&shared)).await.unwrap(), None);
        assert_eq!(kit.svc.object(&old), None);
        assert!(kit.svc.object(&new).is_some());
        assert!(deposed_ids(&shared).await.is_empty());
        assert_eq!(state_id(&shared, "test_thing.a").await, Some(new));
        assert_eq!(kit.log(&shared).await, ["intent delete id-1", "deleted"]);
    }

    #[tokio::test]
    async fn a_refused_deposed_delete_is_logged_as_failed_and_keeps_it_deposed() {
        let kit = Kit::new();
        let shared = kit.shared().await;
        let (change, old, new) = deposed(&kit, &shared).await;
        kit.svc.fail_next(Op::Delete, Fault::Refuse);
        let node = kit.node(change, Part::Whole);
        let failed = failure(run(&node.step(&shared)).await);
        assert_eq!(failed.message, "the service refused the delete");
        assert_eq!(deposed_ids(&shared).await, [old]);
        assert_eq!(state_id(&shared, "test_thing.a").await, Some(new));
        assert_eq!(
            kit.log(&shared).await,
            [
                "intent delete id-1",
                "failed: the service refused the delete"
            ]
        );
    }

    #[tokio::test]
    async fn a_deposed_delete_whose_answer_was_lost_counts_as_done_when_it_is_gone() {
        let kit = Kit::new();
        let shared = kit.shared().await;
        let (change, _, new) = deposed(&kit, &shared).await;
        kit.svc.fail_next(Op::Delete, Fault::LoseAnswer);
        let node = kit.node(change, Part::Whole);
        assert_eq!(run(&node.step(&shared)).await.unwrap(), None);
        assert!(deposed_ids(&shared).await.is_empty());
        assert_eq!(state_id(&shared, "test_thing.a").await, Some(new));
        assert_eq!(kit.log(&shared).await, ["intent delete id-1", "deleted"]);
    }
}
