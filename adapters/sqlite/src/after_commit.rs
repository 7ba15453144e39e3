//! What a commit leaves to do in the process once its change set's group has answered:
//! forget the kept facts it made stale, tell the key cache that access changed, wake the
//! workers. Done even when the caller stops waiting (a request's time limit, a client that
//! went away): its change set commits anyway once its group started, and a kept fact left
//! standing would stay wrong until the next such commit.

use std::sync::Arc;

use posthorn_core::ports::StoreError;

use crate::derived::{Derived, Stale};
use crate::group::Outcome;
use crate::wake::Wake;

/// The clean-up of one commit, run once its outcome is known.
pub(crate) struct AfterCommit {
    derived: Option<Arc<Derived>>,
    wake: Arc<Wake>,
    stale: Stale,
    changes_access: bool,
    /// Cleared by [`AfterCommit::wait`] once answered; still here on drop when the caller
    /// stopped waiting.
    outcome: Option<Outcome>,
}

impl AfterCommit {
    pub(crate) fn new(
        derived: Option<Arc<Derived>>,
        wake: Arc<Wake>,
        stale: Stale,
        changes_access: bool,
        outcome: Outcome,
    ) -> Self {
        Self {
            derived,
            wake,
            stale,
            changes_access,
            outcome: Some(outcome),
        }
    }

    /// Waits for the outcome, cleans up, and answers it.
    pub(crate) async fn wait(mut self) -> Result<bool, StoreError> {
        let Some(outcome) = self.outcome.as_mut() else {
            return Ok(false);
        };
        let committed = outcome.wait().await;
        self.outcome = None;
        self.clean_up(committed.as_ref().is_ok_and(|c| *c));
        committed
    }

    fn clean_up(&self, enqueued: bool) {
        // Also when the outcome is unknown (the commit may have happened).
        if let Some(derived) = &self.derived {
            derived.forget(&self.stale);
        }
        if self.changes_access {
            self.wake.access_changed();
        }
        if enqueued {
            self.wake.notify();
        }
    }
}

impl Drop for AfterCommit {
    fn drop(&mut self) {
        let Some(mut outcome) = self.outcome.take() else {
            return;
        };
        // The caller stopped waiting: clean up once the group answers, on the runtime the
        // commit was made on (none left means the process is ending; nothing to keep).
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let this = AfterCommit {
            derived: self.derived.take(),
            wake: Arc::clone(&self.wake),
            stale: std::mem::take(&mut self.stale),
            changes_access: self.changes_access,
            outcome: None,
        };
        runtime.spawn(async move {
            let committed = outcome.wait().await;
            this.clean_up(committed.as_ref().is_ok_and(|c| *c));
        });
    }
}
