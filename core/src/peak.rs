//! How many things run at once, and the most that ever did: what tests of a bound measure.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};

/// Shared by the tasks it counts (a clone counts into the same figures).
#[derive(Debug, Clone, Default)]
pub(crate) struct Peak {
    now: Arc<AtomicUsize>,
    most: Arc<AtomicUsize>,
}

/// One running, counted until dropped.
pub(crate) struct Running(Arc<AtomicUsize>);

impl Peak {
    /// Counts one more running until the guard is dropped.
    pub fn enter(&self) -> Running {
        let now = self.now.fetch_add(1, SeqCst) + 1;
        self.most.fetch_max(now, SeqCst);
        Running(self.now.clone())
    }

    /// The most that ran at once.
    pub fn most(&self) -> usize {
        self.most.load(SeqCst)
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        self.0.fetch_sub(1, SeqCst);
    }
}
