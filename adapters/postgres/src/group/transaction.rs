//! One group's transaction on a pooled connection, and what happens when it fails.
//!
//! The transaction is driven with plain statements (`BEGIN`, `SAVEPOINT`, `COMMIT`, sent
//! with the simple query protocol), not sqlx's `Transaction`: sqlx counts the nesting depth
//! itself and does not notice when the transaction ends otherwise (the lesson of the
//! SQLite adapter's first group commit, see docs/performance.md).
//!
//! A group is applied without savepoints first, and with them after a change set failed
//! (see [`commit_all`]). On PostgreSQL an error inside a savepoint leaves the transaction
//! usable again after `ROLLBACK TO SAVEPOINT`: that change set fails alone with its own
//! error. When a rollback fails too (the connection was lost), or `COMMIT` fails, whether
//! anything was committed may be unknown: every change set of the group still waiting fails with
//! `Unavailable` (never reported as committed, never committed again here: a retry of a
//! transaction that did commit would apply it twice), and the connection is closed
//! instead of going back to the pool.

use posthorn_core::ports::{ChangeSet, StoreError};
use sqlx::pool::PoolConnection;
use sqlx::{PgPool, Postgres};

use crate::{commit, error};

/// A change set's outcome: committed, or why it was not.
pub(super) type Outcome = Result<(), StoreError>;

/// Commits `changes` in one transaction, in order; the outcome of each, in the same order.
/// Returns only after `COMMIT`.
///
/// The group is first applied in one pass without savepoints: change sets rarely fail, a
/// savepoint costs two round trips per change set, and in one pass the plain inserts of all
/// the change sets (contacts, events, emails, jobs) are a few statements for the whole
/// group. When that fails, the transaction is rolled back and the group is applied again in
/// a new transaction, each change set in a savepoint, so a change set that fails is rolled
/// back alone (a group of one gets its error at once).
pub(crate) async fn commit_all(pool: &PgPool, changes: &[&ChangeSet]) -> Vec<Outcome> {
    let mut conn = match pool.acquire().await {
        Ok(conn) => Conn { conn, open: false },
        Err(err) => return vec![Err(error::store(err)); changes.len()],
    };
    let mut outcomes: Vec<Option<Outcome>> = vec![None; changes.len()];
    let mut left: Vec<usize> = (0..changes.len()).collect();
    let mut savepoints = false;
    while !left.is_empty() {
        let batch: Vec<&ChangeSet> = left.iter().map(|&i| changes[i]).collect();
        match attempt(&mut conn, &batch, savepoints).await {
            Ok(done) => {
                for (&i, outcome) in left.iter().zip(done) {
                    outcomes[i] = Some(outcome);
                }
                left.clear();
            }
            Err(Abort::Failed { own }) if left.len() == 1 => {
                outcomes[left[0]] = Some(Err(own));
                left.clear();
            }
            Err(Abort::Failed { .. }) => savepoints = true,
            Err(Abort::Lost { err }) => {
                // Nothing of the transaction was committed, and whether the connection
                // can go on is unknown: every change set still waiting fails.
                let err = lost(&err);
                for &i in &left {
                    outcomes[i] = Some(Err(err.clone()));
                }
                left.clear();
            }
        }
    }
    // Every change set left the loop with an outcome.
    outcomes
        .into_iter()
        .map(|o| o.unwrap_or_else(|| Err(lost(&StoreError::Unavailable("no outcome".into())))))
        .collect()
}

/// The error every member of a group gets when its transaction was lost.
fn lost(err: &StoreError) -> StoreError {
    StoreError::Unavailable(format!(
        "the group's transaction failed; the change set was not committed: {err}"
    ))
}

/// Why a transaction ended without committing.
enum Abort {
    /// Applying the group in one pass (without savepoints) failed with `own`, which may
    /// belong to any of its change sets; the transaction was rolled back, nothing of it
    /// committed.
    Failed { own: StoreError },
    /// The transaction was lost (a statement of its own, `ROLLBACK` or `COMMIT` failed):
    /// none of it committed, as far as anyone can tell.
    Lost { err: StoreError },
}

/// One transaction for `changes`: in one pass, or each in a savepoint when `savepoints`;
/// the outcome of each (with savepoints, a change set that failed is rolled back alone).
async fn attempt(
    conn: &mut Conn,
    changes: &[&ChangeSet],
    savepoints: bool,
) -> Result<Vec<Outcome>, Abort> {
    conn.exec("BEGIN")
        .await
        .map_err(|err| Abort::Lost { err })?;
    if let Err(own) = commit::lock_limited_workspaces(&mut conn.conn, changes).await {
        return match conn.rollback().await {
            Ok(()) => Err(Abort::Failed { own }),
            Err(err) => Err(Abort::Lost { err }),
        };
    }
    let outcomes = if savepoints {
        each_in_savepoint(conn, changes).await?
    } else {
        if let Err(own) = commit::apply_group(&mut conn.conn, changes).await {
            return match conn.rollback().await {
                Ok(()) => Err(Abort::Failed { own }),
                Err(err) => Err(Abort::Lost { err }),
            };
        }
        vec![Ok(()); changes.len()]
    };
    conn.exec("COMMIT")
        .await
        .map_err(|err| Abort::Lost { err })?;
    conn.open = false;
    Ok(outcomes)
}

/// Applies each change set in its own savepoint inside the open transaction; a change set
/// that fails is rolled back to its savepoint alone.
async fn each_in_savepoint(conn: &mut Conn, changes: &[&ChangeSet]) -> Result<Vec<Outcome>, Abort> {
    let mut outcomes: Vec<Outcome> = Vec::with_capacity(changes.len());
    for changes in changes {
        conn.exec("SAVEPOINT change_set")
            .await
            .map_err(|err| Abort::Lost { err })?;
        match commit::apply_all(&mut conn.conn, changes).await {
            Ok(()) => {
                conn.exec("RELEASE change_set")
                    .await
                    .map_err(|err| Abort::Lost { err })?;
                outcomes.push(Ok(()));
            }
            Err(own) => {
                // Fails when the connection is gone: then nothing of the group commits.
                conn.exec("ROLLBACK TO change_set; RELEASE change_set")
                    .await
                    .map_err(|err| Abort::Lost { err })?;
                outcomes.push(Err(own));
            }
        }
    }
    Ok(outcomes)
}

/// A pooled connection while a group holds it.
///
/// Dropped while `open` (a failure, a panic, a cancelled task), the connection is closed
/// instead of going back to the pool: closing ends the transaction on the server, and the
/// pool opens a new connection, so no later statement ever runs inside a transaction left
/// over.
struct Conn {
    conn: PoolConnection<Postgres>,
    /// Possibly inside a transaction.
    open: bool,
}

impl Drop for Conn {
    fn drop(&mut self) {
        if self.open {
            self.conn.close_on_drop();
        }
    }
}

impl Conn {
    async fn exec(&mut self, sql: &'static str) -> Result<(), StoreError> {
        self.open = true;
        sqlx::raw_sql(sql)
            .execute(&mut *self.conn)
            .await
            .map(|_| ())
            .map_err(error::store)
    }

    /// Ends the transaction; when even that fails the connection stays `open` and is
    /// closed when dropped.
    async fn rollback(&mut self) -> Result<(), StoreError> {
        self.exec("ROLLBACK").await?;
        self.open = false;
        Ok(())
    }
}
