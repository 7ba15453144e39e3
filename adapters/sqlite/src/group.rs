//! Group commit: change sets that arrive while the writer is busy are committed together, in
//! one transaction with one sync of the WAL, each in its own savepoint.
//!
//! Every commit waits for the one writer connection anyway; committing the waiting change
//! sets together divides the transaction's fixed cost (with `synchronous=FULL`, an fsync) by
//! their number. Each change set is applied in a savepoint, so a guarded write that fails
//! (`Conflict`) or any other error rolls back that change set alone, exactly as if it had
//! been committed on its own; the others still commit. Nobody is answered before the
//! transaction's `COMMIT` returned: when it fails, every change set of the group fails with
//! `Unavailable` (none of them was committed). Change sets are applied in arrival order, so
//! a later one sees an earlier one's writes, as with one transaction each.
//!
//! The group runs in a spawned task: a caller that gives up (its request is cancelled) does
//! not abandon the change sets of the others.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use posthorn_core::ports::{ChangeSet, StoreError};
use sqlx::{Connection, SqlitePool};
use tokio::sync::oneshot;

use crate::{commit, error};

/// Most change sets committed in one transaction.
const MAX_GROUP: usize = 256;

/// A change set waiting for a transaction, and where its outcome goes.
struct Pending {
    changes: ChangeSet,
    reply: oneshot::Sender<Result<bool, StoreError>>,
}

/// The queue of change sets waiting for the writer, and the turn to commit them.
#[derive(Default)]
pub(crate) struct Group {
    queue: Mutex<Vec<Pending>>,
    /// Held by the caller whose task commits the current group.
    turn: Arc<tokio::sync::Mutex<()>>,
    /// Groups started (for tests: commits under load share transactions).
    groups: AtomicU64,
}

impl Group {
    /// Commits `changes` (all or nothing), possibly together with others; says whether it
    /// enqueued jobs.
    pub(crate) async fn commit(
        &self,
        writer: &SqlitePool,
        changes: ChangeSet,
    ) -> Result<bool, StoreError> {
        if changes.is_empty() {
            return Ok(false);
        }
        let (reply, mut outcome) = oneshot::channel();
        self.queue
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(Pending { changes, reply });
        let turn = Arc::clone(&self.turn).lock_owned().await;
        // A group committed while this caller waited for its turn may have taken it.
        match outcome.try_recv() {
            Ok(result) => return result,
            Err(oneshot::error::TryRecvError::Closed) => return Err(abandoned()),
            Err(oneshot::error::TryRecvError::Empty) => {}
        }
        let group: Vec<Pending> = {
            let mut queue = self.queue.lock().unwrap_or_else(|p| p.into_inner());
            let n = queue.len().min(MAX_GROUP);
            queue.drain(..n).collect()
        };
        self.groups.fetch_add(1, Ordering::Relaxed);
        let writer = writer.clone();
        // The turn moves with the task: the next group starts once this one is answered.
        tokio::spawn(async move {
            run(&writer, group).await;
            drop(turn);
        });
        outcome.await.unwrap_or_else(|_| Err(abandoned()))
    }
}

fn abandoned() -> StoreError {
    StoreError::Unavailable("the commit was abandoned (the store is closing)".to_string())
}

/// Commits `group` in one transaction, each change set in a savepoint, and answers each.
async fn run(writer: &SqlitePool, group: Vec<Pending>) {
    // A caller that gave up before its group started is not committed at all.
    let group: Vec<Pending> = group.into_iter().filter(|p| !p.reply.is_closed()).collect();
    if group.is_empty() {
        return;
    }
    match apply_group(writer, &group).await {
        Ok(outcomes) => {
            for (pending, outcome) in group.into_iter().zip(outcomes) {
                // A caller that gave up meanwhile no longer listens.
                let _ = pending.reply.send(outcome);
            }
        }
        Err(err) => fail_all(group, &err),
    }
}

/// The outcome of each change set once the transaction committed, or the error that kept
/// the whole transaction from committing (then none of it is).
async fn apply_group(
    writer: &SqlitePool,
    group: &[Pending],
) -> Result<Vec<Result<bool, StoreError>>, StoreError> {
    let mut tx = writer
        .begin_with("BEGIN IMMEDIATE")
        .await
        .map_err(error::store)?;
    let mut outcomes = Vec::with_capacity(group.len());
    for pending in group {
        let mut savepoint = tx.begin().await.map_err(error::store)?;
        match commit::apply_all(&mut savepoint, &pending.changes).await {
            Ok(()) => {
                savepoint.commit().await.map_err(error::store)?;
                outcomes.push(Ok(commit::enqueues(&pending.changes)));
            }
            Err(err) => {
                savepoint.rollback().await.map_err(error::store)?;
                outcomes.push(Err(err));
            }
        }
    }
    tx.commit().await.map_err(error::store)?;
    Ok(outcomes)
}

/// Answers every change set of `group` with `err` (none of them was committed; dropping
/// the open transaction rolls it back).
fn fail_all(group: Vec<Pending>, err: &StoreError) {
    for pending in group {
        let _ = pending.reply.send(Err(err.clone()));
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::Ordering;

    use chrono::Utc;
    use posthorn_core::model::{Contact, EmailAddress};
    use posthorn_core::ports::{ChangeSet, Store, StoreError, Write};

    use crate::testing;

    fn insert(email: &str) -> ChangeSet {
        let email = EmailAddress::parse(email).expect("email");
        let contact = Contact::new("ws", email, true, Default::default(), false, Utc::now());
        let mut changes = ChangeSet::new();
        changes.push(Write::InsertContact(contact));
        changes
    }

    /// Concurrent change sets share transactions, and one that conflicts fails alone.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_conflict_fails_only_its_own_change_set_of_a_group() {
        let store = testing::temporary().await.expect("store");
        store
            .commit(insert("taken@example.org"))
            .await
            .expect("first");
        let mut tasks = Vec::new();
        for i in 0..200 {
            let store = store.clone();
            let email = if i % 10 == 0 {
                "taken@example.org".to_string()
            } else {
                format!("c{i}@example.org")
            };
            tasks.push(tokio::spawn(
                async move { store.commit(insert(&email)).await },
            ));
        }
        let mut conflicts = 0;
        for (i, task) in tasks.into_iter().enumerate() {
            match task.await.expect("task") {
                Ok(()) => assert!(i % 10 != 0, "change set {i} took a taken email"),
                Err(StoreError::Conflict(_)) => {
                    assert_eq!(i % 10, 0, "change set {i} failed with a conflict");
                    conflicts += 1;
                }
                Err(e) => panic!("change set {i}: {e}"),
            }
        }
        assert_eq!(conflicts, 20);
        for i in (0..200).filter(|i| i % 10 != 0) {
            let found = store
                .contact_by_email("ws", &format!("c{i}@example.org"))
                .await
                .expect("read");
            assert!(found.is_some(), "c{i} was answered Ok but not committed");
        }
        let groups = store.group.groups.load(Ordering::Relaxed);
        assert!(
            groups < 201,
            "{groups} transactions for 201 change sets: nothing was grouped"
        );
        store.close().await;
    }
}
