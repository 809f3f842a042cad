//! Forget: the entry leaves state and the object lives on. Nothing is called; the intent
//! and its result are logged all the same, so the removal survives a crash before the
//! state is saved.

use super::Step;
use super::error::NodeError;
use brickform_state::{Outcome as WalOutcome, WalOp};

/// Forgets the object of the step's change.
pub(super) async fn run(step: &Step<'_>) -> Result<Option<String>, NodeError> {
    let seq = step.intent(WalOp::Forget, step.change.id.clone()).await?;
    step.close(seq, WalOutcome::Forgotten {}).await?;
    Ok(None)
}

#[cfg(test)]
mod tests {
    use super::run;
    use crate::engine::apply::graph::Part;
    use crate::engine::apply::testkit::*;
    use crate::plan::Action;

    #[tokio::test]
    async fn a_forget_drops_the_entry_and_leaves_the_object() {
        let kit = Kit::new();
        let shared = kit.shared().await;
        let id = kit.existing(&shared, "a", "old").await;
        let node = kit.node(kit.change_of("a", Action::Forget, &id), Part::Whole);
        assert_eq!(run(&node.step(&shared)).await.unwrap(), None);
        assert!(kit.svc.calls().is_empty());
        assert!(kit.svc.object(&id).is_some());
        assert_eq!(state_id(&shared, "test_thing.a").await, None);
        assert_eq!(kit.log(&shared).await, ["intent forget id-1", "forgotten"]);
    }

    #[tokio::test]
    async fn a_forget_of_a_deposed_object_drops_only_it() {
        let kit = Kit::new();
        let shared = kit.shared().await;
        let old = kit.existing(&shared, "a", "old").await;
        shared
            .doc
            .lock()
            .await
            .depose(&crate::addrs::InstanceAddr::parse("test_thing.a").unwrap());
        let new = kit.existing(&shared, "a", "first").await;
        let mut change = kit.change_of("a", Action::Forget, &old);
        change.deposed = true;
        let node = kit.node(change, Part::Whole);
        run(&node.step(&shared)).await.unwrap();
        assert!(deposed_ids(&shared).await.is_empty());
        assert_eq!(state_id(&shared, "test_thing.a").await, Some(new));
        assert_eq!(kit.log(&shared).await, ["intent forget id-1", "forgotten"]);
    }
}
