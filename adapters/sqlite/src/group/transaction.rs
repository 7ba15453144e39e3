//! One group's transaction on the writer connection, and what happens when it fails.
//!
//! The transaction is driven with plain statements (`BEGIN IMMEDIATE`, `SAVEPOINT`,
//! `COMMIT`), not sqlx's `Transaction`: sqlx counts the nesting depth itself and does not
//! notice when SQLite rolls a whole transaction back on its own (it may on `SQLITE_FULL`,
//! `SQLITE_IOERR`, `SQLITE_NOMEM`, `SQLITE_BUSY`, and does on `RAISE(ROLLBACK)`). Then
//! `ROLLBACK TO` its savepoint fails, the depth stays above zero for good, and every later
//! `begin` on the connection fails: that is how the first version of group commit fell
//! into answering 503 to everything.
//!
//! A group goes without savepoints until one of its change sets fails ([`commit_all`]). A
//! group of plain inserts and updates of contacts and emails (what `/v1/track`, `/v1/send`
//! and a delivery write) goes as one query, `BEGIN IMMEDIATE` to `COMMIT` ([`in_one_trip`]).
//! Every failure ends with the connection provably outside a transaction
//! ([`Writer::reset`]) or closed; the change sets of a transaction that was lost are
//! committed again without the one that lost it; and when `COMMIT` itself fails, the
//! group's change sets are committed again one per transaction, so only the one that
//! cannot be committed fails.

use posthorn_core::ports::{ChangeSet, StoreError};
use sqlx::pool::PoolConnection;
use sqlx::{QueryBuilder, Sqlite, SqliteConnection, SqlitePool};

use super::Settlement;
use crate::batch::OneTrip;
use crate::{commit, error};

/// Most rows in a group of plain inserts whose statement stays prepared on the writer (see
/// [`in_one_trip`]): what `/v1/track` and `/v1/send` write with up to about 64 concurrent
/// requests.
const CACHED_ROWS: usize = 160;

/// A change set's outcome: whether it enqueued jobs, or why it was not committed.
pub(super) type Outcome = Result<bool, StoreError>;

/// Commits `changes` in as few transactions as their failures allow, in order; the
/// outcome of each, in the same order. Returns only after the commits.
///
/// The group is first applied in one pass without savepoints: change sets rarely fail, a
/// savepoint costs two statements (two trips to the writer's thread) per change set, and
/// in one pass the plain inserts of all the change sets (contacts, events, emails, jobs)
/// are written a few statements for the whole group. When that fails, the transaction is
/// rolled back and the group goes again, each change set in a savepoint, so a change set
/// that fails is rolled back alone.
pub(super) async fn commit_all(held: &mut Held, changes: &[&ChangeSet]) -> Vec<Outcome> {
    let mut writer = Writer { held, open: false };
    let mut outcomes: Vec<Option<Outcome>> = vec![None; changes.len()];
    // The change sets still to commit, by index.
    let mut left: Vec<usize> = (0..changes.len()).collect();
    let mut savepoints = false;
    while !left.is_empty() {
        let batch: Vec<&ChangeSet> = left.iter().map(|&i| changes[i]).collect();
        match attempt(&mut writer, &batch, savepoints).await {
            Ok(results) => {
                for (&i, result) in left.iter().zip(results) {
                    outcomes[i] = Some(result);
                }
                left.clear();
            }
            Err(Abort::Begin(err)) => {
                for &i in &left {
                    outcomes[i] = Some(Err(err.clone()));
                }
                left.clear();
            }
            Err(Abort::Unattributed(err)) => {
                savepoints = true;
                if !writer.reset().await {
                    fail(&mut outcomes, &left, &err);
                    left.clear();
                }
            }
            Err(Abort::Lost { at, err }) => {
                outcomes[left[at]] = Some(Err(err));
                left.remove(at);
                savepoints = true;
                if !writer.reset().await {
                    fail(&mut outcomes, &left, &writer_reset());
                    left.clear();
                }
                // Otherwise the others go again, in a new transaction.
            }
            Err(Abort::Commit { err, within }) => {
                let mut applied = Vec::new();
                for (&i, result) in left.iter().zip(within) {
                    match result {
                        Ok(_) => applied.push(i),
                        Err(own) => outcomes[i] = Some(Err(own)),
                    }
                }
                left.clear();
                if !writer.reset().await {
                    fail(&mut outcomes, &applied, &writer_reset());
                } else if applied.len() == 1 {
                    fail(&mut outcomes, &applied, &err);
                } else {
                    tracing::warn!(error = %err, change_sets = applied.len(),
                        "a group's COMMIT failed; committing its change sets one by one");
                    for i in applied {
                        outcomes[i] = Some(alone(&mut writer, changes[i]).await);
                    }
                }
            }
        }
    }
    outcomes
        .into_iter()
        .map(|o| o.unwrap_or_else(|| Err(writer_reset())))
        .collect()
}

/// Commits one change set in its own transaction.
async fn alone(writer: &mut Writer<'_>, changes: &ChangeSet) -> Outcome {
    match attempt(writer, &[changes], false).await {
        Ok(mut results) => results.pop().unwrap_or_else(|| Err(writer_reset())),
        Err(Abort::Begin(err)) => Err(err),
        Err(Abort::Lost { err, .. } | Abort::Unattributed(err) | Abort::Commit { err, .. }) => {
            writer.reset().await;
            Err(err)
        }
    }
}

fn fail(outcomes: &mut [Option<Outcome>], which: &[usize], err: &StoreError) {
    for &i in which {
        outcomes[i] = Some(Err(err.clone()));
    }
}

fn writer_reset() -> StoreError {
    StoreError::Unavailable(
        "the writer connection failed and was reset; the change set was not committed".to_string(),
    )
}

/// Why an attempt committed nothing.
enum Abort {
    /// `BEGIN` failed (the lock stayed taken past the busy timeout, I/O): nothing applied.
    Begin(StoreError),
    /// The change set at `at` failed with `err`, and with it the whole transaction (or its
    /// savepoint could not be undone): nothing was committed, the others can go again.
    Lost { at: usize, err: StoreError },
    /// Applying the group in one pass failed with this error, which may belong to any of
    /// its change sets: nothing was committed, they all go again, each in a savepoint.
    Unattributed(StoreError),
    /// `COMMIT` failed with `err`; `within` are the change sets' outcomes inside the
    /// transaction (the `Ok` ones were not committed).
    Commit {
        err: StoreError,
        within: Vec<Outcome>,
    },
}

/// One transaction for `changes`, each in a savepoint when `savepoints` and there are
/// several.
async fn attempt(
    writer: &mut Writer<'_>,
    changes: &[&ChangeSet],
    savepoints: bool,
) -> Result<Vec<Outcome>, Abort> {
    if !savepoints {
        if let Some(trip) = OneTrip::only(changes) {
            return in_one_trip(writer, &trip, changes).await;
        }
    }
    writer.begin().await.map_err(Abort::Begin)?;
    let outcomes = if savepoints && changes.len() > 1 {
        each_in_savepoint(writer, changes).await?
    } else {
        // One pass: the plain inserts of all the change sets are written together, so a
        // failure belongs to the group, unless it has one change set.
        match commit::apply_group(writer.conn(), changes).await {
            Ok(()) => changes.iter().map(|c| Ok(commit::enqueues(c))).collect(),
            Err(err) if changes.len() == 1 => return Err(Abort::Lost { at: 0, err }),
            Err(err) => return Err(Abort::Unattributed(err)),
        }
    };
    match writer.exec("COMMIT").await {
        Ok(()) => {
            writer.open = false;
            Ok(outcomes)
        }
        Err(err) => Err(Abort::Commit {
            err,
            within: outcomes,
        }),
    }
}

/// The whole transaction of a group of plain inserts and updates of contacts and emails
/// (what `/v1/track`, `/v1/send` and a delivery write; [`OneTrip`]) as one query:
/// `BEGIN IMMEDIATE`, the writes, `COMMIT`. Each statement sent on its own is a trip to the
/// writer's thread, which waits for a core when the machine is busy: four trips made a
/// group's transaction twice as long as its work, and a group of `/v1/track`s for existing
/// contacts, two trips per change set (its update, checked, then its event), ran at half
/// the rate of one for new contacts.
///
/// When it fails, which statement failed is not known (SQLite stops at the first error,
/// possibly inside the transaction): the caller rolls back and the group goes again the
/// long way, each change set in a savepoint, which tells whose it was. Since any failure
/// ends the transaction, the writes are `OR ROLLBACK`: SQLite then keeps no
/// statement journal (a copy of every page an insert changes, 4.5 % of the writer's time).
async fn in_one_trip(
    writer: &mut Writer<'_>,
    trip: &OneTrip<'_>,
    changes: &[&ChangeSet],
) -> Result<Vec<Outcome>, Abort> {
    let mut q = QueryBuilder::new("BEGIN IMMEDIATE; ");
    trip.push_statements(&mut q);
    q.push("COMMIT");
    writer.open = true;
    // The text depends only on the kinds of the group's updates, in order, and its row
    // counts per table, so the same few dozen come back over and over, and parsing one took
    // a tenth of the writer's time: small groups keep theirs prepared. Big ones (rarer, and
    // up to hundreds of KB each once prepared) are parsed each time.
    let cached = trip.rows() <= CACHED_ROWS;
    match q.build().persistent(cached).execute(writer.conn()).await {
        Ok(_) => {
            writer.open = false;
            Ok(changes.iter().map(|c| Ok(commit::enqueues(c))).collect())
        }
        Err(err) => Err(Abort::Unattributed(error::store(err))),
    }
}

/// Moves every row of `event_names_recent` into `event_names_filed` (migration 0011), in a
/// transaction of its own on the writer: a thousand or so names filed at once fill index
/// pages that one group at a time would each rewrite.
pub(crate) async fn file_event_names(writer: &SqlitePool) -> Result<(), StoreError> {
    file_event_names_on(&mut Held::acquire(writer).await?).await
}

/// [`file_event_names`] on the writer connection the committer holds.
pub(super) async fn file_event_names_on(held: &mut Held) -> Result<(), StoreError> {
    let mut writer = Writer { held, open: true };
    let filed = sqlx::query(
        "BEGIN IMMEDIATE; \
         INSERT OR IGNORE INTO event_names_filed (workspace_id, name, id) \
             SELECT workspace_id, name, id FROM event_names_recent; \
         DELETE FROM event_names_recent; \
         COMMIT",
    )
    .execute(writer.conn())
    .await;
    match filed {
        Ok(_) => {
            writer.open = false;
            Ok(())
        }
        Err(err) => {
            writer.reset().await;
            Err(error::store(err))
        }
    }
}

/// Settles the running job of each (id, lease token, settlement) of `jobs` whose lease is
/// still held, in one transaction of its own on the writer (one sync of the WAL for all of
/// them, where each was a transaction of its own); whether each was settled. On an error
/// none is (each job keeps its lease: it runs again and finds its work done).
pub(super) async fn settle_jobs(
    held: &mut Held,
    jobs: &[(&str, &str, &Settlement)],
) -> Result<Vec<bool>, StoreError> {
    let mut writer = Writer { held, open: false };
    writer.begin().await?;
    let mut settled = Vec::with_capacity(jobs.len());
    for &(id, lease_token, settlement) in jobs {
        let query = match settlement {
            Settlement::Complete => sqlx::query(
                "DELETE FROM jobs WHERE id = ?1 AND lease_token = ?2 AND state = 'running'",
            )
            .bind(id)
            .bind(lease_token),
            Settlement::Retry {
                run_at,
                failed,
                error,
            } => sqlx::query(
                "UPDATE jobs SET state = 'queued', run_at = ?3, attempts = attempts + ?4, \
                 last_error = ?5, claims = 0, lease_token = NULL, lease_until = NULL \
                 WHERE id = ?1 AND lease_token = ?2 AND state = 'running'",
            )
            .bind(id)
            .bind(lease_token)
            .bind(*run_at)
            .bind(i64::from(*failed))
            .bind(error.as_str()),
        };
        match query.execute(writer.conn()).await {
            Ok(done) => settled.push(done.rows_affected() > 0),
            Err(err) => {
                writer.reset().await;
                return Err(error::store(err));
            }
        }
    }
    if let Err(err) = writer.exec("COMMIT").await {
        writer.reset().await;
        return Err(err);
    }
    writer.open = false;
    Ok(settled)
}

/// Applies each change set in its own savepoint inside the open transaction; a change set
/// that fails is rolled back to its savepoint alone.
async fn each_in_savepoint(
    writer: &mut Writer<'_>,
    changes: &[&ChangeSet],
) -> Result<Vec<Outcome>, Abort> {
    let mut outcomes = Vec::with_capacity(changes.len());
    for (at, changes) in changes.iter().enumerate() {
        if let Err(err) = writer.exec("SAVEPOINT change_set").await {
            return Err(Abort::Lost { at, err });
        }
        match commit::apply_all(writer.conn(), changes).await {
            Ok(()) => {
                if let Err(err) = writer.exec("RELEASE change_set").await {
                    return Err(Abort::Lost { at, err });
                }
                outcomes.push(Ok(commit::enqueues(changes)));
            }
            Err(err) => {
                // Fails when the error took the whole transaction with it.
                let undone = writer.exec("ROLLBACK TO change_set").await.is_ok()
                    && writer.exec("RELEASE change_set").await.is_ok();
                if !undone {
                    return Err(Abort::Lost { at, err });
                }
                outcomes.push(Err(err));
            }
        }
    }
    Ok(outcomes)
}

/// The writer connection, held by the committer across the groups, settlements and filings
/// it makes in a row: giving it back to the pool after each group cost a ping of the
/// connection's thread (sqlx tests every connection it takes back) and a hand-off to a
/// spawned task, two more trips between threads while the writer sat idle.
pub(crate) struct Held {
    conn: PoolConnection<Sqlite>,
    /// Left possibly inside a transaction: it is closed when dropped, and not used again.
    poisoned: bool,
}

impl Held {
    /// Takes the writer connection from its pool (waiting for whoever has it).
    pub(crate) async fn acquire(writer: &SqlitePool) -> Result<Self, StoreError> {
        let conn = writer.acquire().await.map_err(error::store)?;
        Ok(Self {
            conn,
            poisoned: false,
        })
    }

    /// Whether the connection must be given up (a transaction on it could not be ended).
    pub(super) fn is_poisoned(&self) -> bool {
        self.poisoned
    }
}

/// The writer connection while a transaction may be open on it.
///
/// Dropped while `open` (a panic, a cancelled task, a reset that failed), the connection
/// is marked to be closed instead of going back to the pool, and the committer lets go of
/// it: closing rolls back, and the pool opens a new one, so no later commit or claim ever
/// runs inside a transaction left over.
struct Writer<'h> {
    held: &'h mut Held,
    /// Possibly inside a transaction.
    open: bool,
}

impl Drop for Writer<'_> {
    fn drop(&mut self) {
        if self.open {
            self.held.poisoned = true;
            self.held.conn.close_on_drop();
        }
    }
}

impl Writer<'_> {
    fn conn(&mut self) -> &mut SqliteConnection {
        &mut self.held.conn
    }

    async fn exec(&mut self, sql: &'static str) -> Result<(), StoreError> {
        sqlx::query(sql)
            .execute(self.conn())
            .await
            .map(|_| ())
            .map_err(error::store)
    }

    /// `BEGIN IMMEDIATE` (the write lock up front, so no statement has to upgrade a read
    /// lock, which is where SQLite answers `BUSY` without waiting). A connection found
    /// inside a transaction (which should never happen) has it rolled back first.
    async fn begin(&mut self) -> Result<(), StoreError> {
        self.open = true;
        let Err(err) = self.exec("BEGIN IMMEDIATE").await else {
            return Ok(());
        };
        if self.exec("ROLLBACK").await.is_ok() {
            tracing::error!("the writer connection was inside a transaction; rolled it back");
            if self.exec("BEGIN IMMEDIATE").await.is_ok() {
                return Ok(());
            }
        }
        self.reset().await;
        Err(err)
    }

    /// Rolls back whatever is open and checks that the connection is outside any
    /// transaction: a deferred `BEGIN` succeeds only there. `false` when it cannot be
    /// made so (the connection is then closed when dropped).
    async fn reset(&mut self) -> bool {
        let _ = self.exec("ROLLBACK").await;
        let clean = self.exec("BEGIN").await.is_ok() && self.exec("ROLLBACK").await.is_ok();
        if clean {
            self.open = false;
        } else {
            tracing::error!("the writer connection cannot leave its transaction; closing it");
        }
        clean
    }
}
