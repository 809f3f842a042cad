//! A data source's read: evaluated with the values known now, read, and put in the world
//! for what refers to it. Nothing is logged: a read changes nothing, and data sources have
//! no state to recover.

use super::error::{EngineFailure, NodeError};
use super::evaluate::{Work, evaluate_lookup};
use super::{Shared, writing};
use crate::plan::{Mode, ResourceChange};
use crate::value::Value;

/// Reads the data source of `change`.
pub(super) async fn run(
    work: &Work,
    change: &ResourceChange,
    shared: &Shared,
) -> Result<Option<String>, NodeError> {
    let ds = work
        .data_source
        .as_ref()
        .ok_or_else(|| EngineFailure::UnknownType {
            what: "data source",
            type_name: change.type_name().to_string(),
        })?;
    let config = evaluate_lookup(work, shared, ds.schema(), &change.address())?;
    let mut value = config.clone();
    value.extend(shared.bounded(ds.read(&config)).await?);
    writing(&shared.world).set_instance(
        change.module(),
        Mode::Data,
        change.type_name(),
        change.name(),
        change.key(),
        Value::object(value),
    );
    Ok(None)
}

#[cfg(test)]
mod tests {
    use super::run;
    use crate::engine::apply::graph::Part;
    use crate::engine::apply::testkit::*;

    #[tokio::test]
    async fn a_read_puts_what_the_data_source_says_in_the_world() {
        let kit = Kit::new();
        let shared = kit.shared().await;
        let node = kit.node(kit.data_change(), Part::Whole);
        let read = run(node.work(), node.change(), &shared).await;
        assert_eq!(read.unwrap(), None);
        let seen = world_value(&shared, "me", true).unwrap();
        assert_eq!(text(&seen, "user"), Some("me@example.com"));
        assert_eq!(text(&seen, "about"), Some("a"));
        assert!(kit.log(&shared).await.is_empty());
    }

    #[tokio::test]
    async fn a_refused_read_fails_and_leaves_the_world_as_it_was() {
        let kit = Kit::new();
        let shared = kit.shared().await;
        kit.svc.fail_next(Op::Read, Fault::Refuse);
        let node = kit.node(kit.data_change(), Part::Whole);
        let failed = failure(run(node.work(), node.change(), &shared).await);
        assert_eq!(failed.message, "the service refused the read");
        assert_eq!(world_value(&shared, "me", true), None);
        assert!(kit.log(&shared).await.is_empty());
    }
}
