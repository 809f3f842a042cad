//! One bounded fan-out: work on many items at once, at most a given number in flight, each
//! item's work a task of its own (so it runs on any worker thread), the results in the
//! order of the items. Reads of many objects, listings of many containers and uploads of
//! many files all go through it, so the bound, the ordering and what a task that did not
//! finish becomes are decided here once.
//!
//! Dropping the future returned cancels the fan-out: tasks not started never start, and
//! those running are aborted (they are held in a `JoinSet`, which aborts on drop).

use std::future::Future;
use std::sync::Arc;
use tokio::sync::Semaphore;
use tokio::task::JoinSet;

/// A task of the fan-out that did not finish: it panicked, or the runtime is shutting down.
#[derive(Debug, Clone, thiserror::Error)]
#[error("a task of {what} did not finish: {cause}")]
pub struct Aborted {
    /// What the fan-out was doing ("reading objects").
    pub what: &'static str,
    pub cause: String,
}

impl From<Aborted> for crate::provider::ProviderError {
    fn from(a: Aborted) -> Self {
        crate::provider::ProviderError::other(a.to_string())
    }
}

/// Runs `work` on each of `items`, at most `limit` at once (at least one), and returns what
/// each came to, in the order of `items`. `what` names the work for an [`Aborted`] task.
pub async fn bounded<T, R, F, Fut>(
    what: &'static str,
    items: impl IntoIterator<Item = T>,
    limit: usize,
    work: F,
) -> Vec<Result<R, Aborted>>
where
    F: Fn(T) -> Fut,
    Fut: Future<Output = R> + Send + 'static,
    R: Send + 'static,
{
    sharing(what, items, Arc::new(Semaphore::new(limit.max(1))), work).await
}

/// As [`bounded`], with the bound shared: each item's work holds one of `permits` while it
/// runs, so several fan-outs (a plan's reads of every kind) stay within one limit together.
pub async fn sharing<T, R, F, Fut>(
    what: &'static str,
    items: impl IntoIterator<Item = T>,
    permits: Arc<Semaphore>,
    work: F,
) -> Vec<Result<R, Aborted>>
where
    F: Fn(T) -> Fut,
    Fut: Future<Output = R> + Send + 'static,
    R: Send + 'static,
{
    let mut tasks = JoinSet::new();
    // Which item each task works on, for a task that does not finish.
    let mut index = std::collections::HashMap::new();
    // Each task's requests take the call slots of the work that started the fan-out.
    let slots = crate::call_slots::current();
    for (i, item) in items.into_iter().enumerate() {
        let fut = work(item);
        let permits = permits.clone();
        let slots = slots.clone();
        let handle = tasks.spawn(async move {
            // Nothing closes the semaphores given here, so a permit always comes.
            let _permit = permits.acquire_owned().await;
            crate::call_slots::carried(slots, fut).await
        });
        index.insert(handle.id(), i);
    }
    let mut out: Vec<Option<Result<R, Aborted>>> = (0..index.len()).map(|_| None).collect();
    while let Some(joined) = tasks.join_next_with_id().await {
        let (id, r) = match joined {
            Ok((id, r)) => (id, Ok(r)),
            Err(e) => (
                e.id(),
                Err(Aborted {
                    what,
                    cause: e.to_string(),
                }),
            ),
        };
        if let Some(&i) = index.get(&id) {
            out[i] = Some(r);
        }
    }
    out.into_iter()
        .map(|r| {
            r.unwrap_or_else(|| {
                Err(Aborted {
                    what,
                    cause: "it never reported".into(),
                })
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::peak::Peak;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::Duration;

    #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
    async fn results_come_in_the_order_of_the_items_and_no_more_than_the_limit_run() {
        let peak = Peak::default();
        let out = bounded("testing", 0..40u64, 3, |i| {
            let peak = peak.clone();
            async move {
                let _running = peak.enter();
                // Later items finish first: the order must not come from finishing.
                tokio::time::sleep(Duration::from_millis(40 - i)).await;
                i * 2
            }
        })
        .await;
        let values: Vec<u64> = out.into_iter().map(|r| r.unwrap()).collect();
        assert_eq!(values, (0..40).map(|i| i * 2).collect::<Vec<_>>());
        assert!(peak.most() <= 3, "{peak:?}");
        assert!(peak.most() >= 2, "ran in parallel: {peak:?}");
    }

    #[tokio::test]
    async fn a_task_that_panics_is_an_aborted_result_and_the_others_stand() {
        let out = bounded("testing", [1, 2, 3], 2, |i| async move {
            if i == 2 {
                panic!("boom");
            }
            i
        })
        .await;
        assert_eq!(out.len(), 3);
        assert_eq!(out[0].as_ref().ok(), Some(&1));
        assert_eq!(out[2].as_ref().ok(), Some(&3));
        let e = out[1].as_ref().unwrap_err();
        assert!(
            e.to_string()
                .starts_with("a task of testing did not finish"),
            "{e}"
        );
        let pe: crate::provider::ProviderError = e.clone().into();
        assert!(pe.message.contains("testing"));
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
    async fn fan_outs_sharing_permits_stay_within_them_together() {
        let permits = Arc::new(Semaphore::new(2));
        let peak = Peak::default();
        let one = |_: u8| {
            let peak = peak.clone();
            async move {
                let _running = peak.enter();
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
        };
        let (a, b) = tokio::join!(
            sharing("testing", 0..10, permits.clone(), one),
            sharing("testing", 0..10, permits.clone(), one)
        );
        assert_eq!(a.len() + b.len(), 20);
        assert!(peak.most() <= 2, "{peak:?}");
    }

    /// A fan-out started within call slots: its tasks' requests take those slots, so a
    /// fan-out of 10 at once makes no more requests at once than the slots allow.
    #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
    async fn a_fan_out_s_requests_take_the_call_slots_it_was_started_in() {
        let slots = Arc::new(Semaphore::new(2));
        let peak = Peak::default();
        let counted = peak.clone();
        let out = crate::call_slots::within(
            slots.clone(),
            bounded("testing", 0..12u8, 10, move |_| {
                let peak = counted.clone();
                async move {
                    let _slot = crate::call_slots::take().await;
                    let _running = peak.enter();
                    tokio::time::sleep(Duration::from_millis(10)).await;
                }
            }),
        )
        .await;
        assert_eq!(out.len(), 12);
        assert_eq!(peak.most(), 2);
    }

    #[tokio::test]
    async fn a_limit_of_zero_still_runs_and_no_items_is_no_results() {
        let out = bounded("testing", [7], 0, |i| async move { i }).await;
        assert_eq!(out.len(), 1);
        let none = bounded("testing", Vec::<u8>::new(), 4, |i| async move { i }).await;
        assert!(none.is_empty());
    }

    #[tokio::test]
    async fn dropping_the_fan_out_stops_its_tasks() {
        let started = Arc::new(AtomicUsize::new(0));
        let s = started.clone();
        let fan = bounded("testing", 0..100, 2, move |_| {
            let s = s.clone();
            async move {
                s.fetch_add(1, Ordering::SeqCst);
                tokio::time::sleep(Duration::from_secs(60)).await;
            }
        });
        let _ = tokio::time::timeout(Duration::from_millis(50), fan).await;
        tokio::time::sleep(Duration::from_millis(50)).await;
        assert!(started.load(Ordering::SeqCst) <= 2, "{started:?}");
    }
}
