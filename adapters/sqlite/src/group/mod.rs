//! Group commit: change sets that arrive while the writer is busy are committed together,
//! in one transaction with one sync of the WAL.
//!
//! Every commit waits for the one writer connection anyway; committing the waiting change
//! sets together divides the transaction's fixed cost (with `synchronous=FULL`, an fsync)
//! by their number. A guarded write that fails (`Conflict`) or any other error fails its
//! own change set alone, as if it had been committed on its own; the others still commit
//! (in a second transaction, each change set in a savepoint; see
//! [`transaction::commit_all`]). Nobody is answered before the
//! `COMMIT` that holds its writes returned. Change sets are applied in arrival order, so a
//! later one sees an earlier one's writes, as with one transaction each.
//!
//! Job settlements (completions, and jobs put back to run later) wait in the same queue:
//! after each group, the committer makes the settlements waiting in one transaction of
//! their own (one sync for all of them).
//!
//! One committer task at a time drains the queue ([`State::running`]); it is spawned, so a
//! caller that gives up (its request is cancelled) abandons nobody else's change set, and
//! never leaves the writer inside a transaction. The transaction itself is
//! [`transaction`]'s, which makes sure the writer is never handed back inside one.

mod transaction;

pub(crate) use transaction::file_event_names;
use transaction::{file_event_names_on, Held};

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use posthorn_core::ports::{ChangeSet, StoreError, Write};
use sqlx::SqlitePool;
use tokio::sync::oneshot;

/// Most change sets committed in one transaction.
const MAX_GROUP: usize = 256;

/// Groups the committer makes in a row on the writer connection before it gives it back to
/// the pool (and takes it again, after anyone waiting for it).
const HOLD_GROUPS: usize = 16;

/// Events committed between two filings of their names ([`file_event_names`]): about 130
/// pages for a filing of 1,024 events under 16 names, where each group of 27 `/v1/track`s
/// rewrote 36 pages of one index by name (docs/performance.md).
const FILE_EVERY: usize = 1024;

/// Where the outcome of a change set or a settlement goes.
type Reply = oneshot::Sender<Result<bool, StoreError>>;

/// A change set waiting for a transaction, and where its outcome goes.
struct Pending {
    changes: ChangeSet,
    reply: Reply,
}

/// What becomes of a leased job.
#[derive(Debug, Clone)]
pub(crate) enum Settlement {
    /// Done: deleted.
    Complete,
    /// Queued again to run at `run_at` (microseconds since the epoch), counting a failed
    /// attempt when `failed`, with `error` kept.
    Retry {
        run_at: i64,
        failed: bool,
        error: String,
    },
}

/// A job's settlement waiting for the writer, and where its outcome goes.
struct PendingSettlement {
    /// The job's id and the lease token it was claimed with.
    lease: (String, String),
    settlement: Settlement,
    reply: Reply,
}

/// The change sets and job settlements waiting for the writer, and whether a committer
/// task works them off.
#[derive(Default)]
struct State {
    queue: Vec<Pending>,
    settlements: Vec<PendingSettlement>,
    running: bool,
    /// Events committed since their names were last filed.
    unfiled: usize,
}

/// The queue of change sets and job settlements waiting for the writer.
#[derive(Default)]
pub(crate) struct Group {
    state: Arc<Mutex<State>>,
    /// Transactions started.
    counts: Arc<Counts>,
    /// Callers using the writer connection directly (a job claim), not through the queue:
    /// while any does, the committer gives the connection back after each group.
    direct: Arc<AtomicUsize>,
}

/// A direct use of the writer connection, counted while it lives (see [`Group::direct_use`]).
pub(crate) struct DirectUse(Arc<AtomicUsize>);

impl Drop for DirectUse {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}

fn lock(state: &Mutex<State>) -> MutexGuard<'_, State> {
    // The state stays consistent across a panic (a push or a drain), so a poisoned lock
    // is still usable.
    state.lock().unwrap_or_else(|p| p.into_inner())
}

impl Group {
    /// Queues `changes` to be committed (all or nothing), possibly together with others;
    /// `None` when there is nothing to commit. The [`Outcome`] answers only once the
    /// transaction holding `changes` committed, saying whether it enqueued jobs (or with
    /// the error that kept `changes` from being committed).
    pub(crate) fn submit(&self, writer: &SqlitePool, changes: ChangeSet) -> Option<Outcome> {
        if changes.is_empty() {
            return None;
        }
        let (reply, outcome) = oneshot::channel();
        self.enqueue(writer, |state| state.queue.push(Pending { changes, reply }));
        Some(Outcome(outcome))
    }

    /// Settles the running job `id` if `lease_token` still holds it; whether it did. The
    /// settlements waiting together are one transaction, after the group ahead of them.
    pub(crate) async fn settle(
        &self,
        writer: &SqlitePool,
        id: &str,
        lease_token: &str,
        settlement: Settlement,
    ) -> Result<bool, StoreError> {
        let (reply, outcome) = oneshot::channel();
        let lease = (id.to_owned(), lease_token.to_owned());
        self.enqueue(writer, |state| {
            state.settlements.push(PendingSettlement {
                lease,
                settlement,
                reply,
            })
        });
        outcome.await.unwrap_or_else(|_| Err(abandoned()))
    }

    /// Counts a use of the writer connection outside the queue until it is dropped, so the
    /// committer lets go of the connection instead of keeping it for its next groups.
    pub(crate) fn direct_use(&self) -> DirectUse {
        self.direct.fetch_add(1, Ordering::Relaxed);
        DirectUse(Arc::clone(&self.direct))
    }

    /// Queues work with `push` and starts the committer unless it is at work.
    fn enqueue(&self, writer: &SqlitePool, push: impl FnOnce(&mut State)) {
        let start = {
            let mut state = lock(&self.state);
            push(&mut state);
            !std::mem::replace(&mut state.running, true)
        };
        if start {
            let mut committer = Committer {
                state: Arc::clone(&self.state),
                direct: Arc::clone(&self.direct),
                finished: false,
            };
            let writer = writer.clone();
            let counts = Arc::clone(&self.counts);
            tokio::spawn(async move { committer.run(&writer, &counts).await });
        }
    }

    /// Transactions of change sets started so far.
    #[cfg(test)]
    pub(crate) fn groups(&self) -> u64 {
        self.counts.groups.load(Ordering::Relaxed)
    }

    /// Transactions of job settlements made so far.
    #[cfg(test)]
    pub(crate) fn settlement_batches(&self) -> u64 {
        self.counts.settlements.load(Ordering::Relaxed)
    }
}

/// What became of a submitted change set, once its group has committed or failed. Once
/// the group started, the change set commits whether or not anybody still waits for this.
pub(crate) struct Outcome(oneshot::Receiver<Result<bool, StoreError>>);

impl Outcome {
    /// Whether the change set committed (`Ok(true)`), or why not. Not to be awaited again
    /// once it answered.
    pub(crate) async fn wait(&mut self) -> Result<bool, StoreError> {
        (&mut self.0).await.unwrap_or_else(|_| Err(abandoned()))
    }
}

fn abandoned() -> StoreError {
    StoreError::Unavailable("the commit was abandoned (the store is closing)".to_string())
}

/// Transactions started so far, by kind (for tests: work under load shares transactions).
#[derive(Default)]
struct Counts {
    /// Of change sets.
    groups: AtomicU64,
    /// Of job settlements.
    settlements: AtomicU64,
}

/// The one task that commits the queue, group after group, until it is empty.
struct Committer {
    state: Arc<Mutex<State>>,
    /// Uses of the writer connection outside the queue ([`Group::direct_use`]).
    direct: Arc<AtomicUsize>,
    /// Set when it stopped because the queue was empty (not by a panic or a shutdown).
    finished: bool,
}

impl Committer {
    async fn run(&mut self, writer: &SqlitePool, counts: &Counts) {
        // The writer connection, kept from one group to the next (see `Held`), given back
        // every `HOLD_GROUPS` groups, and after each group while a job claim or another
        // direct use wants it, so that those are not kept waiting behind a steady stream
        // of groups.
        let mut held: Option<Held> = None;
        let mut held_for = 0;
        loop {
            let (group, settlements) = {
                let mut state = lock(&self.state);
                let n = state.queue.len().min(MAX_GROUP);
                if n == 0 && state.settlements.is_empty() {
                    state.running = false;
                    self.finished = true;
                    return;
                }
                let group: Vec<Pending> = state.queue.drain(..n).collect();
                (group, std::mem::take(&mut state.settlements))
            };
            let events = match take_writer(writer, &mut held).await {
                Ok(conn) => commit_group(conn, &counts.groups, group).await,
                Err(err) => {
                    fail(group.into_iter().map(|p| p.reply), &err);
                    0
                }
            };
            let_go_if_poisoned(&mut held);
            if !settlements.is_empty() {
                match take_writer(writer, &mut held).await {
                    Ok(conn) => {
                        counts.settlements.fetch_add(1, Ordering::Relaxed);
                        settle(conn, settlements).await;
                    }
                    Err(err) => fail(settlements.into_iter().map(|p| p.reply), &err),
                }
                let_go_if_poisoned(&mut held);
            }
            let file = {
                let mut state = lock(&self.state);
                state.unfiled += events;
                state.unfiled >= FILE_EVERY
            };
            if file {
                // Reads by name take the recent part as well, so a filing that fails
                // costs only speed: it is tried again after as many events, not after
                // every group.
                let filed = match take_writer(writer, &mut held).await {
                    Ok(conn) => file_event_names_on(conn).await,
                    Err(err) => Err(err),
                };
                if let Err(err) = filed {
                    tracing::warn!(error = %err, "filing event names failed");
                }
                let_go_if_poisoned(&mut held);
                lock(&self.state).unfiled = 0;
            }
            held_for += 1;
            if held_for >= HOLD_GROUPS || self.direct.load(Ordering::Relaxed) > 0 {
                held = None;
                held_for = 0;
            }
        }
    }
}

/// The writer connection the committer holds, taken from the pool if it holds none.
async fn take_writer<'h>(
    writer: &SqlitePool,
    held: &'h mut Option<Held>,
) -> Result<&'h mut Held, StoreError> {
    let conn = match held.take() {
        Some(conn) => conn,
        None => Held::acquire(writer).await?,
    };
    Ok(held.insert(conn))
}

/// Lets go of the writer connection when a transaction on it could not be ended (it is
/// closed, and the next group takes a new one).
fn let_go_if_poisoned(held: &mut Option<Held>) {
    if held.as_ref().is_some_and(Held::is_poisoned) {
        *held = None;
    }
}

/// Answers each of `replies` (change sets or settlements) with `err`.
fn fail(replies: impl IntoIterator<Item = Reply>, err: &StoreError) {
    for reply in replies {
        // A caller that gave up no longer listens.
        let _ = reply.send(Err(err.clone()));
    }
}

/// Commits `group` (but the change sets whose callers gave up) and answers each; how many
/// events it appended.
async fn commit_group(held: &mut Held, groups: &AtomicU64, group: Vec<Pending>) -> usize {
    // A caller that gave up before its group started is not committed at all.
    let group: Vec<Pending> = group.into_iter().filter(|p| !p.reply.is_closed()).collect();
    if group.is_empty() {
        return 0;
    }
    groups.fetch_add(1, Ordering::Relaxed);
    let changes: Vec<&ChangeSet> = group.iter().map(|p| &p.changes).collect();
    let events = changes.iter().map(|c| events_in(c)).sum::<usize>();
    let outcomes = transaction::commit_all(held, &changes).await;
    for (pending, outcome) in group.into_iter().zip(outcomes) {
        // A caller that gave up meanwhile no longer listens.
        let _ = pending.reply.send(outcome);
    }
    events
}

/// Makes `settlements` in one transaction and answers each.
async fn settle(held: &mut Held, settlements: Vec<PendingSettlement>) {
    let jobs: Vec<(&str, &str, &Settlement)> = settlements
        .iter()
        .map(|p| (p.lease.0.as_str(), p.lease.1.as_str(), &p.settlement))
        .collect();
    let outcome = transaction::settle_jobs(held, &jobs).await;
    match outcome {
        Ok(settled) => {
            for (pending, settled) in settlements.into_iter().zip(settled) {
                let _ = pending.reply.send(Ok(settled));
            }
        }
        Err(err) => fail(settlements.into_iter().map(|p| p.reply), &err),
    }
}

/// The events `changes` appends.
fn events_in(changes: &ChangeSet) -> usize {
    changes
        .writes
        .iter()
        .filter(|w| matches!(w, Write::AppendEvent(_)))
        .count()
}

impl Drop for Committer {
    /// Also when the task ends without emptying the queue (a panic, the runtime shutting
    /// down): the next caller starts a new committer, and the change sets and settlements
    /// left in the queue are answered `Unavailable` (their senders are dropped) instead of waiting
    /// forever.
    fn drop(&mut self) {
        if !self.finished {
            let mut state = lock(&self.state);
            state.running = false;
            state.queue.clear();
            state.settlements.clear();
        }
    }
}

#[cfg(test)]
mod filing_tests;
#[cfg(test)]
mod tests;
