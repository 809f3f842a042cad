//! The bound on requests in flight to the service (`parallelism`), held per request.
//!
//! The engine runs each operation it gives a kind [`within`] its call slots; the kind's
//! client takes a slot for each request it sends ([`take`]) and gives it back as soon as
//! the answer is in. A slot held for a whole operation would sit idle while the kind works
//! on the CPU between its requests (a create's body built, its read-back parsed) and
//! would count a kind's own fan-out of requests as one call; held per request, the bound is
//! exactly the requests in flight and none stays idle.
//!
//! Work outside the engine's bound (a command that calls a kind directly) takes no slot.
//! Tasks spawned inside an operation carry its slots only where they are started with
//! [`carried`] (the engine's fan-out does).
//!
//! A slot must never be held while waiting for another one: two requests each waiting for
//! the slot the other holds would wait forever. So a slot is taken for one request's
//! exchange only, and nothing that holds one starts other work within the same slots.

use std::future::Future;
use std::sync::Arc;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

tokio::task_local! {
    static SLOTS: Arc<Semaphore>;
}

/// Runs `work` with `slots` as the bound its requests take their slots from.
pub async fn within<F: Future>(slots: Arc<Semaphore>, work: F) -> F::Output {
    SLOTS.scope(slots, work).await
}

/// The slots the current task's requests take from, if the engine set any.
pub fn current() -> Option<Arc<Semaphore>> {
    SLOTS.try_with(Arc::clone).ok()
}

/// Runs `work` within `slots` when there are some (those of the task that started it,
/// from [`current`]), as it is.
pub async fn carried<F: Future>(slots: Option<Arc<Semaphore>>, work: F) -> F::Output {
    match slots {
        Some(slots) => within(slots, work).await,
        None => work.await,
    }
}

/// One request's place in the bound, given back when dropped.
#[derive(Debug)]
#[must_use = "the slot is given back when dropped"]
pub struct Slot {
    _permit: Option<OwnedSemaphorePermit>,
}

/// Waits for a free slot of the current task's bound; at once where there is none.
pub async fn take() -> Slot {
    let permit = match current() {
        // Nothing closes the engine's semaphores, so a permit always comes; a closed one
        // would let the request go unbounded rather than not at all.
        Some(slots) => slots.acquire_owned().await.ok(),
        None => None,
    };
    Slot { _permit: permit }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::peak::Peak;
    use std::time::Duration;

    /// The requests of many operations at once: never more in flight than the bound.
    #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
    async fn no_more_requests_in_flight_than_slots() {
        let slots = Arc::new(Semaphore::new(3));
        let in_flight = Peak::default();
        let mut tasks = tokio::task::JoinSet::new();
        for _ in 0..12 {
            let in_flight = in_flight.clone();
            tasks.spawn(within(slots.clone(), async move {
                for _ in 0..2 {
                    let _slot = take().await;
                    let _request = in_flight.enter();
                    tokio::time::sleep(Duration::from_millis(5)).await;
                }
            }));
        }
        while let Some(r) = tasks.join_next().await {
            r.unwrap();
        }
        assert_eq!(in_flight.most(), 3);
        assert_eq!(slots.available_permits(), 3);
    }

    /// With one slot, an operation's work between two requests leaves the slot to
    /// another operation: the first waits there for the second's request to be answered.
    #[tokio::test]
    async fn work_between_requests_holds_no_slot() {
        let slots = Arc::new(Semaphore::new(1));
        let (answered, heard) = tokio::sync::oneshot::channel();
        let first = within(slots.clone(), async move {
            drop(take().await);
            tokio::time::timeout(Duration::from_secs(10), heard)
                .await
                .expect("the other operation's request never got the slot")
                .unwrap();
            drop(take().await);
        });
        let second = within(slots.clone(), async move {
            drop(take().await);
            answered.send(()).unwrap();
        });
        tokio::join!(first, second);
        assert_eq!(slots.available_permits(), 1);
    }

    #[tokio::test]
    async fn outside_any_bound_a_request_waits_for_nothing() {
        assert!(current().is_none());
        let slot = take().await;
        assert!(slot._permit.is_none());
    }

    /// A task started with the slots of the task that started it takes from them; one
    /// started without does not.
    #[tokio::test]
    async fn slots_are_carried_into_a_task_only_on_purpose() {
        let slots = Arc::new(Semaphore::new(2));
        within(slots.clone(), async {
            let carried_slots = current();
            let inner = tokio::spawn(carried(carried_slots, async { take().await }));
            let held = inner.await.unwrap();
            assert!(held._permit.is_some());
            assert_eq!(current().unwrap().available_permits(), 1);
            drop(held);
            let bare = tokio::spawn(async { take().await }).await.unwrap();
            assert!(bare._permit.is_none());
        })
        .await;
        assert_eq!(slots.available_permits(), 2);
    }
}
