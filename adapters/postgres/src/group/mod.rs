//! Group commit: change sets that arrive while the committers are busy are committed
//! together, in one transaction with one WAL flush.
//!
//! With durable commits (`synchronous_commit = on`) every transaction waits for its WAL
//! flush; committing the waiting change sets together divides that wait, and the round
//! trips of `BEGIN`/`COMMIT`, by their number. A guarded write that fails (`Conflict`) or
//! any other error fails its own change set alone; the others still commit (in a second
//! transaction, each change set in a savepoint; see [`transaction::commit_all`]). Nobody is
//! answered before the `COMMIT` that holds its writes returned. Change sets are applied in
//! arrival order, so a later one sees an earlier one's writes, as with one transaction
//! each.
//!
//! At most [`COMMITTERS`] committer tasks drain the queue at once, each on its own pooled
//! connection; they are spawned, so a caller that gives up (its request is cancelled)
//! abandons nobody else's change set. The transaction itself is [`transaction`]'s.

mod transaction;

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use posthorn_core::ports::{ChangeSet, StoreError};
use sqlx::PgPool;
use tokio::sync::oneshot;

/// Most change sets committed in one transaction.
const MAX_GROUP: usize = 256;

/// Most groups committed at once (each holds a pooled connection while it commits).
const COMMITTERS: usize = 2;

/// A change set waiting for a transaction, and where its outcome goes.
struct Pending {
    changes: ChangeSet,
    reply: oneshot::Sender<Result<(), StoreError>>,
}

/// The change sets waiting for a committer, and how many committer tasks run.
#[derive(Default)]
struct State {
    queue: Vec<Pending>,
    running: usize,
}

/// The queue of change sets waiting to be committed.
#[derive(Default)]
pub(crate) struct Group {
    state: Arc<Mutex<State>>,
    /// Transactions started (for tests: commits under load share transactions).
    groups: Arc<AtomicU64>,
}

fn lock(state: &Mutex<State>) -> MutexGuard<'_, State> {
    // The state stays consistent across a panic (a push or a drain), so a poisoned lock
    // is still usable.
    state.lock().unwrap_or_else(|p| p.into_inner())
}

impl Group {
    /// Commits `changes` (all or nothing), possibly together with others. Answers only
    /// once the transaction holding `changes` committed (or with the error that kept
    /// `changes` from being committed).
    pub(crate) async fn commit(&self, pool: &PgPool, changes: ChangeSet) -> Result<(), StoreError> {
        if changes.is_empty() {
            return Ok(());
        }
        let (reply, outcome) = oneshot::channel();
        let start = {
            let mut state = lock(&self.state);
            state.queue.push(Pending { changes, reply });
            let start = state.running < COMMITTERS;
            if start {
                state.running += 1;
            }
            start
        };
        if start {
            let mut committer = Committer {
                state: Arc::clone(&self.state),
                finished: false,
            };
            let pool = pool.clone();
            let groups = Arc::clone(&self.groups);
            tokio::spawn(async move { committer.run(&pool, &groups).await });
        }
        outcome.await.unwrap_or_else(|_| Err(abandoned()))
    }

    /// Transactions started so far.
    #[cfg(all(test, posthorn_pg_tests))]
    pub(crate) fn groups(&self) -> u64 {
        self.groups.load(Ordering::Relaxed)
    }
}

fn abandoned() -> StoreError {
    StoreError::Unavailable("the commit was abandoned (the store is closing)".to_string())
}

/// A task that commits the queue, group after group, until it is empty.
struct Committer {
    state: Arc<Mutex<State>>,
    /// Set when it stopped because the queue was empty (not by a panic or a shutdown).
    finished: bool,
}

impl Committer {
    async fn run(&mut self, pool: &PgPool, groups: &AtomicU64) {
        loop {
            let group: Vec<Pending> = {
                let mut state = lock(&self.state);
                let n = state.queue.len().min(MAX_GROUP);
                if n == 0 {
                    state.running -= 1;
                    self.finished = true;
                    return;
                }
                state.queue.drain(..n).collect()
            };
            // A caller that gave up before its group started is not committed at all.
            let group: Vec<Pending> = group.into_iter().filter(|p| !p.reply.is_closed()).collect();
            if group.is_empty() {
                continue;
            }
            groups.fetch_add(1, Ordering::Relaxed);
            let changes: Vec<&ChangeSet> = group.iter().map(|p| &p.changes).collect();
            let outcomes = transaction::commit_all(pool, &changes).await;
            for (pending, outcome) in group.into_iter().zip(outcomes) {
                // A caller that gave up meanwhile no longer listens.
                let _ = pending.reply.send(outcome);
            }
        }
    }
}

impl Drop for Committer {
    /// Also when the task ends without emptying the queue (a panic, the runtime shutting
    /// down): the next caller can start a new committer, and when none is left the change
    /// sets still queued are answered `Unavailable` (their senders are dropped) instead of
    /// waiting forever.
    fn drop(&mut self) {
        if !self.finished {
            let mut state = lock(&self.state);
            state.running -= 1;
            if state.running == 0 {
                state.queue.clear();
            }
        }
    }
}

#[cfg(all(test, posthorn_pg_tests))]
mod tests;
