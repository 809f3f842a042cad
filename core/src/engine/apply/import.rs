//! Import: an object that exists outside state is recorded in it. One that already matches
//! its configuration is read as it is (the plan's no-op that still must run); one that
//! differs is updated; either way the log records it as imported.

use super::Step;
use super::error::NodeError;
use super::update::write;
use crate::plan::Action;
use crate::provider::{ProviderError, ProviderResult, Remote};
use brickform_state::{Outcome as WalOutcome, WalOp};

/// Imports the object the step's change names; its id.
pub(super) async fn run(step: &Step<'_>) -> Result<Option<String>, NodeError> {
    let sent = step.evaluate()?;
    let id = step.id()?;
    let seq = step.intent(WalOp::Import, Some(id.clone())).await?;
    let answer = match step.change.action {
        Action::Update => write(step, &id, &sent.config).await,
        _ => read_back(step, &id).await,
    };
    step.settle(seq, answer, &sent, WalOutcome::Imported).await
}

/// The object as it is; gone is a failure (there is nothing to record).
pub(super) async fn read_back(step: &Step<'_>, id: &str) -> ProviderResult<Remote> {
    match step.read(id).await {
        Ok(Some(r)) => Ok(r),
        Ok(None) => Err(ProviderError::not_found(format!(
            "{} no longer exists",
            step.change.address()
        ))),
        Err(e) => Err(e),
    }
}

#[cfg(test)]
mod tests {
    use super::run;
    use crate::engine::apply::graph::Part;
    use crate::engine::apply::testkit::*;
    use crate::plan::{Action, ResourceChange};
    use crate::provider::ErrorKind;

    fn importing(kit: &Kit, action: Action, id: &str) -> ResourceChange {
        let mut change = kit.change_of("a", action, id);
        change.importing = Some(id.to_string());
        change
    }

    #[tokio::test]
    async fn an_import_of_a_matching_object_reads_it_and_records_it_as_imported() {
        let kit = Kit::new();
        let shared = kit.shared().await;
        let id = kit.outside("a", "first");
        let node = kit.node(importing(&kit, Action::NoOp, &id), Part::Whole);
        assert_eq!(run(&node.step(&shared)).await.unwrap(), Some(id.clone()));
        assert_eq!(kit.svc.calls(), [Op::Read]);
        assert_eq!(state_id(&shared, "test_thing.a").await, Some(id));
        assert_eq!(
            kit.log(&shared).await,
            ["intent import id-1", "imported id-1"]
        );
        assert!(world_value(&shared, "a", false).is_some());
    }

    #[tokio::test]
    async fn an_import_of_a_differing_object_updates_it_and_records_it_as_imported() {
        let kit = Kit::new();
        let shared = kit.shared().await;
        let id = kit.outside("a", "old");
        let node = kit.node(importing(&kit, Action::Update, &id), Part::Whole);
        assert_eq!(run(&node.step(&shared)).await.unwrap(), Some(id.clone()));
        assert_eq!(kit.svc.calls(), [Op::Update]);
        assert_eq!(
            text(&kit.svc.object(&id).unwrap(), "comment"),
            Some("first")
        );
        assert_eq!(state_id(&shared, "test_thing.a").await, Some(id));
        assert_eq!(
            kit.log(&shared).await,
            ["intent import id-1", "imported id-1"]
        );
    }

    #[tokio::test]
    async fn an_import_of_an_object_that_is_gone_is_logged_as_failed() {
        let kit = Kit::new();
        let shared = kit.shared().await;
        let node = kit.node(importing(&kit, Action::NoOp, "id-9"), Part::Whole);
        let failed = failure(run(&node.step(&shared)).await);
        assert_eq!(failed.kind, Some(ErrorKind::NotFound));
        assert_eq!(failed.message, "test_thing.a no longer exists");
        assert_eq!(state_id(&shared, "test_thing.a").await, None);
        assert_eq!(
            kit.log(&shared).await,
            [
                "intent import id-9",
                "failed: test_thing.a no longer exists"
            ]
        );
    }

    #[tokio::test]
    async fn a_refused_import_is_logged_as_failed_and_leaves_nothing_in_state() {
        let kit = Kit::new();
        let shared = kit.shared().await;
        let id = kit.outside("a", "first");
        kit.svc.fail_next(Op::Read, Fault::Refuse);
        let node = kit.node(importing(&kit, Action::NoOp, &id), Part::Whole);
        let failed = failure(run(&node.step(&shared)).await);
        assert_eq!(failed.message, "the service refused the read");
        assert_eq!(state_id(&shared, "test_thing.a").await, None);
        assert_eq!(
            kit.log(&shared).await,
            ["intent import id-1", "failed: the service refused the read"]
        );
    }
}
