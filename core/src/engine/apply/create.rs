//! Create: the object is made as configured, and recorded even when the answer to the
//! create was lost: with a create token the create is repeated (the service answers with
//! what the first call made), without one the object is looked for by its natural key.
//! Also the create half of a replacement, which names the object it replaces.

use super::Step;
use super::error::NodeError;
use super::evaluate::Sent;
use crate::engine::instance::configurable;
use crate::plan::Action;
use crate::provider::{OpContext, ProviderError, ProviderResult, Remote};
use brickform_state::Outcome as WalOutcome;

/// Creates the object of the step's change; its id.
pub(super) async fn run(step: &Step<'_>) -> Result<Option<String>, NodeError> {
    let sent = step.evaluate()?;
    let change = step.change;
    // A create_before_destroy replacement names the object it replaces, which stays
    // in state (deposed) until its own delete is recorded.
    let replaces = (change.action == Action::CreateThenDelete)
        .then(|| change.id.clone())
        .flatten();
    let natural_key = step.kind.natural_key(step.ctx, &sent.config);
    let token = token(step).await;
    let seq = step
        .create_intent(natural_key.clone(), replaces, token.clone())
        .await?;
    let attempt = Attempt {
        step,
        ctx: OpContext {
            create_token: token,
            ..step.ctx.clone()
        },
        sent: &sent,
        natural_key,
        seq,
    };
    let made = attempt.answer().await?;
    attempt.settle(made).await
}

/// A kind whose create takes a token sends the token of an earlier create of this
/// address whose outcome stayed unknown, so it gets what that one may have made;
/// otherwise a fresh one.
async fn token(step: &Step<'_>) -> Option<String> {
    if !step.kind.create_token() {
        return None;
    }
    let doc = step.shared.doc.lock().await;
    Some(
        doc.pending_token(&step.change.addr)
            .map(str::to_string)
            .unwrap_or_else(|| uuid::Uuid::new_v4().to_string()),
    )
}

/// One create, logged as `seq`: what it sends, with what.
struct Attempt<'a> {
    step: &'a Step<'a>,
    /// The step's context, with the create's token.
    ctx: OpContext,
    sent: &'a Sent,
    natural_key: Option<String>,
    seq: u64,
}

impl Attempt<'_> {
    /// What the create made, once a lost answer is looked into. An `Err` of its own ends
    /// the step with the outcome still unknown.
    async fn answer(&self) -> Result<ProviderResult<Remote>, NodeError> {
        let step = self.step;
        match step.create(&self.ctx, &self.sent.config).await {
            // With its token, a create whose answer was lost is safe to repeat: the
            // service answers with what the first call made, or makes it now.
            Err(e) if e.uncertain && e.made.is_none() && self.ctx.create_token.is_some() => {
                self.repeat(e).await
            }
            Err(e) if e.uncertain && e.made.is_none() => {
                let key = self.natural_key.as_deref();
                step.found_after_lost_create(&self.ctx, key, e).await
            }
            other => Ok(other),
        }
    }

    /// Repeats a create with its token after the answer to `lost` was lost.
    async fn repeat(&self, lost: ProviderError) -> Result<ProviderResult<Remote>, NodeError> {
        let step = self.step;
        tracing::debug!(address = %step.change.address(), error = %lost.message, "repeating an uncertain create with its token");
        match step.create(&self.ctx, &self.sent.config).await {
            Err(again) if again.uncertain && again.made.is_none() => {
                // Still unknown: the token is kept in state, and the next run's
                // create of this address sends it again.
                step.close(self.seq, WalOutcome::Pending {}).await?;
                Err(NodeError::Provider(ProviderError {
                    message: format!(
                        "{} (it may have been created; the next apply repeats the create with the same token, which returns what it made)",
                        again.message
                    ),
                    ..again
                }))
            }
            other => Ok(other),
        }
    }

    /// Records what the create made, or its failure; the id of the object.
    async fn settle(&self, made: ProviderResult<Remote>) -> Result<Option<String>, NodeError> {
        let step = self.step;
        match made {
            Ok(remote) => {
                step.record(self.seq, &remote, self.sent, WalOutcome::Created)
                    .await?;
                Ok(Some(remote.id))
            }
            // Made, then a later step failed: the object is recorded, never orphaned,
            // and the failure reported. What it was sent did not all take, so state
            // records what the service holds as what it was given (as an import does):
            // the next plan shows what is still to write, instead of taking the
            // service's answer to a half-done write for its rewriting of the whole.
            Err(mut e) if e.made.is_some() => {
                if let Some(remote) = e.made.take() {
                    let held = Sent {
                        config: configurable(step.kind.schema(), &remote.attrs),
                        sensitive: Vec::new(),
                    };
                    step.record(self.seq, &remote, &held, WalOutcome::Created)
                        .await?;
                }
                Err(NodeError::Provider(e))
            }
            Err(e) => step.failed(self.seq, e).await,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::run;
    use crate::engine::apply::graph::Part;
    use crate::engine::apply::testkit::*;
    use crate::plan::{Action, SerObject};
    use crate::provider::ErrorKind;

    #[tokio::test]
    async fn a_create_makes_the_object_and_records_it_in_state_and_world() {
        let kit = Kit::new();
        let shared = kit.shared().await;
        let node = kit.node(kit.change("a", Action::Create), Part::Whole);
        let id = run(&node.step(&shared)).await.unwrap();
        assert_eq!(id.as_deref(), Some("id-1"));
        let made = kit.svc.object("id-1").unwrap();
        assert_eq!(text(&made, "comment"), Some("first"));
        assert_eq!(
            state_id(&shared, "test_thing.a").await.as_deref(),
            Some("id-1")
        );
        assert_eq!(
            kit.log(&shared).await,
            ["intent create key=a", "created id-1"]
        );
        let seen = world_value(&shared, "a", false).unwrap();
        assert_eq!(text(&seen, "id"), Some("id-1"));
    }

    #[tokio::test]
    async fn a_sensitive_value_is_in_the_world_but_only_fingerprinted_in_state() {
        let kit = Kit::new();
        let shared = kit.shared().await;
        let node = kit.node(kit.change("b", Action::Create), Part::Whole);
        run(&node.step(&shared)).await.unwrap();
        let doc = shared.doc.lock().await;
        let entry = doc
            .get(&crate::addrs::InstanceAddr::parse("test_thing.b").unwrap())
            .unwrap();
        assert_eq!(entry.config.get("secret"), None);
        let fingerprint = entry.sensitive.get("secret").unwrap();
        assert!(doc.fingerprint_matches(&"hunter2".into(), fingerprint));
        drop(doc);
        let seen = world_value(&shared, "b", false).unwrap();
        assert_eq!(text(&seen, "secret"), Some("hunter2"));
        assert!(world_marks_sensitive(&shared, "b", "secret"));
    }

    #[tokio::test]
    async fn a_refused_create_is_logged_as_failed_and_leaves_nothing_in_state() {
        let kit = Kit::new();
        let shared = kit.shared().await;
        kit.svc.fail_next(Op::Create, Fault::Refuse);
        let node = kit.node(kit.change("a", Action::Create), Part::Whole);
        let failed = failure(run(&node.step(&shared)).await);
        assert_eq!(failed.kind, Some(ErrorKind::InvalidInput));
        assert_eq!(failed.message, "the service refused the create");
        assert_eq!(state_id(&shared, "test_thing.a").await, None);
        assert_eq!(
            kit.log(&shared).await,
            [
                "intent create key=a",
                "failed: the service refused the create"
            ]
        );
        assert_eq!(world_value(&shared, "a", false), None);
    }

    #[tokio::test]
    async fn a_create_whose_answer_was_lost_finds_its_object_by_key_and_records_it() {
        let kit = Kit::new();
        let shared = kit.shared().await;
        kit.svc.fail_next(Op::Create, Fault::LoseAnswer);
        let node = kit.node(kit.change("a", Action::Create), Part::Whole);
        let id = run(&node.step(&shared)).await.unwrap();
        assert_eq!(id.as_deref(), Some("id-1"));
        // Looked up, not made a second time.
        assert_eq!(kit.svc.calls(), [Op::Create, Op::Find]);
        assert_eq!(kit.svc.count(), 1);
        assert_eq!(
            state_id(&shared, "test_thing.a").await.as_deref(),
            Some("id-1")
        );
        assert_eq!(
            kit.log(&shared).await,
            ["intent create key=a", "created id-1"]
        );
    }

    #[tokio::test]
    async fn a_create_whose_answer_was_lost_and_made_nothing_is_logged_as_failed() {
        let kit = Kit::new();
        let shared = kit.shared().await;
        kit.svc.fail_next(Op::Create, Fault::LoseRequest);
        let node = kit.node(kit.change("a", Action::Create), Part::Whole);
        let failed = failure(run(&node.step(&shared)).await);
        assert_eq!(failed.message, "no answer to the create");
        assert_eq!(kit.svc.calls(), [Op::Create, Op::Find]);
        assert_eq!(state_id(&shared, "test_thing.a").await, None);
        assert_eq!(
            kit.log(&shared).await,
            ["intent create key=a", "failed: no answer to the create"]
        );
    }

    #[tokio::test]
    async fn a_lost_create_that_cannot_be_looked_up_leaves_its_intent_for_the_next_run() {
        let kit = Kit::new();
        let shared = kit.shared().await;
        kit.svc.fail_next(Op::Create, Fault::LoseAnswer);
        kit.svc.fail_next(Op::Find, Fault::LoseRequest);
        let node = kit.node(kit.change("a", Action::Create), Part::Whole);
        let failed = failure(run(&node.step(&shared)).await);
        assert!(
            failed.contains("looking for it failed too: no answer to the lookup"),
            "{failed}"
        );
        assert_eq!(kit.log(&shared).await, ["intent create key=a"]);
        assert_eq!(shared.journal.open_intents().await.len(), 1);
        assert_eq!(state_id(&shared, "test_thing.a").await, None);
    }

    #[tokio::test]
    async fn a_create_with_a_token_is_repeated_after_a_lost_answer_and_gets_what_it_made() {
        let kit = Kit::with_tokens();
        let shared = kit.shared().await;
        kit.svc.fail_next(Op::Create, Fault::LoseAnswer);
        let node = kit.node(kit.change("a", Action::Create), Part::Whole);
        let id = run(&node.step(&shared)).await.unwrap();
        assert_eq!(id.as_deref(), Some("id-1"));
        assert_eq!(kit.svc.calls(), [Op::Create, Op::Create]);
        assert_eq!(kit.svc.count(), 1);
        assert_eq!(
            kit.log(&shared).await,
            ["intent create key=a token", "created id-1"]
        );
    }

    #[tokio::test]
    async fn a_create_with_a_token_still_unknown_when_repeated_keeps_its_token() {
        let kit = Kit::with_tokens();
        let shared = kit.shared().await;
        kit.svc.fail_next(Op::Create, Fault::LoseRequest);
        kit.svc.fail_next(Op::Create, Fault::LoseRequest);
        let node = kit.node(kit.change("a", Action::Create), Part::Whole);
        let failed = failure(run(&node.step(&shared)).await);
        assert!(
            failed.contains("the next apply repeats the create"),
            "{failed}"
        );
        assert_eq!(
            kit.log(&shared).await,
            ["intent create key=a token", "pending"]
        );
        let doc = shared.doc.lock().await;
        assert!(
            doc.pending_token(&crate::addrs::InstanceAddr::parse("test_thing.a").unwrap())
                .is_some()
        );
        assert!(
            doc.get(&crate::addrs::InstanceAddr::parse("test_thing.a").unwrap())
                .is_none()
        );
    }

    #[tokio::test]
    async fn a_create_that_fails_after_making_the_object_records_what_the_service_holds() {
        let kit = Kit::new();
        let shared = kit.shared().await;
        kit.svc.fail_next(Op::Create, Fault::FailAfterMaking);
        let node = kit.node(kit.change("a", Action::Create), Part::Whole);
        let failed = failure(run(&node.step(&shared)).await);
        assert_eq!(failed.message, "setting its comment failed");
        assert_eq!(
            kit.log(&shared).await,
            ["intent create key=a", "created id-1"]
        );
        // Recorded as given what the service holds: the comment that did not take is
        // still to write, and what the service computes is not configuration.
        let doc = shared.doc.lock().await;
        let entry = doc
            .get(&crate::addrs::InstanceAddr::parse("test_thing.a").unwrap())
            .unwrap();
        assert_eq!(entry.id, "id-1");
        assert_eq!(entry.config.get("name").unwrap(), "a");
        assert_eq!(entry.config.get("comment"), None);
        assert_eq!(entry.config.get("id"), None);
    }

    #[tokio::test]
    async fn a_create_sends_nothing_when_a_known_value_is_not_what_the_plan_said() {
        let kit = Kit::new();
        let shared = kit.shared().await;
        let mut change = kit.change("a", Action::Create);
        change.after = Some(SerObject(object(&[("name", "a"), ("comment", "planned")])));
        let node = kit.node(change, Part::Whole);
        let failed = failure(run(&node.step(&shared)).await);
        assert!(
            failed.contains(r#"comment was planned as "planned" but is "first""#),
            "{failed}"
        );
        assert!(kit.svc.calls().is_empty());
        assert!(kit.log(&shared).await.is_empty());
    }
}
