//! One group's transaction on a pooled connection, and what happens when it fails.
//!
//! The transaction is driven with plain statements (`BEGIN`, `SAVEPOINT`, `COMMIT`, sent
//! with the simple query protocol), not sqlx's `Transaction`: sqlx counts the nesting depth
//! itself and does not notice when the transaction ends otherwise (the lesson of the
//! SQLite adapter's first group commit, see docs/performance.md).
//!
//! On PostgreSQL an error inside a savepoint leaves the transaction usable again after
//! `ROLLBACK TO SAVEPOINT`: that change set fails alone with its own error. When that
//! rollback fails too (the connection was lost), or `COMMIT` fails, whether anything was
//! committed may be unknown: every change set of the group still waiting fails with
//! `Unavailable` (never reported as committed, never committed again here: a retry of a
//! transaction that did commit would apply it twice), and the connection is closed
//! instead of going back to the pool.

use posthorn_core::ports::{ChangeSet, StoreError};
use sqlx::pool::PoolConnection;
use sqlx::{PgPool, Postgres};

use crate::{commit, error};

/// A change set's outcome: committed, or why it was not.
pub(super) type Outcome = Result<(), StoreError>;

/// Commits `changes` in one transaction, in order, each in a savepoint when there are
/// several; the outcome of each, in the same order. Returns only after `COMMIT`.
pub(crate) async fn commit_all(pool: &PgPool, changes: &[&ChangeSet]) -> Vec<Outcome> {
    let mut conn = match pool.acquire().await {
        Ok(conn) => Conn { conn, open: false },
        Err(err) => return vec![Err(error::store(err)); changes.len()],
    };
    match attempt(&mut conn, changes).await {
        Ok(outcomes) => outcomes,
        Err(Abort { done, err }) => {
            let err = lost(&err);
            let mut outcomes = done;
            outcomes.resize(changes.len(), Err(err.clone()));
            // The ones that had succeeded inside the transaction were not committed.
            outcomes
                .into_iter()
                .map(|o| o.and(Err(err.clone())))
                .collect()
        }
    }
}

/// The error every member of a group gets when its transaction was lost.
fn lost(err: &StoreError) -> StoreError {
    StoreError::Unavailable(format!(
        "the group's transaction failed; the change set was not committed: {err}"
    ))
}

/// The transaction was lost: `done` are the outcomes of the change sets applied before it
/// (none of them committed), `err` why.
struct Abort {
    done: Vec<Outcome>,
    err: StoreError,
}

/// One transaction for `changes`.
async fn attempt(conn: &mut Conn, changes: &[&ChangeSet]) -> Result<Vec<Outcome>, Abort> {
    let mut outcomes: Vec<Outcome> = Vec::with_capacity(changes.len());
    if let Err(err) = conn.exec("BEGIN").await {
        return Err(Abort {
            done: outcomes,
            err,
        });
    }
    if let [single] = changes {
        // Alone: no savepoint, its own error, and the transaction rolled back.
        return match commit::apply_all(&mut conn.conn, single).await {
            Ok(()) => match conn.exec("COMMIT").await {
                Ok(()) => {
                    conn.open = false;
                    Ok(vec![Ok(())])
                }
                Err(err) => Err(Abort {
                    done: outcomes,
                    err,
                }),
            },
            Err(err) => {
                conn.rollback().await;
                Ok(vec![Err(err)])
            }
        };
    }
    for changes in changes {
        if let Err(err) = conn.exec("SAVEPOINT change_set").await {
            return Err(Abort {
                done: outcomes,
                err,
            });
        }
        match commit::apply_all(&mut conn.conn, changes).await {
            Ok(()) => {
                if let Err(err) = conn.exec("RELEASE change_set").await {
                    return Err(Abort {
                        done: outcomes,
                        err,
                    });
                }
                outcomes.push(Ok(()));
            }
            Err(own) => {
                // Fails when the connection is gone: then nothing of the group commits.
                if let Err(err) = conn
                    .exec("ROLLBACK TO change_set; RELEASE change_set")
                    .await
                {
                    outcomes.push(Err(own));
                    return Err(Abort {
                        done: outcomes,
                        err,
                    });
                }
                outcomes.push(Err(own));
            }
        }
    }
    match conn.exec("COMMIT").await {
        Ok(()) => {
            conn.open = false;
            Ok(outcomes)
        }
        Err(err) => Err(Abort {
            done: outcomes,
            err,
        }),
    }
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
    async fn rollback(&mut self) {
        if self.exec("ROLLBACK").await.is_ok() {
            self.open = false;
        }
    }
}
