//! A replacement, one half per node (see `graph`). Delete-first deletes the object, then
//! creates the new one; create-first creates the new one, which takes the old one's place
//! in state while the old one is kept there, deposed, and then deletes the old one.

use super::error::NodeError;
use super::graph::Part;
use super::{Step, create, delete, deposed};

/// The half of a delete-first replacement the step's node carries out.
pub(super) async fn delete_first(step: &Step<'_>) -> Result<Option<String>, NodeError> {
    match step.work.part {
        Part::Create => create::run(step).await,
        Part::Delete | Part::Whole => delete::run(step).await,
    }
}

/// The half of a create-first replacement the step's node carries out: its delete is of
/// the object the create put aside.
pub(super) async fn create_first(step: &Step<'_>) -> Result<Option<String>, NodeError> {
    match step.work.part {
        Part::Create => create::run(step).await,
        Part::Delete | Part::Whole => deposed::run(step).await,
    }
}

#[cfg(test)]
mod tests {
    use super::{create_first, delete_first};
    use crate::engine::apply::graph::Part;
    use crate::engine::apply::testkit::*;
    use crate::plan::Action;

    #[tokio::test]
    async fn delete_first_deletes_the_old_object_then_creates_the_new_one() {
        let kit = Kit::new();
        let shared = kit.shared().await;
        let old = kit.existing(&shared, "a", "old").await;
        let change = kit.change_of("a", Action::DeleteThenCreate, &old);
        let delete = kit.node(change.clone(), Part::Delete);
        assert_eq!(delete_first(&delete.step(&shared)).await.unwrap(), None);
        assert_eq!(kit.svc.object(&old), None);
        assert_eq!(state_id(&shared, "test_thing.a").await, None);
        let create = kit.node(change, Part::Create);
        let new = delete_first(&create.step(&shared)).await.unwrap();
        assert_eq!(new.as_deref(), Some("id-2"));
        assert_eq!(state_id(&shared, "test_thing.a").await, new);
        assert_eq!(
            kit.log(&shared).await,
            [
                "intent delete id-1",
                "deleted",
                "intent create key=a",
                "created id-2"
            ]
        );
    }

    #[tokio::test]
    async fn delete_first_whose_create_is_refused_leaves_nothing_in_state() {
        let kit = Kit::new();
        let shared = kit.shared().await;
        let old = kit.existing(&shared, "a", "old").await;
        let change = kit.change_of("a", Action::DeleteThenCreate, &old);
        delete_first(&kit.node(change.clone(), Part::Delete).step(&shared))
            .await
            .unwrap();
        kit.svc.fail_next(Op::Create, Fault::Refuse);
        let create = kit.node(change, Part::Create);
        let failed = failure(delete_first(&create.step(&shared)).await);
        assert_eq!(failed.message, "the service refused the create");
        assert_eq!(state_id(&shared, "test_thing.a").await, None);
        assert_eq!(
            kit.log(&shared).await,
            [
                "intent delete id-1",
                "deleted",
                "intent create key=a",
                "failed: the service refused the create"
            ]
        );
    }

    #[tokio::test]
    async fn delete_first_whose_delete_is_refused_keeps_the_old_object() {
        let kit = Kit::new();
        let shared = kit.shared().await;
        let old = kit.existing(&shared, "a", "old").await;
        kit.svc.fail_next(Op::Delete, Fault::Refuse);
        let change = kit.change_of("a", Action::DeleteThenCreate, &old);
        let delete = kit.node(change, Part::Delete);
        failure(delete_first(&delete.step(&shared)).await);
        assert_eq!(state_id(&shared, "test_thing.a").await, Some(old));
        assert_eq!(
            kit.log(&shared).await,
            [
                "intent delete id-1",
                "failed: the service refused the delete"
            ]
        );
    }

    #[tokio::test]
    async fn create_first_creates_the_new_object_deposing_the_old_one_then_deletes_it() {
        let kit = Kit::new();
        let shared = kit.shared().await;
        let old = kit.existing(&shared, "a", "old").await;
        let change = kit.change_of("a", Action::CreateThenDelete, &old);
        let create = kit.node(change.clone(), Part::Create);
        let new = create_first(&create.step(&shared)).await.unwrap();
        assert_eq!(new.as_deref(), Some("id-2"));
        assert_eq!(state_id(&shared, "test_thing.a").await, new);
        assert_eq!(deposed_ids(&shared).await, std::slice::from_ref(&old));
        let delete = kit.node(change, Part::Delete);
        assert_eq!(create_first(&delete.step(&shared)).await.unwrap(), None);
        assert_eq!(kit.svc.object(&old), None);
        assert!(deposed_ids(&shared).await.is_empty());
        assert_eq!(state_id(&shared, "test_thing.a").await, new);
        assert_eq!(
            kit.log(&shared).await,
            [
                "intent create id-1 key=a",
                "created id-2",
                "intent delete id-1",
                "deleted"
            ]
        );
    }

    #[tokio::test]
    async fn create_first_whose_create_is_refused_keeps_the_old_object_in_place() {
        let kit = Kit::new();
        let shared = kit.shared().await;
        let old = kit.existing(&shared, "a", "old").await;
        kit.svc.fail_next(Op::Create, Fault::Refuse);
        let change = kit.change_of("a", Action::CreateThenDelete, &old);
        let create = kit.node(change, Part::Create);
        failure(create_first(&create.step(&shared)).await);
        assert_eq!(state_id(&shared, "test_thing.a").await, Some(old));
        assert!(deposed_ids(&shared).await.is_empty());
        assert_eq!(
            kit.log(&shared).await,
            [
                "intent create id-1 key=a",
                "failed: the service refused the create"
            ]
        );
    }

    #[tokio::test]
    async fn create_first_whose_delete_is_refused_keeps_the_old_object_deposed() {
        let kit = Kit::new();
        let shared = kit.shared().await;
        let old = kit.existing(&shared, "a", "old").await;
        let change = kit.change_of("a", Action::CreateThenDelete, &old);
        create_first(&kit.node(change.clone(), Part::Create).step(&shared))
            .await
            .unwrap();
        kit.svc.fail_next(Op::Delete, Fault::Refuse);
        let delete = kit.node(change, Part::Delete);
        failure(create_first(&delete.step(&shared)).await);
        assert_eq!(deposed_ids(&shared).await, [old]);
        assert_eq!(
            state_id(&shared, "test_thing.a").await.as_deref(),
            Some("id-2")
        );
        assert_eq!(
            kit.log(&shared).await[2..],
            [
                "intent delete id-1",
                "failed: the service refused the delete"
            ]
        );
    }
}
