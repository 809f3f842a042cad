//! An unchanged instance holding sensitive values: the plan does not carry them, so its
//! configuration is evaluated again to give references (outputs, other resources) the
//! real values. Nothing is called and nothing logged; the world alone changes.

use super::Step;
use super::error::NodeError;
use super::logged::set_world_value;

/// Puts the instance in the world as the plan left it, with its sensitive values.
pub(super) async fn run(step: &Step<'_>) -> Result<Option<String>, NodeError> {
    let sent = step.evaluate()?;
    let change = step.change;
    let base = change.after.as_ref().or(change.before.as_ref());
    let v = base.map(|o| o.0.clone()).unwrap_or_default();
    set_world_value(step.shared, change, v, &sent);
    Ok(None)
}

#[cfg(test)]
mod tests {
    use super::run;
    use crate::engine::apply::graph::Part;
    use crate::engine::apply::testkit::*;
    use crate::plan::{Action, ResourceChange, SerObject};

    /// The unchanged `b`, as the plan shows it: without its secret.
    fn unchanged(kit: &Kit, name: &str) -> ResourceChange {
        let mut change = kit.change("b", Action::NoOp);
        change.id = Some("id-1".into());
        let shown = object(&[("name", name), ("id", "id-1")]);
        change.before = Some(SerObject(shown.clone()));
        change.after = Some(SerObject(shown));
        change
    }

    #[tokio::test]
    async fn an_unchanged_instance_gives_the_world_its_sensitive_values_quietly() {
        let kit = Kit::new();
        let shared = kit.shared().await;
        let node = kit.node(unchanged(&kit, "b"), Part::Whole);
        assert_eq!(run(&node.step(&shared)).await.unwrap(), None);
        let seen = world_value(&shared, "b", false).unwrap();
        assert_eq!(text(&seen, "secret"), Some("hunter2"));
        assert_eq!(text(&seen, "id"), Some("id-1"));
        assert!(world_marks_sensitive(&shared, "b", "secret"));
        assert!(kit.svc.calls().is_empty());
        assert!(kit.log(&shared).await.is_empty());
    }

    #[tokio::test]
    async fn an_unchanged_instance_that_evaluates_otherwise_than_planned_fails() {
        let kit = Kit::new();
        let shared = kit.shared().await;
        let node = kit.node(unchanged(&kit, "other"), Part::Whole);
        let failed = failure(run(&node.step(&shared)).await);
        assert!(
            failed.contains(r#"name was planned as "other" but is "b""#),
            "{failed}"
        );
        assert_eq!(world_value(&shared, "b", false), None);
        assert!(kit.log(&shared).await.is_empty());
    }
}
