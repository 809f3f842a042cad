//! Delete: the object goes, and its entry with it. A container's delete takes what lies in
//! it, so it goes only when that is what the plan listed; a delete whose answer was lost
//! counts as done when the object is gone.

use super::Step;
use super::error::{EngineFailure, NodeError};
use crate::engine::containers;
use brickform_state::{Outcome as WalOutcome, WalOp};

/// Deletes the object of the step's change.
pub(super) async fn run(step: &Step<'_>) -> Result<Option<String>, NodeError> {
    let id = step.id()?;
    object(step, id).await.map(|_| None)
}

/// Deletes the object `id`, logged; the log's result removes it from state.
pub(super) async fn object(step: &Step<'_>, id: String) -> Result<(), NodeError> {
    contents_unchanged(step, &id).await?;
    let seq = step.intent(WalOp::Delete, Some(id.clone())).await?;
    let answer = step.delete(&id).await;
    match step.gone_after_lost_delete(&id, answer).await {
        Ok(()) => step.close(seq, WalOutcome::Deleted {}).await,
        Err(e) => step.failed(seq, e).await,
    }
}

/// A container's delete takes what lies in it: only what the plan named. Refuses, before
/// anything is logged, when it holds something the plan did not see.
async fn contents_unchanged(step: &Step<'_>, id: &str) -> Result<(), NodeError> {
    let change = step.change;
    let (Some(seen), Some(loc)) = (
        change.contents.as_ref().and_then(|c| c.unmanaged.as_ref()),
        step.shared.locations.get(&change.addr),
    ) else {
        return Ok(());
    };
    let listing = step.contents(id).await.map_err(EngineFailure::NotListed)?;
    let now = containers::shown(
        step.kind,
        containers::unmanaged(listing, loc, step.shared.locations.values()),
    );
    containers::check_unchanged(&change.address(), seen, &now).map_err(EngineFailure::from)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::run;
    use crate::engine::apply::graph::Part;
    use crate::engine::apply::testkit::*;
    use crate::location::Location;
    use crate::plan::{Action, Contents};

    #[tokio::test]
    async fn a_delete_removes_the_object_and_its_entry() {
        let kit = Kit::new();
        let shared = kit.shared().await;
        let id = kit.existing(&shared, "a", "old").await;
        let node = kit.node(kit.change_of("a", Action::Delete, &id), Part::Whole);
        assert_eq!(run(&node.step(&shared)).await.unwrap(), None);
        assert_eq!(kit.svc.object(&id), None);
        assert_eq!(state_id(&shared, "test_thing.a").await, None);
        assert_eq!(kit.log(&shared).await, ["intent delete id-1", "deleted"]);
    }

    #[tokio::test]
    async fn a_refused_delete_is_logged_as_failed_and_the_entry_stays() {
        let kit = Kit::new();
        let shared = kit.shared().await;
        let id = kit.existing(&shared, "a", "old").await;
        kit.svc.fail_next(Op::Delete, Fault::Refuse);
        let node = kit.node(kit.change_of("a", Action::Delete, &id), Part::Whole);
        let failed = failure(run(&node.step(&shared)).await);
        assert_eq!(failed.message, "the service refused the delete");
        assert!(kit.svc.object(&id).is_some());
        assert_eq!(state_id(&shared, "test_thing.a").await, Some(id));
        assert_eq!(
            kit.log(&shared).await,
            [
                "intent delete id-1",
                "failed: the service refused the delete"
            ]
        );
    }

    #[tokio::test]
    async fn a_delete_whose_answer_was_lost_counts_as_done_when_the_object_is_gone() {
        let kit = Kit::new();
        let shared = kit.shared().await;
        let id = kit.existing(&shared, "a", "old").await;
        kit.svc.fail_next(Op::Delete, Fault::LoseAnswer);
        let node = kit.node(kit.change_of("a", Action::Delete, &id), Part::Whole);
        assert_eq!(run(&node.step(&shared)).await.unwrap(), None);
        assert_eq!(kit.svc.calls(), [Op::Delete, Op::Read]);
        assert_eq!(state_id(&shared, "test_thing.a").await, None);
        assert_eq!(kit.log(&shared).await, ["intent delete id-1", "deleted"]);
    }

    #[tokio::test]
    async fn a_delete_whose_answer_was_lost_fails_when_the_object_is_still_there() {
        let kit = Kit::new();
        let shared = kit.shared().await;
        let id = kit.existing(&shared, "a", "old").await;
        kit.svc.fail_next(Op::Delete, Fault::LoseRequest);
        let node = kit.node(kit.change_of("a", Action::Delete, &id), Part::Whole);
        let failed = failure(run(&node.step(&shared)).await);
        assert_eq!(failed.message, "no answer to the delete");
        assert_eq!(state_id(&shared, "test_thing.a").await, Some(id));
        assert_eq!(
            kit.log(&shared).await,
            ["intent delete id-1", "failed: no answer to the delete"]
        );
    }

    #[tokio::test]
    async fn a_container_holding_something_new_since_the_plan_is_not_deleted() {
        let kit = Kit::new();
        let mut shared = kit.shared().await;
        let id = kit.existing(&shared, "a", "old").await;
        shared.locations.insert(
            crate::addrs::InstanceAddr::parse("test_thing.a").unwrap(),
            Location::new("", ["a"]),
        );
        kit.svc.set_contents(&[&["a", "seen"], &["a", "new"]]);
        let mut change = kit.change_of("a", Action::Delete, &id);
        change.contents = Some(Contents {
            managed: Vec::new(),
            unmanaged: Some(vec!["/a/seen".into()]),
        });
        let node = kit.node(change, Part::Whole);
        let failed = failure(run(&node.step(&shared)).await);
        assert!(
            failed.contains("it holds 1 new since the plan (/a/new)"),
            "{failed}"
        );
        assert!(kit.svc.calls().is_empty());
        assert!(kit.svc.object(&id).is_some());
        assert!(kit.log(&shared).await.is_empty());
    }
}
