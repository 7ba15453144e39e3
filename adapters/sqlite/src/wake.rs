//! Wake-ups for idle workers. One process owns the file (the lock), so every commit that
//! enqueues work happens in this process and an in-process signal is enough.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use tokio::sync::Notify;

/// The signal raised after every commit that enqueued (or revived) a job, and the access
/// generation moved by commits that change workspaces or key sets (also in-process only:
/// no other process writes this file).
#[derive(Debug, Default)]
pub(crate) struct Wake {
    work: Notify,
    access: AtomicU64,
}

impl Wake {
    /// Wakes every waiting worker, and the next one to wait if none is waiting (so a
    /// commit landing between a worker's empty claim and its wait is not missed).
    pub(crate) fn notify(&self) {
        self.work.notify_waiters();
        self.work.notify_one();
    }

    /// Moves the access generation (see `Store::access_generation`).
    pub(crate) fn access_changed(&self) {
        self.access.fetch_add(1, Ordering::AcqRel);
    }

    /// The access generation.
    pub(crate) fn access_generation(&self) -> u64 {
        self.access.load(Ordering::Acquire)
    }

    /// Returns when work may be due or `timeout` passes.
    pub(crate) async fn wait(&self, timeout: Duration) {
        // Elapsing is the normal outcome of an idle wait, not an error.
        let _elapsed = tokio::time::timeout(timeout, self.work.notified()).await;
    }
}
