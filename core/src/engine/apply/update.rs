//! Update: the object is written with its configuration, from what was last applied, and
//! recorded as the service answered.

use super::Step;
use super::error::NodeError;
use super::import::read_back;
use crate::engine::instance::prior_of;
use crate::plan::Action;
use crate::provider::{ProviderResult, Remote};
use crate::value::Object;
use brickform_state::{Outcome as WalOutcome, WalOp};

/// Updates the object of the step's change; its id.
pub(super) async fn run(step: &Step<'_>) -> Result<Option<String>, NodeError> {
    let sent = step.evaluate()?;
    let id = step.id()?;
    let seq = step.intent(WalOp::Update, Some(id.clone())).await?;
    // A managed instance's `Read` (no plan makes one) is read back, as it always was.
    let answer = match step.change.action {
        Action::Update => write(step, &id, &sent.config).await,
        _ => read_back(step, &id).await,
    };
    step.settle(seq, answer, &sent, WalOutcome::Updated).await
}

/// The update call: from what was last applied (what the service was told), so a kind can
/// send the removal of what was configured before.
pub(super) async fn write(step: &Step<'_>, id: &str, config: &Object) -> ProviderResult<Remote> {
    let prior = {
        let doc = step.shared.doc.lock().await;
        prior_of(&doc, &step.change.addr, step.kind.schema())
            .map(|(_, p)| p.applied(step.kind.schema()))
            .unwrap_or_else(|| step.prior())
    };
    step.update(id, &prior, config).await
}

#[cfg(test)]
mod tests {
    use super::run;
    use crate::engine::apply::graph::Part;
    use crate::engine::apply::testkit::*;
    use crate::plan::{Action, SerObject};
    use crate::provider::ErrorKind;

    #[tokio::test]
    async fn an_update_writes_the_object_and_records_what_the_service_answered() {
        let kit = Kit::new();
        let shared = kit.shared().await;
        let id = kit.existing(&shared, "a", "old").await;
        let node = kit.node(kit.change_of("a", Action::Update, &id), Part::Whole);
        assert_eq!(run(&node.step(&shared)).await.unwrap(), Some(id.clone()));
        assert_eq!(kit.svc.calls(), [Op::Update]);
        assert_eq!(
            text(&kit.svc.object(&id).unwrap(), "comment"),
            Some("first")
        );
        let doc = shared.doc.lock().await;
        assert_eq!(
            doc.get(&crate::addrs::InstanceAddr::parse("test_thing.a").unwrap())
                .unwrap()
                .config["comment"],
            "first"
        );
        drop(doc);
        assert_eq!(
            kit.log(&shared).await,
            ["intent update id-1", "updated id-1"]
        );
        let seen = world_value(&shared, "a", false).unwrap();
        assert_eq!(text(&seen, "comment"), Some("first"));
    }

    #[tokio::test]
    async fn a_refused_update_is_logged_as_failed_and_leaves_state_as_it_was() {
        let kit = Kit::new();
        let shared = kit.shared().await;
        let id = kit.existing(&shared, "a", "old").await;
        let before = shared
            .doc
            .lock()
            .await
            .get(&crate::addrs::InstanceAddr::parse("test_thing.a").unwrap())
            .cloned();
        kit.svc.fail_next(Op::Update, Fault::Refuse);
        let node = kit.node(kit.change_of("a", Action::Update, &id), Part::Whole);
        let failed = failure(run(&node.step(&shared)).await);
        assert_eq!(failed.kind, Some(ErrorKind::InvalidInput));
        assert_eq!(failed.message, "the service refused the update");
        assert_eq!(
            shared
                .doc
                .lock()
                .await
                .get(&crate::addrs::InstanceAddr::parse("test_thing.a").unwrap())
                .cloned(),
            before
        );
        assert_eq!(
            kit.log(&shared).await,
            [
                "intent update id-1",
                "failed: the service refused the update"
            ]
        );
        assert_eq!(world_value(&shared, "a", false), None);
    }

    #[tokio::test]
    async fn an_update_sends_nothing_when_a_known_value_is_not_what_the_plan_said() {
        let kit = Kit::new();
        let shared = kit.shared().await;
        let id = kit.existing(&shared, "a", "old").await;
        let mut change = kit.change_of("a", Action::Update, &id);
        change.after = Some(SerObject(object(&[("name", "a"), ("comment", "planned")])));
        let node = kit.node(change, Part::Whole);
        let failed = failure(run(&node.step(&shared)).await);
        assert!(
            failed.contains(r#"comment was planned as "planned" but is "first""#),
            "{failed}"
        );
        assert!(kit.svc.calls().is_empty());
        assert!(kit.log(&shared).await.is_empty());
        assert_eq!(text(&kit.svc.object(&id).unwrap(), "comment"), Some("old"));
    }

    #[tokio::test]
    async fn an_update_whose_answer_is_lost_is_failed_and_leaves_the_next_plan_to_read_it() {
        // The service did the work; the answer did not come. Nothing is recorded as applied
        // (the state keeps what was applied before, so the next plan reads the object and
        // compares), and the failure says the outcome is unknown.
        let kit = Kit::new();
        let shared = kit.shared().await;
        let id = kit.existing(&shared, "a", "old").await;
        let addr = crate::addrs::InstanceAddr::parse("test_thing.a").unwrap();
        let before = shared.doc.lock().await.get(&addr).cloned();
        kit.svc.fail_next(Op::Update, Fault::LoseAnswer);
        let node = kit.node(kit.change_of("a", Action::Update, &id), Part::Whole);
        let failed = failure(run(&node.step(&shared)).await);
        assert_eq!(failed.message, "no answer to the update");
        assert_eq!(kit.svc.calls(), [Op::Update]);
        assert_eq!(
            text(&kit.svc.object(&id).unwrap(), "comment"),
            Some("first")
        );
        assert_eq!(shared.doc.lock().await.get(&addr).cloned(), before);
        assert_eq!(
            kit.log(&shared).await,
            ["intent update id-1", "failed: no answer to the update"]
        );
    }

    #[tokio::test]
    async fn an_update_of_an_object_without_an_id_fails_before_anything_is_logged() {
        let kit = Kit::new();
        let shared = kit.shared().await;
        let node = kit.node(kit.change("a", Action::Update), Part::Whole);
        let failed = failure(run(&node.step(&shared)).await);
        assert_eq!(failed.message, "no id recorded for this object");
        assert!(kit.svc.calls().is_empty());
        assert!(kit.log(&shared).await.is_empty());
    }
}
