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
//! connection (the queue is [`Batcher`]'s). The transaction itself is [`transaction`]'s.

mod transaction;

use std::sync::Arc;

use posthorn_core::ports::{ChangeSet, StoreError};
use sqlx::PgPool;

use crate::batcher::Batcher;

/// Most change sets committed in one transaction.
const MAX_GROUP: usize = 256;

/// Most groups committed at once (each holds a pooled connection while it commits).
const COMMITTERS: usize = 2;

/// The queue of change sets waiting to be committed.
pub(crate) struct Group {
    batcher: Batcher<ChangeSet, ()>,
}

impl Group {
    /// A group committer on `pool`.
    pub(crate) fn new(pool: PgPool) -> Self {
        let serve = Arc::new(move |changes: Vec<ChangeSet>| {
            let pool = pool.clone();
            Box::pin(async move {
                let refs: Vec<&ChangeSet> = changes.iter().collect();
                transaction::commit_all(&pool, &refs).await
            }) as _
        });
        Self {
            batcher: Batcher::new(MAX_GROUP, COMMITTERS, serve),
        }
    }

    /// Commits `changes` (all or nothing), possibly together with others. Answers only
    /// once the transaction holding `changes` committed (or with the error that kept
    /// `changes` from being committed).
    pub(crate) async fn commit(&self, changes: ChangeSet) -> Result<(), StoreError> {
        if changes.is_empty() {
            return Ok(());
        }
        self.batcher.call(changes).await
    }

    /// Transactions started so far.
    #[cfg(all(test, posthorn_pg_tests))]
    pub(crate) fn groups(&self) -> u64 {
        self.batcher.batches()
    }
}

#[cfg(all(test, posthorn_pg_tests))]
mod tests;
